package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/tcp"
	"github.com/sigcheck/sigcheck/cmd/sigcheck/osu"
	"github.com/sigcheck/sigcheck/internal/plot"
	"github.com/sigcheck/sigcheck/internal/progress"
)

const runHelp = `Measures the channel layer as the OSU micro-benchmarks measure MPI:
  latency    ping-pong between 2 ranks: one-way time (half the round trip), µs
  bw         windows of non-blocking sends from rank 0 to rank 1, acknowledged: MB/s (10^6 B/s)
  bcast      broadcast from rank 0, a barrier between iterations: µs, mean over the ranks
  allgather  every rank's block to every rank (size is per rank): µs, mean over the ranks
Each size is measured under every layer of -protect in turn, so the columns compare runs of
the same minute. The table is laid out as OSU's (comment lines under '#', then the size in
bytes and a column per layer), so what reads OSU's output reads it; -plot draws latency,
bandwidth and each layer's overhead against size. Rows are printed as they are measured
(with -json, one JSON object a line);
Ctrl-C or -timeout stops the run and keeps what was measured (exit 130 for Ctrl-C, 1 for the
timeout).

Every message delivered is checked against the data its sender sent (outside the timed
part): "mismatches" counts those that differ, and must be 0 under a protection — the exit
status is 1 otherwise, after the table. With -inject, a fraction of the frames get a bit
flipped on their way out; the table then shows, per layer, inj/det/rep/bad:
  inj  frames the injector damaged;
  det  damaged parts the ranks caught: data chunks (checksum) or segments (merkle), and
       control frames (requests, verdicts), which are simply asked again;
  rep  data parts made right again, by a resend or from parity;
  bad  messages delivered that differ from what was sent.
det and rep differ because a damaged control frame is caught but has nothing to repair, a
repair damaged on its way is caught once more, and in a collective one damaged block can be
caught by every rank it reaches. Unprotected (none), nothing is caught: bad shows what got
through.

With -transport tcp, sigcheck starts -ranks processes of itself on this machine (rank 0 is this
one), joined over loopback with a fresh job secret, each with its share of the processors
(GOMAXPROCS: the processors over -ranks, at least 1, unless GOMAXPROCS is set, as mpirun's
binding gives each rank a core). A launcher can start the ranks instead:
every process then reads its rank and size from SIGCHECK_RANK/SIGCHECK_SIZE (or mpirun's
OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE), rank 0's address from SIGCHECK_ROOT and the job
secret from SIGCHECK_SECRET; rank 0 prints. Links within one host use Reno congestion control;
SIGCHECK_TCP_CC names another (system: the system's default).`

// runOptions are run's flags once read.
type runOptions struct {
	ranks     int
	transport string
	inj       *channel.Injector
	timeout   time.Duration
	format    string // "table", "json" or "csv"
	plot      string // the image to write, "" for none
}

