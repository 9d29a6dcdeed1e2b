package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sigcheck/sigcheck/channel/replicate"
	"github.com/sigcheck/sigcheck/channel/replicate/jacobi"
)

func init() {
	commands = append(commands, &command{"redundancy", "protect|abort|taint",
		"replicate ranks against silent data corruption (RedMPI): correction, abort, and how corruption spreads", runRedundancy})
}

const redundancyHelp = `Reproduces the fault-injection study of RedMPI (Fiala et al., SC 2012, §VII) on a 2-D Jacobi
stencil (halo exchanges every step, a global residual by Allgather every -check steps), run
as -ranks virtual ranks of -r replicas each, all in this process:

  protect  faults in replica set 0 only (r = 3): every corrupt copy is voted out, and the
           answer is bit-identical to the fault-free run in every run (exit 1 otherwise)
  abort    faults anywhere, at twice protect's rate (as the paper doubled it): a run in which
           two replicas of one rank are corrupted ends with the no-majority error, the job
           aborted; none ends wrong. At 2 % every run aborts; -rate 3e-4 gives a few flips a
           run, and about one run in ten aborts, as in the paper's ten
  taint    r = 2 with correction off: one bit flipped in one rank of replica set 1 at one step,
           and how the corruption spreads from rank to rank, step by step (the paper's Figures
           10-16), as a table and with -png as a heatmap (ranks × steps)

The injector flips one random bit of the application's send buffer with probability -rate
per message: the application's memory, so the damage stays and spreads. Halos go from the
grid itself, so one flip makes every later halo of that replica corrupt (corrected ≥
injected); with -copy-halos each flip damages one message only (corrected = injected).
"mismatches" counts the receiver replicas that saw copies disagree (under MsgPlusHash, two
per corrupt copy: the one holding it and the one holding its hash); "corrected", the receives
whose own copy was corrupt and was replaced by the verified one.`

type redundancyRun struct {
	Run           int     `json:"run"`
	Seed          uint64  `json:"seed"`
	Injected      uint64  `json:"injected"`
	Mismatches    uint64  `json:"mismatches"`
	Corrected     uint64  `json:"corrected"`
	Uncorrectable uint64  `json:"uncorrectable"`
	DoubleHit     int     `json:"ranks_with_two_replicas_hit"`
	Identical     bool    `json:"identical"`
	Aborted       bool    `json:"aborted"`
	Error         string  `json:"error,omitempty"`
	Seconds       float64 `json:"seconds"`
}

