package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/sigcheck/sigcheck/cmd/sigcheck/osu"
)

// TestMain lets the test binary stand in for sigcheck when sigcheck run
// starts processes of itself (os.Executable is the test binary here).
func TestMain(m *testing.M) {
	if os.Getenv("SIGCHECK_TEST_AS_MAIN") == "1" {
		os.Exit(runIO(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// runRows runs sigcheck run -json and decodes its rows, checking that
// every line is one object with the documented snake_case fields.
func runRows(t *testing.T, args ...string) []osu.Row {
	t.Helper()
	out, errOut, code := sigcheck(t, append([]string{"run", "-json"}, args...)...)
	if code != exitOK {
		t.Fatalf("sigcheck run %v: exit %d: %s", args, code, errOut)
	}
	var rows []osu.Row
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		for _, f := range []string{"op", "transport", "protect", "size", "value", "unit", "injected", "detected", "repaired", "mismatches"} {
			if _, ok := m[f]; !ok {
				t.Fatalf("%q: no field %q", sc.Text(), f)
			}
		}
		for f, v := range m {
			if f != strings.ToLower(f) || strings.Contains(f, "-") {
				t.Errorf("field %q is not snake_case", f)
			}
			// No float noise: at most three decimals.
			if x, ok := v.(float64); ok {
				if s := strconv.FormatFloat(x, 'f', -1, 64); strings.Contains(s, ".") && len(s)-strings.Index(s, ".")-1 > 3 {
					t.Errorf("%s = %s: more than three decimals", f, s)
				}
			}
		}
		var r osu.Row
		json.Unmarshal(sc.Bytes(), &r)
		if _, ok := m["p99"]; ok {
			var sp osu.Spread
			json.Unmarshal(sc.Bytes(), &sp)
			r.Spread = &sp
		}
		rows = append(rows, r)
	}
	return rows
}

func TestRunLocal(t *testing.T) {
	out, errOut, code := sigcheck(t, "run", "-protect", "none,checksum,merkle", "-sizes", "1,1K,70K", "-iters", "3", "-warmup", "1", "latency")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"# sigcheck run latency: 2 ranks, transport local", "\n# Size    ", "checksum", "× none", "mismatches", "\n71680     "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 3+3 {
		t.Errorf("%d lines, want 2 comments, a header and 3 sizes:\n%s", n, out)
	}

	rows := runRows(t, "-ranks", "3", "-protect", "checksum,merkle", "-inject", "0.05", "-sizes", "2K:8K", "-iters", "4", "-warmup", "1", "allgather")
	if len(rows) != 3*2 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	var injected uint64
	for _, r := range rows {
		if r.Op != "allgather" || r.Unit != "us" || r.Value <= 0 || r.Mismatches != 0 || r.Detected != r.Injected {
			t.Errorf("row %+v", r)
		}
		injected += r.Injected
	}
	if injected == 0 {
		t.Error("nothing injected")
	}

	out, _, code = sigcheck(t, "run", "-protect", "none,checksum", "-inject", "0.1", "-sizes", "4K", "-iters", "10", "bw")
	if code != exitOK || !strings.Contains(out, "checksum inj/det/rep/bad") || !strings.Contains(out, "one bit flipped in 0.1 of the frames") {
		t.Errorf("table under injection: exit %d\n%s", code, out)
	}

	out, _, code = sigcheck(t, "run", "-csv", "-sizes", "64", "-iters", "2", "bw")
	if code != exitOK || !strings.HasPrefix(out, "op,transport,protect,size,value,unit,iterations,injected,detected,repaired,mismatches\nbw,local,none,64,") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}

	svg := filepath.Join(t.TempDir(), "run.svg")
	if _, errOut, code := sigcheck(t, "run", "-plot", svg, "-protect", "none,merkle", "-sizes", "1K:4K", "-iters", "2", "bcast"); code != exitOK {
		t.Fatalf("plot: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "merkle") {
		t.Errorf("plot: %v, %.80q", err, b)
	}
}

// Unprotected, injected flips reach the receivers: the check sees them
// (and that is no failure of the tool: nothing promised otherwise).
func TestRunSeesUnprotectedDamage(t *testing.T) {
	rows := runRows(t, "-inject", "0.5", "-sizes", "1K", "-iters", "20", "-warmup", "1", "bw")
	if len(rows) != 1 || rows[0].Mismatches == 0 || rows[0].Detected != 0 {
		t.Errorf("rows %+v: want mismatches, nothing detected", rows)
	}
}

func TestRunTCP(t *testing.T) {
	t.Setenv("SIGCHECK_TEST_AS_MAIN", "1") // the ranks sigcheck starts are this binary
	rows := runRows(t, "-transport", "tcp", "-ranks", "3", "-protect", "none,merkle", "-inject", "0.02",
		"-sizes", "100,300K", "-iters", "5", "-warmup", "1", "bcast")
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	for _, r := range rows {
		if r.Transport != "tcp" || r.Value <= 0 || r.Protect == "merkle" && (r.Mismatches != 0 || r.Detected != r.Injected) {
			t.Errorf("row %+v", r)
		}
	}
}

// The ranks sigcheck starts get their share of the processors, said in
// the table's first line, unless GOMAXPROCS is set; rank 0 here gets its
// own back after.
func TestRunTCPProcs(t *testing.T) {
	t.Setenv("SIGCHECK_TEST_AS_MAIN", "1")
	t.Setenv("GOMAXPROCS", "") // as if unset
	n := runtime.GOMAXPROCS(0)
	for ranks, want := range map[int]int{1: n, 2: max(1, n/2), 4 * n: 1} {
		if got := procsEach(ranks); got != want {
			t.Errorf("procsEach(%d) = %d at GOMAXPROCS %d, want %d", ranks, got, n, want)
		}
	}
	before := runtime.GOMAXPROCS(0)
	out, errOut, code := sigcheck(t, "run", "-transport", "tcp", "-m", "1:1", "-iters", "3", "-warmup", "1", "latency")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if first, _, _ := strings.Cut(out, "\n"); !strings.HasSuffix(first, fmt.Sprintf(", GOMAXPROCS %d in each", max(1, n/2))) {
		t.Errorf("first line %q: want the ranks' GOMAXPROCS", first)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after the run, %d before", after, before)
	}

	t.Setenv("GOMAXPROCS", "1")
	if got := procsEach(2); got != 0 {
		t.Errorf("procsEach with GOMAXPROCS set: %d, want 0 (inherited)", got)
	}
	out, errOut, code = sigcheck(t, "run", "-transport", "tcp", "-m", "1:1", "-iters", "3", "-warmup", "1", "latency")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if first, _, _ := strings.Cut(out, "\n"); strings.Contains(first, "GOMAXPROCS") {
		t.Errorf("first line %q with GOMAXPROCS set: the ranks inherit it, nothing to say", first)
	}
}

func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"pingpong"}, `unknown benchmark "pingpong"`},
		{[]string{}, "want 1 argument"},
		{[]string{"-protect", "crc", "bw"}, `unknown protection "crc"`},
		{[]string{"-sizes", "8:4", "bw"}, "-sizes 8:4: the range is empty"},
		{[]string{"-sizes", "0", "bw"}, "want a positive number"},
		{[]string{"-transport", "udp", "bw"}, `-transport "udp"`},
		{[]string{"-ranks", "1", "latency"}, "latency runs between 2 ranks, not 1"},
		{[]string{"-ranks", "3", "bw"}, "bw runs between 2 ranks, not 3"},
		{[]string{"-transport", "tcp", "-ranks", "3", "latency"}, "latency runs between 2 ranks, not 3"},
		{[]string{"-m", "4K:1K", "bw"}, "sigcheck run: -m 4K:1K: the range is empty (sigcheck run -h for help)"},
		{[]string{"-m", "1K", "-sizes", "1K", "bw"}, "-sizes and -m both"},
		{[]string{"-json", "-csv", "bw"}, "-json and -csv"},
		{[]string{"-window", "8", "latency"}, "-window is bw's alone: latency has no window of sends"},
		{[]string{"-plot", "run.gif", "bw"}, "-plot run.gif: unknown image format"},
		{[]string{"-i"}, "-i needs a value"},
		{[]string{"-ranks", "0", "bcast"}, "want 1 to 1024"},
		{[]string{"-inject", "2", "bw"}, "want a fraction"},
	} {
		out, errOut, code := sigcheck(t, append([]string{"run"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.msg) || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("run %v: exit %d, %q; want %d and one line with %q (stdout %q)", tc.args, code, errOut, exitUsage, tc.msg, out)
		}
		if strings.Contains(errOut, "osu") || strings.Contains(errOut, "configuration") {
			t.Errorf("run %v: %q names the package", tc.args, errOut)
		}
	}
}

