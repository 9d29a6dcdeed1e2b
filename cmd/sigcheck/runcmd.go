package main

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/cmd/sigcheck/osu"
	"github.com/sigcheck/sigcheck/internal/plot"
	"github.com/sigcheck/sigcheck/internal/progress"
)

const runHelp = `Measures the channel layer as the OSU micro-benchmarks measure MPI:
  latency    ping-pong between ranks 0 and 1: one-way time (half the round trip), µs
  bw         windows of non-blocking sends from rank 0 to rank 1, acknowledged: MB/s (10^6 B/s)
  bcast      broadcast from rank 0, a barrier between iterations: µs, mean over the ranks
  allgather  every rank's block to every rank (size is per rank): µs, mean over the ranks
Each size is measured under every layer of -protect in turn, so the columns compare runs of
the same minute. Every message delivered is checked against the data its sender sent (outside
the timed part): "mismatches" counts those that differ, and must be 0 under a protection — the
exit status is 1 otherwise. With -inject, a fraction of the frames get a bit flipped on their
way out; the table then shows, per layer, frames injected/detected/repaired/mismatches.

With -transport tcp, sigcheck starts -ranks processes of itself on this machine (rank 0 is this
one), joined over loopback with a fresh job secret. A launcher can start the ranks instead:
every process then reads its rank and size from SIGCHECK_RANK/SIGCHECK_SIZE (or mpirun's
OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE), rank 0's address from SIGCHECK_ROOT and the job
secret from SIGCHECK_SECRET; rank 0 prints.`

func runRun(e *env, args []string) error {
	fs := flags(e, "run", runHelp)
	ranks := fs.Int("ranks", 2, "number of `ranks`")
	transport := fs.String("transport", "local", "`transport`: local (goroutines in this process) or tcp (processes over loopback)")
	protect := fs.String("protect", "none", "comma-separated `layers` to measure side by side: none, checksum, merkle")
	inject := fs.Float64("inject", 0, "flip one bit in this `fraction` of frames (1e-2: one in 100)")
	seed := fs.Uint64("seed", 1, "the injector's `seed`")
	sizes := fs.String("sizes", "", "message `sizes`: a list (8,4K,1M) or a doubling range MIN:MAX (default 1:64M)")
	iters := fs.Int("iters", 0, "timed `iterations` per size (default: OSU's, by size)")
	warmup := fs.Int("warmup", 0, "untimed `iterations` before them (default: OSU's, by size)")
	window := fs.Int("window", 0, "bw: messages in flight per `window` (default 64, fewer above 256 KiB)")
	timeout := fs.Duration("timeout", 0, "give up after this `duration` (default: no limit)")
	asJSON := fs.Bool("json", false, "print one JSON object per row: op, transport, protect, size, value, unit, iterations, injected, detected, repaired, mismatches")
	asCSV := fs.Bool("csv", false, "print CSV, one line per row, with the same fields")
	svg := fs.String("plot", "", "also write a chart of the values against size to this SVG `file`")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	cfg := osu.Config{Op: pos[0], Protect: strings.Split(*protect, ","), Iters: *iters, Warmup: *warmup,
		Window: *window, Transport: *transport}
	if !slices.Contains(osu.Ops(), cfg.Op) {
		return fmt.Errorf("unknown benchmark %q: want one of %s", cfg.Op, strings.Join(osu.Ops(), ", "))
	}
	if *sizes != "" {
		if cfg.Sizes, err = parseSizeRange(*sizes); err != nil {
			return err
		}
	}
	if *inject < 0 || *inject > 1 {
		return fmt.Errorf("-inject %g: want a fraction from 0 to 1", *inject)
	}
	var inj *channel.Injector
	if *inject > 0 {
		inj = &channel.Injector{Rate: *inject, Seed: *seed}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}

	var (
		rows []osu.Row
		bar  *progress.Bar
	)
	emit := func(r osu.Row) { rows = append(rows, r) }
	progressTo := func(p int) {
		if len(cfg.Sizes) == 0 {
			cfg.Sizes = osu.DefaultSizes(cfg.Op, p)
		}
		bar = progress.New(e.stderr, "run "+cfg.Op, int64(len(cfg.Sizes)*len(cfg.Protect)), "")
		cfg.Progress = func(int, int) { bar.Add(1) }
	}
	var p int
	switch *transport {
	case "local":
		p = *ranks
		if p < 1 || p > 1024 {
			return fmt.Errorf("-ranks %d: want 1 to 1024", p)
		}
		progressTo(p)
		err = runLocalRanks(ctx, p, cfg, inj, emit)
	case "tcp":
		if tc, envErr := channel.TCPConfigFromEnv(); envErr == nil {
			// One rank of a job that a launcher (or sigcheck) started.
			p = tc.Size
			if tc.Rank == 0 {
				progressTo(p)
			}
			tc.Injector = inj
			err = runTCPRank(ctx, tc, cfg, emit)
			if tc.Rank != 0 {
				return err
			}
		} else {
			p = *ranks
			if p < 1 || p > 256 {
				return fmt.Errorf("-ranks %d: want 1 to 256 processes", p)
			}
			progressTo(p)
			err = launchTCP(ctx, e, p, args, cfg, inj, emit)
		}
	default:
		return fmt.Errorf("-transport %q: want local or tcp", *transport)
	}
	bar.Done()
	if err != nil {
		return err
	}
	if *svg != "" {
		if err := plotRun(*svg, cfg, p, rows); err != nil {
			return err
		}
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(e.stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	case *asCSV:
		if err := writeRunCSV(e.stdout, rows); err != nil {
			return err
		}
	default:
		printRun(e.stdout, cfg, p, inj, rows)
	}
	var bad []string
	for _, r := range rows {
		if r.Protect != "none" && r.Mismatches > 0 {
			bad = append(bad, fmt.Sprintf("%s at %s: %d", r.Protect, sizeLabel(r.Size), r.Mismatches))
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(e.stderr, "sigcheck run: messages delivered that differ from what was sent, under protection: %s\n", strings.Join(bad, "; "))
		return negativeError{}
	}
	return nil
}

// parseSizeRange reads a list of sizes, or MIN:MAX for the powers of two
// between them (MIN rounded up to one).
func parseSizeRange(s string) ([]int, error) {
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		return parseSizes(s)
	}
	bounds, err := parseSizes(lo + "," + hi)
	if err != nil {
		return nil, err
	}
	if bounds[0] > bounds[1] {
		return nil, fmt.Errorf("sizes %q: the range is empty", s)
	}
	var out []int
	n := 1
	for n < bounds[0] {
		n *= 2
	}
	for ; n <= bounds[1]; n *= 2 {
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sizes %q: no power of two in the range", s)
	}
	return out, nil
}

// runLocalRanks runs cfg on p ranks in this process.
func runLocalRanks(ctx context.Context, p int, cfg osu.Config, inj *channel.Injector, emit func(osu.Row)) error {
	var opts []channel.TransportOption
	if inj != nil {
		opts = append(opts, channel.WithInjector(inj))
	}
	eps, err := channel.NewLocal(p, opts...)
	if err != nil {
		return err
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, p)
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			if errs[r] = osu.Run(ctx, ep, cfg, emit); errs[r] != nil {
				cancel() // the other ranks would wait for this one
			}
		})
	}
	wg.Wait()
	return firstCause(errs)
}