func runRedundancy(e *env, args []string) error {
	fs := flags(e, "redundancy", redundancyHelp)
	ranks := fs.Int("ranks", 16, "virtual `ranks`")
	degree := fs.Int("r", 0, "replicas per rank (default 3 for protect and abort, 2 for taint)")
	grid := fs.Int("grid", 64, "grid `points` per side")
	steps := fs.Int("steps", 120, "time `steps`")
	check := fs.Int("check", 25, "global residual every `n` steps (0: none)")
	protocol := fs.String("protocol", "msgplushash", "`protocol`: msgplushash or alltoall")
	transport := fs.String("transport", "local", "`transport`: local or tcp (loopback)")
	runs := fs.Int("runs", 10, "runs of protect and abort")
	rate := fs.Float64("rate", 0, "probability of a flip per message (default 0.01 protect, 0.02 abort)")
	seed := fs.Uint64("seed", 1, "first injector `seed` (run i uses seed+i)")
	rank := fs.Int("rank", 2, "taint: the virtual `rank` hit")
	step := fs.Int("step", 30, "taint: the `step` it is hit at")
	copyHalos := fs.Bool("copy-halos", false, "send halos from copies: a flip damages one message, not the solution")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	pngPath := fs.String("png", "", "taint: write the heatmap to this PNG `file` (its name ends .png)")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	study := pos[0]
	switch study {
	case "protect", "abort", "taint":
	default:
		return usageErrorf("unknown study %q (protect, abort or taint)", study)
	}
	proto, err := replicate.ParseProtocol(*protocol)
	if err != nil {
		return usageErrorf("-protocol %s: want msgplushash or alltoall", *protocol)
	}
	if *transport != "local" && *transport != "tcp" {
		return usageErrorf("-transport %s: want local or tcp", *transport)
	}
	r := *degree
	if r == 0 {
		r = 3
		if study == "taint" {
			r = 2
		}
	}
	switch {
	case *ranks < 1 || *ranks > 256:
		return usageErrorf("-ranks %d: want 1 to 256", *ranks)
	case r < 1 || r > 8:
		return usageErrorf("-r %d: want 1 to 8", r)
	case *grid < *ranks || *grid > 4096:
		return usageErrorf("-grid %d: want from -ranks (%d) to 4096", *grid, *ranks)
	case *steps < 1 || *steps > 100000:
		return usageErrorf("-steps %d: want 1 to 100000", *steps)
	case *check < 0:
		return usageErrorf("-check %d: want 0 or more", *check)
	case *runs < 1 || *runs > 1000:
		return usageErrorf("-runs %d: want 1 to 1000", *runs)
	case *rate < 0 || *rate > 1:
		return usageErrorf("-rate %g: want a probability, 0 to 1", *rate)
	case study == "taint" && (*rank < 0 || *rank >= *ranks):
		return usageErrorf("-rank %d: want 0 to %d", *rank, *ranks-1)
	case study == "taint" && (*step < 0 || *step >= *steps):
		return usageErrorf("-step %d: want 0 to %d", *step, *steps-1)
	case study == "taint" && r < 2:
		return usageErrorf("-r %d: taint compares replica set 1 with the control set 0, so r ≥ 2", r)
	case study != "taint" && *pngPath != "":
		return usageErrorf("-png: only taint draws a heatmap")
	case *pngPath != "" && !strings.EqualFold(filepath.Ext(*pngPath), ".png"):
		// The heatmap is drawn pixel by pixel (redundancy_png.go): PNG
		// is the one format it has, so another name is refused before
		// the run rather than given PNG bytes.
		return usageErrorf("-png %s: the heatmap is PNG only: want a name ending .png", *pngPath)
	}
	cfg := jacobi.Config{N: *grid, Steps: *steps, Check: *check, CopyHalos: *copyHalos}
	setup := jacobi.Setup{Virtual: *ranks, Degree: r, Protocol: proto, Transport: *transport, Config: cfg}
	ctx := context.Background()
	plain, _, err := jacobi.RunPlain(ctx, *transport, *ranks, cfg)
	if err != nil {
		return fmt.Errorf("the fault-free run: %w", err)
	}
	head := fmt.Sprintf("%s: Jacobi %d×%d, %d steps (residual every %d), %d ranks × %d replicas (%s, %s)",
		study, *grid, *grid, *steps, *check, *ranks, r, proto, *transport)
	if study == "taint" {
		return taintStudy(e, ctx, setup, plain, head, *seed, *rank, *step, *asJSON, *pngPath)
	}
	p := *rate
	aim := replicate.Every
	if study == "protect" {
		aim = 0
		if p == 0 {
			p = 0.01
		}
	} else if p == 0 {
		p = 0.02
	}
	var rows []redundancyRun
	for i := range *runs {
		inj := replicate.Injector{Rate: p, Seed: *seed + uint64(i), Replica: aim, Rank: replicate.Every, Step: replicate.Every}
		s := setup
		s.Injector = &inj
		o, err := jacobi.RunReplicated(ctx, s)
		if err != nil {
			return err
		}
		row := redundancyRun{Run: i + 1, Seed: inj.Seed, Seconds: o.Elapsed.Seconds()}
		hit := map[int]map[int]bool{}
		for native, st := range o.Stats {
			row.Injected += st.Injected
			row.Mismatches += st.Mismatches
			row.Corrected += st.Corrected
			row.Uncorrectable += st.Uncorrectable
			if st.Injected > 0 {
				pl := o.Map.Place(native)
				if hit[pl.Virtual] == nil {
					hit[pl.Virtual] = map[int]bool{}
				}
				hit[pl.Virtual][pl.Replica] = true
			}
		}
		for _, h := range hit {
			if len(h) >= 2 {
				row.DoubleHit++
			}
		}
		if o.Err != nil {
			row.Aborted, row.Error = true, o.Err.Error()
		} else {
			row.Identical = o.Result.Hash == plain.Hash && o.Agree
		}
		rows = append(rows, row)
	}
	return printRuns(e, study, head, p, plain, rows, *asJSON)
}