// OSU's options: -m [MIN:]MAX, -i and -x, and -f for the spread.
func TestRunOSUOptions(t *testing.T) {
	rows := runRows(t, "-m", "1K:4K", "-i", "5", "-x", "1", "-f", "latency")
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 1K, 2K, 4K", len(rows))
	}
	for i, r := range rows {
		if r.Size != 1024<<i || r.Iters != 5 || r.Spread == nil || !(r.Spread.Min > 0 && r.Spread.Min <= r.Spread.P99 && r.Spread.P99 <= r.Spread.Max) {
			t.Errorf("row %d: %+v %+v", i, r, r.Spread)
		}
	}
	if rows := runRows(t, "-m", "4", "-i", "2", "bw"); len(rows) != 3 || rows[2].Size != 4 || rows[0].Spread != nil {
		t.Errorf("-m 4: %+v", rows)
	}
	out, errOut, code := sigcheck(t, "run", "-f", "-protect", "none,checksum", "-m", "64:128", "-i", "3", "bcast")
	if code != exitOK || !strings.Contains(out, "p99") || !strings.Contains(out, "min, p50, p99, max") {
		t.Errorf("table with -f: exit %d %s\n%s", code, errOut, out)
	}
	out, _, code = sigcheck(t, "run", "-csv", "-f", "-m", "64:64", "-i", "3", "latency")
	if code != exitOK || !strings.HasPrefix(out, "op,transport,protect,size,value,unit,iterations,injected,detected,repaired,mismatches,min,p50,p90,p99,max\n") {
		t.Errorf("csv with -f: exit %d\n%s", code, out)
	}
}