func runRun(e *env, args []string) error {
	fs := flags(e, "run", runHelp)
	ranks := fs.Int("ranks", 2, "number of `ranks` (latency and bw: 2)")
	transport := fs.String("transport", "local", "`transport`: "+strings.Join(transportNames(), " or "))
	protect := fs.String("protect", "none", "comma-separated `layers` to measure side by side: none, checksum, merkle")
	inject := fs.Float64("inject", 0, "flip one bit in this `fraction` of frames (1e-2: one in 100)")
	seed := fs.Uint64("seed", 1, "the injector's `seed`")
	sizes := fs.String("sizes", "", "message `sizes`: a list (8,4K,1M) or a doubling range MIN:MAX")
	msg := fs.String("m", "", "message sizes as OSU's -m: `[MIN:]MAX`, doubling (default 1:64M)")
	var iters, warmup int
	fs.IntVar(&iters, "i", 0, "timed `iterations` per size (default: OSU's, by size)")
	fs.IntVar(&iters, "iters", 0, "the same as -i")
	fs.IntVar(&warmup, "x", 0, "untimed warm-up `iterations` before them (default: OSU's, by size)")
	fs.IntVar(&warmup, "warmup", 0, "the same as -x")
	full := fs.Bool("f", false, "full statistics per row: min, p50, p90, p99 and max of the iterations besides the mean")
	window := fs.Int("window", 0, "bw: messages in flight per `window` (default 64, fewer above 256 KiB)")
	timeout := fs.Duration("timeout", 0, "stop after this `duration`, keeping the rows measured (default: no limit)")
	asJSON := fs.Bool("json", false, "print one JSON object per row (snake_case): op, transport, protect, size, value, unit, iterations, injected, detected, repaired, mismatches (and with -f min, p50, p90, p99, max)")
	asCSV := fs.Bool("csv", false, "print CSV, one line per row, with the same fields")
	img := fs.String("plot", "", "also draw latency, bandwidth and overhead against size into this `file` (.svg, .png or .pdf)")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	cfg := osu.Config{Op: pos[0], Protect: strings.Split(*protect, ","), Iters: iters, Warmup: warmup,
		Window: *window, Transport: *transport, Full: *full}
	if !slices.Contains(osu.Ops(), cfg.Op) {
		return usageErrorf("unknown benchmark %q: want one of %s", cfg.Op, strings.Join(osu.Ops(), ", "))
	}
	switch {
	case *sizes != "" && *msg != "":
		return usageErrorf("-sizes and -m both say the sizes: give one")
	case *sizes != "":
		if cfg.Sizes, err = parseSizeRange(*sizes); err != nil {
			return usageErrorf("-sizes %s: %s", *sizes, err)
		}
	case *msg != "":
		if cfg.Sizes, err = parseOSUSizes(*msg); err != nil {
			return usageErrorf("-m %s: %s", *msg, err)
		}
	}
	if *window != 0 && cfg.Op != osu.Bandwidth {
		return usageErrorf("-window is bw's alone: %s has no window of sends", cfg.Op)
	}
	if *inject < 0 || *inject > 1 {
		return usageErrorf("-inject %g: want a fraction from 0 to 1", *inject)
	}
	if *asJSON && *asCSV {
		return usageErrorf("-json and -csv: give one")
	}
	o := runOptions{ranks: *ranks, transport: *transport, timeout: *timeout, format: "table", plot: *img}
	if *asJSON {
		o.format = "json"
	} else if *asCSV {
		o.format = "csv"
	}
	if *inject > 0 {
		o.inj = &channel.Injector{Rate: *inject, Seed: *seed}
	}
	if o.plot != "" {
		if _, err := plot.Format(o.plot); err != nil {
			return usageErrorf("-plot %s", err)
		}
	}
	return measure(e, args, cfg, o)
}

// transports are the ways run can start ranks, in one place: a new
// transport is a case in startRanks and a name here.
func transportNames() []string { return []string{"local", "tcp", "mpi"} }

// job is how this process takes part in a run: its ranks' count, whether
// it prints (rank 0), and start, which runs the benchmark on its ranks
// and calls emit with each row on rank 0.
type job struct {
	size   int
	prints bool
	procs  int // the GOMAXPROCS of each rank sigcheck starts (procsEach), 0 if it is not sigcheck's to set
	start  func(ctx context.Context, cfg osu.Config, emit func(osu.Row)) error
}

// startRanks says how this process runs its part of the job under the
// chosen transport (args are run's own, for the processes it starts).
func startRanks(e *env, args []string, o runOptions) (job, error) {
	switch o.transport {
	case "local":
		if o.ranks < 1 || o.ranks > 1024 {
			return job{}, usageErrorf("-ranks %d: want 1 to 1024", o.ranks)
		}
		return job{size: o.ranks, prints: true, start: func(ctx context.Context, cfg osu.Config, emit func(osu.Row)) error {
			return runLocalRanks(ctx, o.ranks, cfg, o.inj, emit)
		}}, nil
	case "tcp":
		if tc, envErr := tcp.ConfigFromEnv(); envErr == nil {
			// One rank of a job that a launcher (or sigcheck) started.
			tc.Injector = o.inj
			return job{size: tc.Size, prints: tc.Rank == 0, start: func(ctx context.Context, cfg osu.Config, emit func(osu.Row)) error {
				return runTCPRank(ctx, tc, cfg, emit)
			}}, nil
		}
		if o.ranks < 1 || o.ranks > 256 {
			return job{}, usageErrorf("-ranks %d: want 1 to 256 processes", o.ranks)
		}
		return job{size: o.ranks, prints: true, procs: procsEach(o.ranks), start: func(ctx context.Context, cfg osu.Config, emit func(osu.Row)) error {
			return launchTCP(ctx, e, o.ranks, args, cfg, o.inj, emit)
		}}, nil
	case "mpi":
		// One rank of the Open MPI job mpirun started: rank and size are
		// MPI_COMM_WORLD's (a build without the mpi tag says how to get one).
		join, cancel := context.WithTimeout(context.Background(), time.Minute)
		ep, done, err := openMPI(join, o.inj)
		cancel()
		if err != nil {
			return job{}, err
		}
		return job{size: ep.Size(), prints: ep.Rank() == 0, start: func(ctx context.Context, cfg osu.Config, emit func(osu.Row)) error {
			defer done()
			return osu.Run(ctx, ep, cfg, emit)
		}}, nil
	}
	return job{}, usageErrorf("-transport %q: want %s", o.transport, strings.Join(transportNames(), " or "))
}