// firstCause picks the error that explains a failed run: the first that
// is not merely the cancellation it caused in the other ranks.
func firstCause(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// runTCPRank joins a TCP job as tc says and runs cfg in it.
func runTCPRank(ctx context.Context, tc channel.TCPConfig, cfg osu.Config, emit func(osu.Row)) error {
	// Ranks started by a launcher come up in any order; a minute is
	// plenty for all to join, and a missing one then is an error.
	join, cancel := context.WithTimeout(ctx, time.Minute)
	ep, err := channel.ConnectTCP(join, tc)
	cancel()
	if err != nil {
		return err
	}
	defer ep.Close()
	return osu.Run(ctx, ep, cfg, emit)
}

// launchTCP starts ranks 1 to p-1 as processes of this program, with the
// same arguments and the job in their environment, and runs rank 0 here.
func launchTCP(ctx context.Context, e *env, p int, args []string, cfg osu.Config, inj *channel.Injector, emit func(osu.Row)) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot start the other ranks: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	key := make([]byte, 32)
	rand.Read(key)
	secret := hex.EncodeToString(key)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		fails  []error
		stderr = &lockedWriter{w: e.stderr} // the ranks write their errors concurrently
	)
	for r := 1; r < p; r++ {
		cmd := exec.CommandContext(ctx, exe, append([]string{"run"}, args...)...)
		cmd.Env = append(os.Environ(),
			channel.EnvRank+"="+strconv.Itoa(r), channel.EnvSize+"="+strconv.Itoa(p),
			channel.EnvRoot+"="+ln.Addr().String(), channel.EnvSecret+"="+secret)
		cmd.Stdout = io.Discard
		cmd.Stderr = stderr
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			ln.Close()
			cancel()
			wg.Wait()
			return fmt.Errorf("starting rank %d: %w", r, err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil && ctx.Err() == nil {
				mu.Lock()
				fails = append(fails, fmt.Errorf("rank %d: %w", r, err))
				mu.Unlock()
			}
		})
	}
	err = runTCPRank(ctx, channel.TCPConfig{Rank: 0, Size: p, Listener: ln, Secret: []byte(secret), Injector: inj}, cfg, emit)
	if err != nil {
		cancel() // stop the others
	}
	wg.Wait()
	if err == nil && len(fails) > 0 {
		err = errors.Join(fails...)
	}
	return err
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// printRun writes the rows as OSU does: a header, then one line per size
// with a column per layer (and its ratio to the unprotected one).
func printRun(w io.Writer, cfg osu.Config, p int, inj *channel.Injector, rows []osu.Row) {
	unit := osu.Unit(cfg.Op)
	what := map[string]string{
		osu.Latency:   "one-way latency (half the round trip), mean of the timed iterations",
		osu.Bandwidth: "bandwidth, rank 0 to rank 1, MB = 10^6 bytes",
		osu.Bcast:     "broadcast from rank 0, mean over the ranks of each rank's mean time",
		osu.Allgather: "all-gather (size per rank), mean over the ranks of each rank's mean time",
	}[cfg.Op]
	fmt.Fprintf(w, "# sigcheck run %s: %d ranks, transport %s", cfg.Op, p, cfg.Transport)
	if inj != nil {
		fmt.Fprintf(w, ", one bit flipped in %g of the frames (seed %d)", inj.Rate, inj.Seed)
	}
	fmt.Fprintf(w, "\n# %s, in %s\n", what, unit)
	hasNone := slices.Contains(cfg.Protect, "none")
	head := []string{"size"}
	right := map[int]bool{0: true}
	for _, pr := range cfg.Protect {
		head = append(head, pr)
		if pr != "none" && hasNone {
			if cfg.Op == osu.Bandwidth {
				head = append(head, "% none")
			} else {
				head = append(head, "× none")
			}
		}
	}
	if inj != nil {
		for _, pr := range cfg.Protect {
			head = append(head, pr+" inj/det/rep/bad")
		}
	} else {
		head = append(head, "mismatches")
	}
	for i := range head {
		right[i] = true
	}
	out := [][]string{head}
	bySize := map[int]map[string]osu.Row{}
	var order []int
	for _, r := range rows {
		if bySize[r.Size] == nil {
			bySize[r.Size] = map[string]osu.Row{}
			order = append(order, r.Size)
		}
		bySize[r.Size][r.Protect] = r
	}
	for _, size := range order {
		m := bySize[size]
		line := []string{sizeLabel(size)}
		none, okNone := m["none"]
		var mismatches uint64
		for _, pr := range cfg.Protect {
			r := m[pr]
			line = append(line, strconv.FormatFloat(r.Value, 'f', 2, 64))
			if pr != "none" && hasNone {
				switch {
				case !okNone || none.Value == 0:
					line = append(line, "-")
				case cfg.Op == osu.Bandwidth:
					line = append(line, fmt.Sprintf("%.0f%%", 100*r.Value/none.Value))
				default:
					line = append(line, fmt.Sprintf("%.2f", r.Value/none.Value))
				}
			}
			mismatches += r.Mismatches
		}
		if inj != nil {
			for _, pr := range cfg.Protect {
				r := m[pr]
				line = append(line, fmt.Sprintf("%d/%d/%d/%d", r.Injected, r.Detected, r.Repaired, r.Mismatches))
			}
		} else {
			line = append(line, strconv.FormatUint(mismatches, 10))
		}
		out = append(out, line)
	}
	table(w, out, right)
}