func printRuns(e *env, study, head string, rate float64, plain jacobi.Result, rows []redundancyRun, asJSON bool) error {
	var wrong, aborted, doubleNotAborted int
	for _, r := range rows {
		if !r.Aborted && !r.Identical {
			wrong++
		}
		if r.Aborted {
			aborted++
		}
		if r.DoubleHit > 0 && !r.Aborted {
			doubleNotAborted++
		}
	}
	fail := wrong > 0 || (study == "protect" && aborted > 0)
	if asJSON {
		out := map[string]any{"study": study, "rate": rate, "fault_free_hash": fmt.Sprintf("%016x", plain.Hash),
			"fault_free_residual": plain.Residual, "runs": rows, "wrong": wrong, "aborted": aborted}
		b, _ := json.Marshal(out)
		fmt.Fprintln(e.stdout, string(b))
	} else {
		where := "in replica set 0 only"
		if study == "abort" {
			where = "in any replica"
		}
		fmt.Fprintf(e.stdout, "%s\nfaults %s, 1 bit per message with probability %g\nfault-free answer: residual %.6e, grid xxh3 %016x\n\n",
			head, where, rate, plain.Residual, plain.Hash)
		t := [][]string{{"run", "injected", "mismatches", "corrected", "uncorrectable", "2 replicas hit", "answer", "seconds"}}
		for _, r := range rows {
			answer := "identical"
			switch {
			case r.Aborted:
				answer = "aborted (see below)"
			case !r.Identical:
				answer = "WRONG"
			}
			t = append(t, []string{strconv.Itoa(r.Run), u64(r.Injected), u64(r.Mismatches), u64(r.Corrected), u64(r.Uncorrectable),
				strconv.Itoa(r.DoubleHit), answer, fmt.Sprintf("%.2f", r.Seconds)})
		}
		table(e.stdout, t, map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 7: true})
		for _, r := range rows {
			if r.Aborted {
				fmt.Fprintf(e.stdout, "run %d: %s\n", r.Run, r.Error)
			}
		}
		fmt.Fprintf(e.stdout, "\n%d runs: %d bit-identical, %d aborted (no majority), %d wrong", len(rows), len(rows)-aborted-wrong, aborted, wrong)
		if study == "abort" {
			fmt.Fprintf(e.stdout, "; %d ran on with two replicas of a rank hit", doubleNotAborted)
		}
		fmt.Fprintln(e.stdout)
	}
	if fail {
		return negativeError{}
	}
	return nil
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

type taintReport struct {
	Study    string     `json:"study"`
	Rank     int        `json:"rank"`
	Step     int        `json:"step"`
	Injected uint64     `json:"injected"`
	Steps    []taintRow `json:"steps"`
	Final    string     `json:"final_answer"`
	Taint    [][]string `json:"taint"` // [rank][step]: clean, indirect, direct
}

type taintRow struct {
	Step     int `json:"step"`
	Direct   int `json:"direct"`
	Indirect int `json:"indirect"`
	Bad      int `json:"corrupt_messages"`
	Senders  int `json:"ranks_sending_corrupt"`
}