// measure runs the job, printing each row as it comes, and says how it
// ended: Ctrl-C, the timeout, an error or a mismatch under protection
// all come after the rows measured so far are out (and in the plot).
func measure(e *env, args []string, cfg osu.Config, o runOptions) error {
	j, err := startRanks(e, args, o)
	if err != nil {
		return err
	}
	return measureJob(e, j, cfg, o)
}

// measureJob is measure once the ranks are known (tests give it a job
// of their own).
func measureJob(e *env, j job, cfg osu.Config, o runOptions) error {
	var err error
	if len(cfg.Protect) == 0 || len(cfg.Protect) == 1 && cfg.Protect[0] == "" {
		cfg.Protect = []string{"none"}
	}
	if len(cfg.Sizes) == 0 {
		cfg.Sizes = osu.DefaultSizes(cfg.Op, j.size)
	}
	if err := cfg.Check(j.size); err != nil {
		return usageErrorf("%s", err)
	}
	interrupt, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx := interrupt
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	if !j.prints {
		err := j.start(ctx, cfg, nil)
		if ctx.Err() != nil {
			return negativeError{} // rank 0 says what happened
		}
		return err
	}

	var out rowWriter
	switch o.format {
	case "json":
		out = &jsonRows{w: e.stdout, full: cfg.Full}
	case "csv":
		out = newCSVRows(e.stdout, cfg.Full)
	default:
		out = newTableRows(e.stdout, cfg, j.size, j.procs, o.inj)
	}
	bar := progress.New(e.stderr, "run "+cfg.Op, int64(len(cfg.Sizes)*len(cfg.Protect)), "")
	var (
		rows     []osu.Row
		writeErr error
	)
	emit := func(r osu.Row) {
		rows = append(rows, r)
		bar.Clear() // the row goes where the bar was
		if err := out.row(r); err != nil && writeErr == nil {
			writeErr = err
		}
		bar.Add(1)
	}
	err = j.start(ctx, cfg, emit)
	bar.Done()
	if err := out.end(); err != nil && writeErr == nil {
		writeErr = err
	}
	if o.plot != "" && len(rows) > 0 {
		if perr := plotRun(o.plot, cfg, j.size, rows); perr != nil {
			fmt.Fprintf(e.stderr, "sigcheck run: -plot %s\n", plain(perr.Error()))
			if err == nil {
				err = negativeError{}
			}
		}
	}
	switch {
	case interrupt.Err() != nil:
		return &interruptedError{measured(len(rows), len(cfg.Sizes)*len(cfg.Protect))}
	case ctx.Err() != nil:
		fmt.Fprintf(e.stderr, "sigcheck run: stopped by -timeout %v: %s\n", o.timeout, measured(len(rows), len(cfg.Sizes)*len(cfg.Protect)))
		return negativeError{}
	case err != nil:
		return err
	case writeErr != nil:
		return writeErr
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

// measured says how many of the rows were measured: "3 of 54 rows
// measured", "0 of 1 row measured".
func measured(done, total int) string {
	return fmt.Sprintf("%d of %d row%s measured", done, total, plural(total))
}

// parseOSUSizes reads OSU's -m: MAX, MIN:MAX or MIN: (up to 64 MiB), for
// the powers of two between MIN (default 1) and MAX.
func parseOSUSizes(s string) ([]int, error) {
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		lo, hi = "1", s
	}
	if lo == "" {
		lo = "1"
	}
	if hi == "" {
		hi = "64M"
	}
	return parseSizeRange(lo + ":" + hi)
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
		return nil, errors.New("the range is empty")
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
		return nil, errors.New("no power of two in the range")
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
func runTCPRank(ctx context.Context, tc tcp.Config, cfg osu.Config, emit func(osu.Row)) error {
	// Ranks started by a launcher come up in any order; a minute is
	// plenty for all to join, and a missing one then is an error.
	join, cancel := context.WithTimeout(ctx, time.Minute)
	ep, err := tcp.Connect(join, tc)
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
	env := func(r int) []string {
		return []string{tcp.EnvRank + "=" + strconv.Itoa(r), tcp.EnvSize + "=" + strconv.Itoa(p)}
	}
	auth, err := tcp.ParseAuth(os.Getenv(tcp.EnvAuth))
	if err != nil {
		return fmt.Errorf("%s: %w", tcp.EnvAuth, err)
	}
	return launchLoopback(ctx, e, "rank", p, append([]string{"run"}, args...), env, func(ctx context.Context, ln net.Listener, secret string) error {
		return runTCPRank(ctx, tcp.Config{Rank: 0, Size: p, Listener: ln, Secret: []byte(secret), Injector: inj, Congestion: os.Getenv(tcp.EnvCongestion), Auth: auth}, cfg, emit)
	})
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

// rowWriter prints rows as they come; end finishes the output (a table's
// last, partial line when the run was stopped mid-size).
type rowWriter interface {
	row(osu.Row) error
	end() error
}

// num is a measured value in JSON: rounded to a thousandth of its unit
// (a nanosecond, a kB/s), so no float noise (23.909777777777776) comes out.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	v := math.Round(float64(n)*1000) / 1000
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'f', -1, 64), nil
}

// jsonRow is a row as run -json prints it: snake_case, one object a line.
type jsonRow struct {
	Op         string `json:"op"`
	Transport  string `json:"transport"`
	Protect    string `json:"protect"`
	Size       int    `json:"size"`
	Value      num    `json:"value"`
	Unit       string `json:"unit"`
	Iterations int    `json:"iterations"`
	Injected   uint64 `json:"injected"`
	Detected   uint64 `json:"detected"`
	Repaired   uint64 `json:"repaired"`
	Mismatches uint64 `json:"mismatches"`
	Min        *num   `json:"min,omitempty"`
	P50        *num   `json:"p50,omitempty"`
	P90        *num   `json:"p90,omitempty"`
	P99        *num   `json:"p99,omitempty"`
	Max        *num   `json:"max,omitempty"`
}

type jsonRows struct {
	w    io.Writer
	full bool
}

func (j *jsonRows) row(r osu.Row) error {
	out := jsonRow{Op: r.Op, Transport: r.Transport, Protect: r.Protect, Size: r.Size, Value: num(r.Value), Unit: r.Unit,
		Iterations: r.Iters, Injected: r.Injected, Detected: r.Detected, Repaired: r.Repaired, Mismatches: r.Mismatches}
	if sp := r.Spread; sp != nil {
		p := func(v float64) *num { n := num(v); return &n }
		out.Min, out.P50, out.P90, out.P99, out.Max = p(sp.Min), p(sp.P50), p(sp.P90), p(sp.P99), p(sp.Max)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = j.w.Write(append(b, '\n'))
	return err
}

func (j *jsonRows) end() error { return nil }

type csvRows struct {
	c    *csv.Writer
	full bool
}

func newCSVRows(w io.Writer, full bool) *csvRows {
	c := csv.NewWriter(w)
	head := []string{"op", "transport", "protect", "size", "value", "unit", "iterations", "injected", "detected", "repaired", "mismatches"}
	if full {
		head = append(head, "min", "p50", "p90", "p99", "max")
	}
	c.Write(head)
	return &csvRows{c: c, full: full}
}

func (c *csvRows) row(r osu.Row) error {
	line := []string{r.Op, r.Transport, r.Protect, strconv.Itoa(r.Size), formatNum(r.Value), r.Unit,
		strconv.Itoa(r.Iters), strconv.FormatUint(r.Injected, 10), strconv.FormatUint(r.Detected, 10),
		strconv.FormatUint(r.Repaired, 10), strconv.FormatUint(r.Mismatches, 10)}
	if c.full {
		if sp := r.Spread; sp != nil {
			line = append(line, formatNum(sp.Min), formatNum(sp.P50), formatNum(sp.P90), formatNum(sp.P99), formatNum(sp.Max))
		} else {
			line = append(line, "", "", "", "", "")
		}
	}
	c.c.Write(line)
	c.c.Flush()
	return c.c.Error()
}

func (c *csvRows) end() error { return nil }

// formatNum writes a value as JSON does (num).
func formatNum(v float64) string {
	b, _ := num(v).MarshalJSON()
	return string(b)
}

// tableRows prints the rows as OSU does: comment lines, a header, then one
// line per size with a column per layer (and its ratio to the unprotected
// one). Columns have fixed widths, so each line can go out as soon as its
// size has been measured under every layer.
type tableRows struct {
	w       io.Writer
	cfg     osu.Config
	inj     bool
	hasNone bool
	widths  []int
	cur     map[string]osu.Row
	curSize int
}

func newTableRows(w io.Writer, cfg osu.Config, p, procs int, inj *channel.Injector) *tableRows {
	t := &tableRows{w: w, cfg: cfg, inj: inj != nil, hasNone: slices.Contains(cfg.Protect, "none")}
	what := map[string]string{
		osu.Latency:   "one-way latency (half the round trip), mean of the timed iterations",
		osu.Bandwidth: "bandwidth, rank 0 to rank 1, MB = 10^6 bytes",
		osu.Bcast:     "broadcast from rank 0, mean over the ranks of each rank's mean time",
		osu.Allgather: "all-gather (size per rank), mean over the ranks of each rank's mean time",
	}[cfg.Op]
	fmt.Fprintf(w, "# sigcheck run %s: %d ranks, transport %s", cfg.Op, p, cfg.Transport)
	if procs > 0 {
		fmt.Fprintf(w, ", GOMAXPROCS %d in each", procs)
	}
	if inj != nil {
		fmt.Fprintf(w, ", one bit flipped in %g of the frames (seed %d)", inj.Rate, inj.Seed)
	}
	unit := osu.Unit(cfg.Op)
	if unit == "us" {
		unit = "µs"
	}
	fmt.Fprintf(w, "\n# %s, in %s\n", what, unit)
	if cfg.Full {
		fmt.Fprintf(w, "# min, p50, p99, max: of the timed iterations (%s)\n", map[bool]string{true: "rank 0's windows", false: "pooled over the ranks"}[cfg.Op == osu.Bandwidth])
	}
	if t.inj {
		fmt.Fprintln(w, "# inj/det/rep/bad: frames damaged / damaged parts caught / parts made right / messages delivered wrong;")
		fmt.Fprintln(w, "# det and rep differ: damaged control frames are caught and asked again, not repaired (sigcheck run -h)")
	}
	// As OSU prints: the header a comment ("# Size"), then the size in
	// bytes, left-aligned, so that a script (or gnuplot) that reads OSU's
	// output reads this too.
	head := []string{"# Size"}
	t.widths = []int{10}
	col := func(h string, min int) {
		head = append(head, h)
		t.widths = append(t.widths, max(min, utf8.RuneCountInString(h)))
	}
	for _, pr := range cfg.Protect {
		col(pr, 10)
		if pr != "none" && t.hasNone {
			if cfg.Op == osu.Bandwidth {
				col("% none", 7)
			} else {
				col("× none", 7)
			}
		}
		if cfg.Full {
			for _, s := range []string{"min", "p50", "p99", "max"} {
				col(s, 9)
			}
		}
	}
	if t.inj {
		for _, pr := range cfg.Protect {
			col(pr+" inj/det/rep/bad", 15)
		}
	} else {
		col("mismatches", 10)
	}
	t.line(head)
	return t
}

func (t *tableRows) line(cells []string) {
	var b strings.Builder
	for i, c := range cells {
		pad := strings.Repeat(" ", max(0, t.widths[i]-utf8.RuneCountInString(c)))
		if i == 0 {
			b.WriteString(c + pad)
			continue
		}
		b.WriteString("  " + pad + c)
	}
	b.WriteByte('\n')
	io.WriteString(t.w, b.String())
}

func (t *tableRows) row(r osu.Row) error {
	if t.cur != nil && r.Size != t.curSize {
		t.flush()
	}
	if t.cur == nil {
		t.cur, t.curSize = map[string]osu.Row{}, r.Size
	}
	t.cur[r.Protect] = r
	if len(t.cur) == len(t.cfg.Protect) {
		t.flush()
	}
	return nil
}

func (t *tableRows) end() error {
	if t.cur != nil {
		t.flush()
	}
	return nil
}

// flush prints the current size's line; a layer not measured (the run
// was stopped) shows "-".
func (t *tableRows) flush() {
	m := t.cur
	line := []string{strconv.Itoa(t.curSize)}
	none, okNone := m["none"]
	var mismatches uint64
	for _, pr := range t.cfg.Protect {
		r, ok := m[pr]
		cell := func(v float64) string {
			if !ok {
				return "-"
			}
			return strconv.FormatFloat(v, 'f', 2, 64)
		}
		line = append(line, cell(r.Value))
		if pr != "none" && t.hasNone {
			switch {
			case !ok || !okNone || none.Value == 0:
				line = append(line, "-")
			case t.cfg.Op == osu.Bandwidth:
				line = append(line, fmt.Sprintf("%.0f%%", 100*r.Value/none.Value))
			default:
				line = append(line, fmt.Sprintf("%.2f", r.Value/none.Value))
			}
		}
		if t.cfg.Full {
			sp := r.Spread
			if sp == nil {
				sp = &osu.Spread{}
				ok = false
			}
			line = append(line, cell(sp.Min), cell(sp.P50), cell(sp.P99), cell(sp.Max))
		}
		mismatches += r.Mismatches
	}
	if t.inj {
		for _, pr := range t.cfg.Protect {
			if r, ok := m[pr]; ok {
				line = append(line, fmt.Sprintf("%d/%d/%d/%d", r.Injected, r.Detected, r.Repaired, r.Mismatches))
			} else {
				line = append(line, "-")
			}
		}
	} else {
		line = append(line, strconv.FormatUint(mismatches, 10))
	}
	t.line(line)
	t.cur = nil
}

// plotRun draws the rows in three panels against size: latency (µs),
// bandwidth (GB/s), and each layer's overhead over none (% more time).
// What the benchmark measures is one panel; the other is derived from it
// (size ÷ time, or time per message = size ÷ bandwidth) and says so.
func plotRun(path string, cfg osu.Config, p int, rows []osu.Row) error {
	format, err := plot.Format(path)
	if err != nil {
		return err
	}
	var lat, bw, over []plot.Series
	none := map[int]float64{}
	for _, r := range rows {
		if r.Protect == "none" {
			none[r.Size] = r.Value
		}
	}
	for _, pr := range cfg.Protect {
		l, b, o := plot.Series{Name: pr}, plot.Series{Name: pr}, plot.Series{Name: pr}
		for _, r := range rows {
			if r.Protect != pr || r.Value <= 0 {
				continue
			}
			x := float64(r.Size)
			var us, gbs float64
			if cfg.Op == osu.Bandwidth {
				gbs = r.Value / 1e3            // MB/s → GB/s
				us = float64(r.Size) / r.Value // bytes ÷ (bytes/µs)
			} else {
				us = r.Value
				gbs = float64(r.Size) / r.Value / 1e3 // bytes/µs = MB/s
			}
			l.X, l.Y = append(l.X, x), append(l.Y, us)
			b.X, b.Y = append(b.X, x), append(b.Y, gbs)
			if n, ok := none[r.Size]; ok && pr != "none" && n > 0 {
				pct := 100 * (r.Value/n - 1) // more time
				if cfg.Op == osu.Bandwidth {
					pct = 100 * (n/r.Value - 1) // less bandwidth, as more time per byte
				}
				o.X, o.Y = append(o.X, x), append(o.Y, pct)
			}
		}
		lat, bw = append(lat, l), append(bw, b)
		if pr != "none" {
			over = append(over, o)
		}
	}
	titles := map[string][2]string{
		osu.Latency:   {"one-way latency", "size ÷ latency"},
		osu.Bandwidth: {"time per message (size ÷ bandwidth)", "bandwidth, windows of sends"},
		osu.Bcast:     {"broadcast time, mean over ranks", "size ÷ time"},
		osu.Allgather: {"all-gather time, mean over ranks", "block size ÷ time"},
	}[cfg.Op]
	latTitle, bwTitle := titles[0], titles[1]
	panels := []plot.Panel{
		{Title: latTitle, YLabel: "latency (µs)", LogY: true, Series: lat},
		{Title: bwTitle, YLabel: "bandwidth (GB/s)", LogY: true, Series: bw},
	}
	if len(over) > 0 && slices.Contains(cfg.Protect, "none") {
		panels = append(panels, plot.Panel{Title: "overhead of each layer over none", YLabel: "overhead (% more time)", Zero: true, Series: over})
	}
	var buf bytes.Buffer
	if err := plot.SizePanels(&buf, format, fmt.Sprintf("sigcheck run %s: %d ranks, transport %s", cfg.Op, p, cfg.Transport), panels); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