// onFirstRow is a standard output that calls fn once, when the first row
// has been written (a JSON line, or a table line after the header).
type onFirstRow struct {
	buf   bytes.Buffer // not embedded: its WriteString would bypass Write
	lines int
	after int // lines before the first row
	fn    func()
	done  bool
}

func (w *onFirstRow) String() string { return w.buf.String() }

func (w *onFirstRow) Write(p []byte) (int, error) {
	n, err := w.buf.Write(p)
	w.lines += bytes.Count(p, []byte("\n"))
	if !w.done && w.lines > w.after {
		w.done = true
		w.fn()
	}
	return n, err
}

// Ctrl-C keeps every row measured so far, printed as it came; exit 130.
func TestRunInterrupted(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		after int
	}{
		{[]string{"-json", "-plot", filepath.Join(t.TempDir(), "cut.png")}, 0},
		{nil, 3}, // two comment lines and the header
	} {
		out := &onFirstRow{after: tc.after, fn: func() { syscall.Kill(os.Getpid(), syscall.SIGINT) }}
		var errOut bytes.Buffer
		args := append(append([]string{"run"}, tc.args...), "-protect", "none,checksum", "-m", "1:16M", "-i", "50", "latency")
		code := runIO(args, strings.NewReader(""), out, &errOut)
		total := 25 * 2
		if code != exitInterrupted || !strings.Contains(errOut.String(), "sigcheck run: interrupted: ") || !strings.Contains(errOut.String(), fmt.Sprintf(" of %d rows measured", total)) {
			t.Errorf("%v: exit %d, stderr %q\n%s", tc.args, code, errOut.String(), out)
		}
		lines := strings.Count(out.String(), "\n") - tc.after
		if lines < 1 || lines >= total {
			t.Errorf("%v: %d rows printed:\n%s", tc.args, lines, out.String())
		}
		if len(tc.args) > 1 { // the plot has the rows so far
			if b, err := os.ReadFile(tc.args[2]); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
				t.Errorf("%v: no plot after the interrupt: %v", tc.args, err)
			}
		}
	}
}