func writeRunCSV(w io.Writer, rows []osu.Row) error {
	c := csv.NewWriter(w)
	c.Write([]string{"op", "transport", "protect", "size", "value", "unit", "iterations", "injected", "detected", "repaired", "mismatches"})
	for _, r := range rows {
		c.Write([]string{r.Op, r.Transport, r.Protect, strconv.Itoa(r.Size), strconv.FormatFloat(r.Value, 'f', 3, 64), r.Unit,
			strconv.Itoa(r.Iters), strconv.FormatUint(r.Injected, 10), strconv.FormatUint(r.Detected, 10),
			strconv.FormatUint(r.Repaired, 10), strconv.FormatUint(r.Mismatches, 10)})
	}
	c.Flush()
	return c.Error()
}

func plotRun(path string, cfg osu.Config, p int, rows []osu.Row) error {
	var series []plot.Series
	for _, pr := range cfg.Protect {
		s := plot.Series{Name: pr}
		for _, r := range rows {
			if r.Protect == pr {
				s.X = append(s.X, float64(r.Size))
				s.Y = append(s.Y, r.Value)
			}
		}
		series = append(series, s)
	}
	return writeSizeChart(path, fmt.Sprintf("sigcheck run %s, %d ranks, %s", cfg.Op, p, cfg.Transport), osu.Unit(cfg.Op), series)
}