func taintStudy(e *env, ctx context.Context, s jacobi.Setup, plain jacobi.Result, head string, seed uint64, rank, step int, asJSON bool, pngPath string) error {
	s.DetectOnly, s.Reference = true, 0
	s.Injector = &replicate.Injector{Rate: 1, Seed: seed, Replica: 1, Rank: rank, Step: step, Max: 1}
	o, err := jacobi.RunReplicated(ctx, s)
	if err != nil {
		return err
	}
	if o.Err != nil {
		return o.Err
	}
	tm, bad := replicate.TaintMap(o.Stats, o.Map, 1, s.Config.Steps)
	sent := replicate.SentMap(o.Stats, o.Map, 1, s.Config.Steps)
	rep := taintReport{Study: "taint", Rank: rank, Step: step}
	for _, st := range o.Stats {
		rep.Injected += st.Injected
	}
	for t := range s.Config.Steps {
		row := taintRow{Step: t, Bad: bad[t]}
		for v := range tm {
			if sent[v][t] {
				row.Senders++
			}
			switch tm[v][t] {
			case replicate.Direct:
				row.Direct++
			case replicate.Indirect:
				row.Indirect++
			}
		}
		rep.Steps = append(rep.Steps, row)
	}
	// The test set's answer against the fault-free one, and the control's.
	control, test := o.Hashes[0] == plain.Hash, o.Hashes[1] == plain.Hash
	rep.Final = fmt.Sprintf("the test set's answer is %s, the control set's %s", verdictWord(test), verdictWord(control))
	rep.Taint = make([][]string, len(tm))
	for v := range tm {
		for _, x := range tm[v] {
			rep.Taint[v] = append(rep.Taint[v], x.String())
		}
	}
	if pngPath != "" {
		// Drawn whole before the file is created: a heatmap that cannot
		// be drawn leaves no file.
		var b bytes.Buffer
		title := fmt.Sprintf("one bit flipped in rank %d at step %d: Jacobi %dx%d, %d ranks", rank, step, s.Config.N, s.Config.N, s.Virtual)
		if err := writeTaintPNG(&b, title, tm, bad); err != nil {
			return err
		}
		if err := os.WriteFile(pngPath, b.Bytes(), 0o666); err != nil {
			return err
		}
	}
	if asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintln(e.stdout, string(b))
		return nil
	}
	fmt.Fprintf(e.stdout, "%s\ncorrection off; one bit flipped in rank %d of replica set 1 at step %d (injected: %d)\n\n", head, rank, step, rep.Injected)
	t := [][]string{{"step", "direct", "indirect", "tainted", "corrupt msgs", "senders", "ranks (. clean, + indirect, X direct)"}}
	for i, row := range rep.Steps {
		prev := rep.Steps[max(i-1, 0)]
		unchanged := row.Direct == prev.Direct && row.Indirect == prev.Indirect && row.Bad == prev.Bad && row.Senders == prev.Senders
		if i < step-1 || (i > step+1 && i%10 != 0 && i != len(rep.Steps)-1 && unchanged) {
			continue
		}
		var line strings.Builder
		for v := range tm {
			line.WriteByte(".+X"[tm[v][i]])
		}
		t = append(t, []string{strconv.Itoa(row.Step), strconv.Itoa(row.Direct), strconv.Itoa(row.Indirect),
			fmt.Sprintf("%d/%d", row.Direct+row.Indirect, len(tm)), strconv.Itoa(row.Bad), strconv.Itoa(row.Senders), line.String()})
	}
	table(e.stdout, t, map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true})
	last := rep.Steps[len(rep.Steps)-1]
	fmt.Fprintf(e.stdout, "\nafter %d steps %d of %d ranks of the test set are tainted; %s\n", len(rep.Steps), last.Direct+last.Indirect, len(tm), rep.Final)
	if pngPath != "" {
		fmt.Fprintf(e.stderr, "wrote %s\n", pngPath)
	}
	return nil
}

func verdictWord(ok bool) string {
	if ok {
		return "bit-identical to the fault-free run"
	}
	return "WRONG (differs from the fault-free run)"
}
