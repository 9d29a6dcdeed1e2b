package main

import (
	"context"
	"encoding/binary"
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
	"text/tabwriter"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/encrypt"
	"github.com/sigcheck/sigcheck/channel/tcp"
)

func init() {
	commands = append(commands, &command{"enc-allgather", "",
		"encrypted all-gather: the paper's eight algorithms beside the unencrypted, as overhead % (its Tables III–VI)", runEncAllgather})
}

const encHelp = `Measures the encrypted all-gather (channel/encrypt) as the paper's Tables III–VI do: per
message size, the latency of the fastest unencrypted all-gather (channel.Allgather, or the
unencrypted counterpart of one of the eight schedules, whichever is fastest here), and each
algorithm's overhead in % against it; then the best algorithm and the one Auto picks. Every
all-gather's result is checked on every rank.

With -transport tcp the job is real: N processes (this one and N-1 it starts) of ℓ ranks
each, joined over loopback TCP, the ranks of a process sharing its memory. With -transport
local every node is simulated in this process. -model prices the counts along each
algorithm's critical path (the paper's six metrics) with a Hockney model: "here" (measured on
this machine), "noleland" (the paper's cluster, where encryption is slower than the network)
or "none"; -counts prints the metrics themselves.

Latencies are the median of -runs runs, each the mean over -iters all-gathers of the slowest
rank, in µs. The machine may be shared: read the figures with that in mind.`

// encEnvNode tells a process that enc-allgather started which node it is.
const encEnvNode = "SIGCHECK_ENC_NODE"

type encOptions struct {
	p, n      int
	mapping   encrypt.Mapping
	transport string
	algs      []encrypt.Algorithm
	sizes     []int
	iters     int
	runs      int
	model     *encrypt.Model
	modelName string
	counts    bool
	json      bool
}

func runEncAllgather(e *env, args []string) error {
	fs := flags(e, "enc-allgather", encHelp)
	ranks := fs.Int("ranks", 4, "number of `ranks`, p")
	nodes := fs.Int("nodes", 2, "number of `nodes`, N (1 ≤ N ≤ p; need not divide p)")
	mapping := fs.String("map", "block", "rank `order` on the nodes: block or cyclic")
	transport := fs.String("transport", "local", "`transport`: local (nodes simulated in this process) or tcp (one process a node)")
	algs := fs.String("algs", "all", "comma-separated `algorithms`: naive, o-ring, o-rd, o-rd2, c-ring, c-rd, hs1, hs2, auto; all for every one and auto")
	sizes := fs.String("sizes", "1,64,1K,16K,256K,1M", "block `sizes` per rank: a list (8,4K,1M) or a doubling range MIN:MAX")
	iters := fs.Int("iters", 0, "timed all-gathers per run (default: by size, 200 down to 5)")
	runs := fs.Int("runs", 5, "`runs` per size and algorithm; the median is reported")
	model := fs.String("model", "here", "price the counts with this Hockney `model`: here, noleland or none")
	counts := fs.Bool("counts", false, "print the paper's six metrics (r_c s_c r_e s_e r_d s_d) of each algorithm, largest over ranks")
	asJSON := fs.Bool("json", false, "print one JSON object per size and algorithm: size, alg, latency_us, base_us, base, overhead_pct, predicted_us, best, auto, r_c…s_d")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	o := encOptions{p: *ranks, n: *nodes, transport: *transport, iters: *iters, runs: *runs, counts: *counts, json: *asJSON, modelName: *model}
	var err error
	if o.mapping, err = encrypt.ParseMapping(*mapping); err != nil {
		return usageErrorf("-map %q: want block or cyclic", *mapping)
	}
	if o.p < 1 || o.p > 1024 {
		return usageErrorf("-ranks %d: want 1 to 1024", o.p)
	}
	if o.n < 1 || o.n > o.p {
		return usageErrorf("-nodes %d: want 1 to -ranks (%d)", o.n, o.p)
	}
	if o.transport != "local" && o.transport != "tcp" {
		return usageErrorf("-transport %q: want local or tcp", o.transport)
	}
	if o.runs < 1 || o.iters < 0 {
		return usageErrorf("-runs %d -iters %d: want at least one run, and iterations ≥ 0", o.runs, o.iters)
	}
	if *algs == "all" {
		o.algs = append(encrypt.Algorithms(), encrypt.Auto)
	} else {
		for _, s := range strings.Split(*algs, ",") {
			a, err := encrypt.ParseAlgorithm(strings.TrimSpace(s))
			if err != nil {
				return usageErrorf("-algs: unknown algorithm %q (naive, o-ring, o-rd, o-rd2, c-ring, c-rd, hs1, hs2, auto)", s)
			}
			if !slices.Contains(o.algs, a) {
				o.algs = append(o.algs, a)
			}
		}
	}
	if o.sizes, err = parseSizeRange(*sizes); err != nil {
		return usageErrorf("-sizes %s", err)
	}
	for _, s := range o.sizes {
		if int64(s)*int64(o.p) > 1<<30 {
			return usageErrorf("-sizes %d: %d ranks would each receive more than 1 GiB", s, o.p)
		}
	}
	switch *model {
	case "here":
		o.model = &encrypt.HereModel
	case "noleland":
		o.model = &encrypt.NolelandModel
	case "none":
	default:
		return usageErrorf("-model %q: want here, noleland or none", *model)
	}
	lay, err := encrypt.NewLayout(o.p, o.n, o.mapping)
	if err != nil {
		return usageErrorf("%v", err)
	}
	ctx, stop := interruptible()
	defer stop()
	if k := os.Getenv(encEnvNode); k != "" {
		node, err := strconv.Atoi(k)
		if err != nil || node < 1 || node >= o.n {
			return fmt.Errorf("%s=%q: not a node of %d", encEnvNode, k, o.n)
		}
		return encNodeProcess(ctx, lay, node, o, nil)
	}
	res := &encResults{o: o, lay: lay}
	if o.transport == "local" {
		err = encLocal(ctx, lay, o, res)
	} else {
		err = encLaunch(ctx, e, lay, o, args, res)
	}
	if err != nil && ctx.Err() != nil {
		res.print(e.stdout)
		return &interruptedError{fmt.Sprintf("%d of %d measurements made", len(res.rows), len(o.sizes)*len(encVariants(o.algs)))}
	}
	if err != nil {
		return err
	}
	return res.print(e.stdout)
}