// A timeout keeps the rows too, and exits 1; so does a plot that cannot
// be written, whose error comes after the rows.
func TestRunStoppedKeepsRows(t *testing.T) {
	out, errOut, code := sigcheck(t, "run", "-timeout", "400ms", "-m", "1:64M", "-i", "20", "-x", "1", "-json", "latency")
	if code != exitNegative || !strings.Contains(errOut, "stopped by -timeout 400ms") || !strings.Contains(out, `"size":1,`) {
		t.Errorf("timeout: exit %d, %q\n%s", code, errOut, out)
	}
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "run.svg")
	out, errOut, code = sigcheck(t, "run", "-plot", bad, "-m", "1:4", "-i", "2", "latency")
	if code != exitNegative || !strings.Contains(errOut, "sigcheck run: -plot ") || strings.Count(out, "\n") != 3+3 {
		t.Errorf("bad plot path: exit %d, %q\n%s", code, errOut, out)
	}
}

// The plot: three panels (latency, bandwidth, overhead), in the format
// its name says.
func TestRunPlot(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"run.svg", "run.png", "run.pdf"} {
		path := filepath.Join(dir, name)
		if _, errOut, code := sigcheck(t, "run", "-plot", path, "-protect", "none,checksum,merkle", "-m", "1K:8K", "-i", "3", "bw"); code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch name {
		case "run.svg":
			for _, want := range []string{"<svg", "latency (µs)", "bandwidth (GB/s)", "overhead (% more time)", "merkle", "1 KiB"} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("svg lacks %q", want)
				}
			}
		case "run.png":
			if !bytes.HasPrefix(b, []byte("\x89PNG")) {
				t.Errorf("png starts %q", b[:8])
			}
		case "run.pdf":
			if !bytes.HasPrefix(b, []byte("%PDF")) {
				t.Errorf("pdf starts %q", b[:8])
			}
		}
	}
}

// A message delivered wrong under a protection: the table comes out
// whole, then one line on standard error says where, and the exit status
// is 1. A rank's error after some rows keeps them too.
func TestRunEndings(t *testing.T) {
	cfg := osu.Config{Op: osu.Latency, Protect: []string{"none", "checksum"}, Sizes: []int{8, 16}, Transport: "fake"}
	rows := func(emit func(osu.Row), n int, bad uint64) {
		for i := range n {
			r := osu.Row{Op: osu.Latency, Transport: "fake", Protect: cfg.Protect[i%2], Size: cfg.Sizes[i/2], Value: 1.5, Unit: "us", Iters: 3}
			if r.Protect == "checksum" && r.Size == 16 {
				r.Mismatches = bad
			}
			emit(r)
		}
	}
	for _, tc := range []struct {
		name      string
		start     func(ctx context.Context, cfg osu.Config, emit func(osu.Row)) error
		code      int
		lines     int // of standard output
		errSuffix string
	}{
		{"mismatch", func(_ context.Context, _ osu.Config, emit func(osu.Row)) error { rows(emit, 4, 2); return nil },
			exitNegative, 3 + 2, "under protection: checksum at 16 B: 2\n"},
		{"rank fails mid-size", func(_ context.Context, _ osu.Config, emit func(osu.Row)) error {
			rows(emit, 3, 0)
			return errors.New("channel: rank 1: connection reset")
		}, exitUsage, 3 + 2, "sigcheck run: rank 1: connection reset\n"},
	} {
		var out, errOut bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}
		err := measureJob(e, job{size: 2, prints: true, start: tc.start}, cfg, runOptions{format: "table"})
		code := exitOK
		if err != nil {
			switch { // as runIO ends a command
			case errors.As(err, new(negativeError)):
				code = exitNegative
			default:
				code = exitUsage
				fmt.Fprintf(&errOut, "sigcheck run: %s\n", plain(err.Error()))
			}
		}
		if code != tc.code || strings.Count(out.String(), "\n") != tc.lines || !strings.HasSuffix(errOut.String(), tc.errSuffix) {
			t.Errorf("%s: exit %d, stderr %q\n%s", tc.name, code, errOut.String(), out.String())
		}
		if tc.name == "rank fails mid-size" && !strings.Contains(out.String(), "\n16                1.50           -") {
			t.Errorf("%s: the partial size is not shown with '-' for what was not measured:\n%s", tc.name, out.String())
		}
	}
}