// interruptible is a context that Ctrl-C ends.
func interruptible() (context.Context, func()) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

// encLocal runs every node in this process over NewLocal.
func encLocal(ctx context.Context, lay encrypt.Layout, o encOptions, res *encResults) error {
	eps, err := channel.NewLocal(lay.Size())
	if err != nil {
		return err
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	nodes := encrypt.NewNodes(lay)
	return encRanks(ctx, lay, eps, nodes, o, res)
}

// encLaunch runs node 0 here and starts a process for each other node.
func encLaunch(ctx context.Context, e *env, lay encrypt.Layout, o encOptions, args []string, res *encResults) error {
	env := func(k int) []string { return []string{encEnvNode + "=" + strconv.Itoa(k)} }
	return launchLoopback(ctx, e, "node", lay.Nodes(), append([]string{"enc-allgather"}, args...), env, func(ctx context.Context, ln net.Listener, secret string) error {
		return encNodeProcess(ctx, lay, 0, o, &encTCP{ln: ln, secret: secret, res: res})
	})
}

type encTCP struct {
	ln     net.Listener
	secret string
	res    *encResults
}

// encNodeProcess joins node's ranks to the job over TCP and runs them.
// Node 0 (t != nil) holds rank 0, listens, and keeps the results.
func encNodeProcess(ctx context.Context, lay encrypt.Layout, node int, o encOptions, t *encTCP) error {
	join, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	mine := lay.Ranks(node)
	auth, err := tcp.ParseAuth(os.Getenv(tcp.EnvAuth))
	if err != nil {
		return fmt.Errorf("%s: %w", tcp.EnvAuth, err)
	}
	eps := make([]*channel.Endpoint, lay.Size())
	errs := make([]error, len(mine))
	var wg sync.WaitGroup
	for i, r := range mine {
		cfg := tcp.Config{Rank: r, Size: lay.Size(), Root: os.Getenv(tcp.EnvRoot), Secret: []byte(os.Getenv(tcp.EnvSecret)), Congestion: os.Getenv(tcp.EnvCongestion), Auth: auth}
		if t != nil {
			cfg.Root, cfg.Secret = t.ln.Addr().String(), []byte(t.secret)
			if r == 0 {
				cfg.Listener = t.ln
			}
		}
		wg.Go(func() { eps[r], errs[i] = tcp.Connect(join, cfg) })
	}
	wg.Wait()
	defer func() {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
	}()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	nodes := make([]*encrypt.Node, lay.Nodes())
	nodes[node] = encrypt.NewNode(lay, node)
	var res *encResults
	if t != nil {
		res = t.res
	}
	return encRanks(ctx, lay, eps, nodes, o, res)
}

// encRanks runs the measurements on the ranks whose endpoints are
// non-nil in eps; rank 0, if here, fills res.
func encRanks(ctx context.Context, lay encrypt.Layout, eps []*channel.Endpoint, nodes []*encrypt.Node, o encOptions, res *encResults) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for r, ep := range eps {
		if ep == nil {
			continue
		}
		wg.Go(func() {
			err := encRank(ctx, lay, ep, nodes[lay.Node(r)], o, res)
			if err != nil {
				mu.Lock()
				if first == nil || errors.Is(first, context.Canceled) {
					first = fmt.Errorf("rank %d: %w", r, err)
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	return first
}

// A variant is what one column measures.
type encVariant struct {
	name  string // "channel", "plain:hs1", "hs1"
	alg   encrypt.Algorithm
	plain bool
}

func encVariants(algs []encrypt.Algorithm) []encVariant {
	vs := []encVariant{{name: "channel"}}
	for _, a := range encrypt.Algorithms() {
		vs = append(vs, encVariant{name: "plain:" + a.String(), alg: a, plain: true})
	}
	for _, a := range algs {
		vs = append(vs, encVariant{name: a.String(), alg: a})
	}
	return vs
}

// encRank is one rank's part: for every size and variant, runs of
// timed all-gathers, each checked; rank 0 gathers the slowest rank's
// mean of each run and the counts.
func encRank(ctx context.Context, lay encrypt.Layout, ep *channel.Endpoint, node *encrypt.Node, o encOptions, res *encResults) error {
	var opts []encrypt.Option
	if o.model != nil {
		opts = append(opts, encrypt.WithModel(*o.model))
	}
	g, err := encrypt.New(ctx, ep, ep, lay, node, opts...)
	if err != nil {
		return err
	}
	p, r := lay.Size(), ep.Rank()
	for _, m := range o.sizes {
		send := make([]byte, m)
		want := make([]byte, p*m)
		for src := range p {
			encFill(want[src*m:(src+1)*m], src, m)
		}
		copy(send, want[r*m:])
		recv := make([]byte, p*m)
		iters := o.iters
		if iters == 0 {
			iters = max(5, min(200, (64<<20)/max(1, p*m)))
		}
		vs := encVariants(o.algs)
		call := func(v encVariant) (encrypt.Counts, error) {
			switch {
			case v.name == "channel":
				return encrypt.Counts{}, channel.Allgather(ctx, ep, send, recv)
			case v.plain:
				return g.RunUnencrypted(ctx, v.alg, send, recv)
			}
			return g.Run(ctx, v.alg, send, recv)
		}
		worst := make([]encrypt.Counts, len(vs))
		for i, v := range vs {
			clear(recv)
			c, err := call(v) // a warm-up, checked, whose counts are kept
			if err != nil {
				return fmt.Errorf("%s, %d B: %w", v.name, m, err)
			}
			if string(recv) != string(want) {
				return fmt.Errorf("%s, %d B: the all-gather's result differs from what was sent", v.name, m)
			}
			if worst[i], err = encMax(ctx, ep, c.Metrics(), c.Time); err != nil {
				return err
			}
		}
		// The runs go round the variants, so that a burst of load on a
		// shared machine falls on all of them alike, not on one, and each
		// run starts at another variant, so that none is always the one
		// after the same other.
		samples := make([][]float64, len(vs))
		for run := range o.runs {
			for k := range vs {
				i := (k + run) % len(vs)
				v := vs[i]
				if err := channel.Barrier(ctx, ep); err != nil {
					return err
				}
				t0 := time.Now()
				for range iters {
					if _, err := call(v); err != nil {
						return fmt.Errorf("%s, %d B: %w", v.name, m, err)
					}
				}
				mean := float64(time.Since(t0)) / float64(time.Microsecond) / float64(iters)
				s, err := encMax(ctx, ep, [6]int64{}, mean)
				if err != nil {
					return err
				}
				samples[i] = append(samples[i], s.Time)
				if string(recv) != string(want) {
					return fmt.Errorf("%s, %d B: the all-gather's result differs from what was sent", v.name, m)
				}
			}
		}
		if r == 0 && res != nil {
			for i, v := range vs {
				choice := ""
				if v.alg == encrypt.Auto && !v.plain && v.name != "channel" {
					choice = g.Choose(m).String()
				}
				res.add(encRow{size: m, variant: v, latency: median(samples[i]), counts: worst[i], predicted: worst[i].Time * 1e6, choice: choice})
			}
		}
	}
	return nil
}

// encFill gives rank src's block of m bytes a pattern of its own.
func encFill(b []byte, src, m int) {
	for i := range b {
		b[i] = byte(src*131 + i*7 + m)
	}
}

// encMax returns, on rank 0, the largest of each metric and of v over
// the ranks (elsewhere, its own).
func encMax(ctx context.Context, ep *channel.Endpoint, met [6]int64, v float64) (encrypt.Counts, error) {
	p := ep.Size()
	send := make([]byte, 56)
	for i, x := range met {
		binary.LittleEndian.PutUint64(send[8*i:], uint64(x))
	}
	binary.LittleEndian.PutUint64(send[48:], math.Float64bits(v))
	all := make([]byte, 56*p)
	if err := channel.Gather(ctx, ep, 0, send, all); err != nil {
		return encrypt.Counts{}, err
	}
	if ep.Rank() != 0 {
		return encrypt.Counts{}, nil
	}
	var c encrypt.Counts
	for r := range p {
		b := all[56*r:]
		le := binary.LittleEndian
		d := encrypt.Counts{Rc: int64(le.Uint64(b)), Sc: int64(le.Uint64(b[8:])), Re: int64(le.Uint64(b[16:])),
			Se: int64(le.Uint64(b[24:])), Rd: int64(le.Uint64(b[32:])), Sd: int64(le.Uint64(b[40:])), Time: math.Float64frombits(le.Uint64(b[48:]))}
		c = c.Max(d)
	}
	return c, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

type encRow struct {
	size      int
	variant   encVariant
	latency   float64 // µs
	counts    encrypt.Counts
	predicted float64 // µs, from the model
	choice    string  // Auto's pick
}

type encResults struct {
	o    encOptions
	lay  encrypt.Layout
	mu   sync.Mutex
	rows []encRow
}

func (r *encResults) add(row encRow) {
	r.mu.Lock()
	r.rows = append(r.rows, row)
	r.mu.Unlock()
}

// base returns the fastest unencrypted variant at a size.
func (r *encResults) base(size int) encRow {
	var b encRow
	for _, row := range r.rows {
		if row.size == size && (row.variant.name == "channel" || row.variant.plain) && (b.variant.name == "" || row.latency < b.latency) {
			b = row
		}
	}
	return b
}

func (r *encResults) encrypted(size int) []encRow {
	var out []encRow
	for _, row := range r.rows {
		if row.size == size && row.variant.name != "channel" && !row.variant.plain {
			out = append(out, row)
		}
	}
	return out
}

func overhead(v, base float64) float64 { return 100 * (v - base) / base }

func (r *encResults) best(size int) encRow {
	var b encRow
	for _, row := range r.encrypted(size) {
		if row.variant.alg != encrypt.Auto && (b.variant.name == "" || row.latency < b.latency) {
			b = row
		}
	}
	return b
}

// complete returns the sizes whose every variant was measured.
func (r *encResults) complete() []int {
	var out []int
	for _, size := range r.o.sizes {
		n := 0
		for _, row := range r.rows {
			if row.size == size {
				n++
			}
		}
		if n == len(encVariants(r.o.algs)) {
			out = append(out, size)
		}
	}
	return out
}

func (r *encResults) print(w io.Writer) error {
	sizes := r.complete()
	if r.o.json {
		enc := json.NewEncoder(w)
		for _, size := range sizes {
			base, best := r.base(size), r.best(size)
			for _, row := range r.rows {
				if row.size != size {
					continue
				}
				obj := map[string]any{"size": size, "alg": row.variant.name, "latency_us": round3(row.latency),
					"base_us": round3(base.latency), "base": base.variant.name, "overhead_pct": round3(overhead(row.latency, base.latency)),
					"best": best.variant.name, "p": r.lay.Size(), "nodes": r.lay.Nodes(), "map": r.o.mapping.String(), "transport": r.o.transport}
				if row.variant.name != "channel" && !row.variant.plain {
					for i, n := range encrypt.MetricNames {
						obj[n] = row.counts.Metrics()[i]
					}
					if r.o.model != nil {
						obj["predicted_us"] = round3(row.predicted)
					}
				}
				if row.choice != "" {
					obj["auto"] = row.choice
				}
				if err := enc.Encode(obj); err != nil {
					return err
				}
			}
		}
		return nil
	}
	where := "nodes simulated in one process"
	if r.o.transport == "tcp" {
		where = fmt.Sprintf("tcp, %d processes", r.lay.Nodes())
	}
	fmt.Fprintf(w, "# sigcheck enc-allgather: %v, %s order, %s; AES-128-GCM; median of %d runs\n", r.lay, r.o.mapping, where, r.o.runs)
	fmt.Fprintf(w, "# overhead %% against the fastest unencrypted all-gather (channel.Allgather or a schedule's unencrypted counterpart)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"size", "unencrypted µs", "(which)"}
	var algs []encrypt.Algorithm
	for _, a := range r.o.algs {
		if a != encrypt.Auto {
			algs = append(algs, a)
			head = append(head, a.Title())
		}
	}
	head = append(head, "best", "", "auto", "")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, size := range sizes {
		base, best := r.base(size), r.best(size)
		cells := []string{sizeLabel(size), fmt.Sprintf("%.1f", base.latency), strings.TrimPrefix(base.variant.name, "plain:")}
		var auto encRow
		for _, row := range r.encrypted(size) {
			if row.variant.alg == encrypt.Auto {
				auto = row
				continue
			}
			cells = append(cells, encPct(overhead(row.latency, base.latency)))
		}
		cells = append(cells, encPct(overhead(best.latency, base.latency)), best.variant.alg.Title())
		if auto.variant.name != "" {
			cells = append(cells, encPct(overhead(auto.latency, base.latency)), "("+auto.choice+")")
		} else {
			cells = append(cells, "", "")
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
	if r.o.model != nil {
		fmt.Fprintf(w, "\n# µs: measured / predicted by the %q model along each critical path\n", r.o.modelName)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := []string{"size"}
		for _, a := range algs {
			head = append(head, a.Title())
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, size := range sizes {
			cells := []string{sizeLabel(size)}
			for _, row := range r.encrypted(size) {
				if row.variant.alg != encrypt.Auto {
					cells = append(cells, fmt.Sprintf("%.1f / %.1f", row.latency, row.predicted))
				}
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
		tw.Flush()
	}
	if r.o.counts {
		fmt.Fprintf(w, "\n# the paper's six metrics on the critical path, largest over ranks (bytes of plaintext)\n")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "size\talgorithm\t"+strings.Join(encrypt.MetricNames[:], "\t")+"\t")
		for _, size := range sizes {
			for _, row := range r.encrypted(size) {
				if row.variant.alg == encrypt.Auto {
					continue
				}
				c := row.counts
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", sizeLabel(size), row.variant.alg.Title(), c.Rc, c.Sc, c.Re, c.Se, c.Rd, c.Sd)
			}
		}
		tw.Flush()
	}
	return nil
}

func encPct(v float64) string { return fmt.Sprintf("%+.0f%%", v) }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
