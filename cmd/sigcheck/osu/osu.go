// Package osu measures a channel.Comm the way the OSU micro-benchmarks
// measure MPI (osu_latency, osu_bw, osu_bcast, osu_allgather): warm-up
// iterations, then timed ones, at sizes doubling from 1 byte. Each
// protection layer is measured beside the unprotected transfer, size by
// size, so that the ratios compare runs of the same minute on a noisy
// machine; and every message delivered is checked against the data its
// sender sent (outside the timed part), so a benchmark under injected
// faults also shows that nothing wrong got through.
//
// Every rank runs Run with the same Config (SPMD, as an MPI program); rank
// 0 gets the rows.
//
// It is a client of channel, not a part of it, so it lives beside the
// command that uses it (sigcheck run), above channel in the layering:
// nothing under channel/ or internal/ imports it.
package osu

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// The benchmarks.
const (
	Latency   = "latency"   // ping-pong between ranks 0 and 1; µs one way
	Bandwidth = "bw"        // windows of non-blocking sends from rank 0 to 1; MB/s
	Bcast     = "bcast"     // broadcast from rank 0; µs, mean over ranks
	Allgather = "allgather" // every rank's block to every rank; µs, mean over ranks
)

// Ops lists the benchmarks.
func Ops() []string { return []string{Latency, Bandwidth, Bcast, Allgather} }

// Protections lists what Config.Protect may name.
func Protections() []string { return []string{"none", "checksum", "merkle"} }

// MaxSize is the largest message size Run accepts.
const MaxSize = 1 << 30

// MaxWindowBytes bounds bw's window: messages in flight times their size
// (the receiver keeps two windows of buffers).
const MaxWindowBytes = 1 << 30

// Config says what to measure. Every rank must pass the same one.
type Config struct {
	Op string
	// Protect names the layers to measure, each over the same endpoint,
	// in this order at every size (default: none).
	Protect []string
	// Sizes are the message sizes in bytes (per rank for allgather);
	// default DefaultSizes.
	Sizes []int
	// Iters and Warmup override the iteration counts, which otherwise
	// follow OSU's: many for small messages, fewer for large ones.
	Iters, Warmup int
	// Window is osu_bw's number of messages in flight (default 64, fewer
	// when they would take more than 16 MiB).
	Window int
	// Transport labels the rows.
	Transport string
	// Progress, if set, is called on rank 0 after each row.
	Progress func(done, total int)
	// Full asks for each row's spread (osu_latency -f): the fastest and
	// slowest iteration and percentiles, besides the mean. Every rank
	// then sends its per-iteration times to rank 0 after each row.
	Full bool
}

// Row is one measurement: one size under one protection.
type Row struct {
	Op        string  `json:"op"`
	Transport string  `json:"transport"`
	Protect   string  `json:"protect"`
	Size      int     `json:"size"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit"`
	Iters     int     `json:"iterations"`
	// Frames damaged by an injector, and what the ranks caught and
	// repaired, summed over the ranks, during this row's timed and
	// warm-up iterations.
	Injected uint64 `json:"injected"`
	Detected uint64 `json:"detected"`
	Repaired uint64 `json:"repaired"`
	// Mismatches counts the messages delivered that differ from what
	// their sender sent (for latency: round trips that came back
	// different). Under a protection layer it must be 0.
	Mismatches uint64 `json:"mismatches"`
	// The spread of the iterations, in Unit, with Config.Full: for
	// latency, rank 0's round trips (halved); for bw, rank 0's windows;
	// for the collectives, every rank's iterations pooled (so Min is the
	// fastest iteration of any rank, Max the slowest). Percentiles are
	// nearest-rank. Value stays the mean (for bw: all bytes over all time).
	Spread *Spread `json:"spread,omitempty"`
}

// Spread is the distribution of a row's iterations.
type Spread struct {
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// spreadOf returns the spread of samples (sorted in place).
func spreadOf(samples []float64) *Spread {
	if len(samples) == 0 {
		return nil
	}
	slices.Sort(samples)
	at := func(q float64) float64 { // nearest rank: the smallest sample with at least q of them at or below it
		i := int(math.Ceil(q*float64(len(samples)))) - 1
		return samples[max(0, min(i, len(samples)-1))]
	}
	return &Spread{Min: samples[0], P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: samples[len(samples)-1]}
}

// Unit returns the unit of op's values.
func Unit(op string) string {
	if op == Bandwidth {
		return "MB/s"
	}
	return "us"
}

// DefaultSizes returns 1 B to 64 MiB, doubling; for allgather, on p
// ranks, up to the size at which one rank's receive buffer (p blocks)
// reaches 64 MiB.
func DefaultSizes(op string, p int) []int {
	limit := 64 << 20
	if op == Allgather {
		limit = max(1, (64<<20)/max(p, 1))
	}
	var s []int
	for n := 1; n <= limit; n *= 2 {
		s = append(s, n)
	}
	return s
}

// counts returns the warm-up and timed iterations for a size: OSU's
// (1000 and 100 up to 8 KiB, then 100 and 10; osu_bw 100 and 10, then 20
// and 2), fewer for the largest messages so that a row moves about
// 256 MiB, but never fewer than 10 (5 windows for bw).
func (cfg *Config) counts(size, window int) (warm, iters int) {
	small := size <= 8<<10
	switch {
	case cfg.Op == Bandwidth && small:
		warm, iters = 10, 100
	case cfg.Op == Bandwidth:
		iters = min(20, max(5, (256<<20)/(size*window)))
		warm = 2
	case small:
		warm, iters = 100, 1000
	default:
		iters = min(100, max(10, (256<<20)/size))
		warm = max(2, iters/10)
	}
	if cfg.Iters > 0 {
		iters = cfg.Iters
	}
	if cfg.Warmup > 0 {
		warm = cfg.Warmup
	}
	return warm, iters
}

func (cfg *Config) window(size int) int {
	if cfg.Window > 0 {
		return cfg.Window
	}
	return min(64, max(1, (16<<20)/size))
}

// ErrConfig is what every *ConfigError is (errors.Is): a Config that
// cannot run as given. None is ever changed to one that can.
var ErrConfig = errors.New("bad benchmark configuration")

// ConfigError says what is wrong with a Config, in words for the user of
// the command ("bw runs between 2 ranks, not 3").
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string        { return e.Msg }
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// Check reports whether cfg can run on p ranks, as Run would find before
// it starts; a command calls it to refuse a run before starting ranks.
func (cfg *Config) Check(p int) error {
	bad := func(format string, args ...any) error {
		return &ConfigError{fmt.Sprintf(format, args...)}
	}
	if !slices.Contains(Ops(), cfg.Op) {
		return bad("unknown benchmark %q (want one of %v)", cfg.Op, Ops())
	}
	// osu_latency and osu_bw refuse any other number of processes; so do
	// these, rather than leave the ranks beyond 1 idle in the results.
	if (cfg.Op == Latency || cfg.Op == Bandwidth) && p != 2 {
		return bad("%s runs between 2 ranks, not %d", cfg.Op, p)
	}
	seen := map[string]bool{}
	for _, pr := range cfg.Protect {
		if !slices.Contains(Protections(), pr) {
			return bad("unknown protection %q (want some of %v)", pr, Protections())
		}
		if seen[pr] {
			return bad("protection %q named twice", pr)
		}
		seen[pr] = true
	}
	for _, s := range cfg.Sizes {
		if s < 1 || s > MaxSize {
			return bad("size %d: want 1 to %d bytes", s, MaxSize)
		}
	}
	if cfg.Iters < 0 || cfg.Warmup < 0 || cfg.Window < 0 {
		return bad("negative iterations or window")
	}
	if cfg.Op == Bandwidth {
		// The receiver holds two windows of buffers: say no before
		// asking the machine for terabytes.
		for _, s := range cfg.Sizes {
			if w := cfg.window(s); int64(w)*int64(s) > MaxWindowBytes {
				return bad("a window of %d messages of %d bytes is more than %d MiB in flight", w, s, MaxWindowBytes>>20)
			}
		}
	}
	return nil
}

// Run runs cfg on c, one rank of the job (c must be an endpoint of the
// channel package: the protection layers are built over it). Rank 0
// calls emit with each row once every rank has measured it.
//
// The rows' fault counts come from the endpoints' counters, so Run
// expects to be the only user of the endpoints while it runs.
func Run(ctx context.Context, c channel.Comm, cfg Config, emit func(Row)) error {
	p := c.Size()
	if len(cfg.Protect) == 0 {
		cfg.Protect = []string{"none"}
	}
	if len(cfg.Sizes) == 0 {
		cfg.Sizes = DefaultSizes(cfg.Op, p)
	}
	if err := cfg.Check(p); err != nil {
		return err
	}
	// ctl carries the results to rank 0: checksummed, so that an
	// injector set on the transport cannot garble them.
	ctl, err := channel.WithChecksum(c, channel.Rounds(32))
	if err != nil {
		return err
	}
	layers := make([]channel.Comm, len(cfg.Protect))
	for i, pr := range cfg.Protect {
		switch pr {
		case "none":
			layers[i] = c
		case "checksum":
			layers[i], err = channel.WithChecksum(c)
		case "merkle":
			layers[i], err = channel.WithMerkle(c)
		}
		if err != nil {
			return err
		}
	}
	total, done := len(cfg.Sizes)*len(layers), 0
	for _, size := range cfg.Sizes {
		b := newBufs(cfg.Op, c.Rank(), p, size, cfg.window(size))
		for i, l := range layers {
			before, err := settle(ctx, c)
			if err != nil {
				return err
			}
			m := measurer{cfg: &cfg, base: c, c: l, size: size, b: b}
			value, err := m.run(ctx)
			if err != nil {
				return fmt.Errorf("%s, %s, %d bytes: %w", cfg.Op, cfg.Protect[i], size, err)
			}
			after, err := settle(ctx, c)
			if err != nil {
				return err
			}
			rec := record{
				value:    value,
				injected: after.Injected - before.Injected,
				detected: after.Detected - before.Detected,
				repaired: after.Repaired - before.Repaired,
				mismatch: m.mismatches,
			}
			// Every rank sends as many samples (iters is the same on all;
			// a rank that times nothing sends zeros, unread).
			nSamples := 0
			if cfg.Full {
				nSamples = m.iters
				m.samples = append(m.samples, make([]float64, max(0, nSamples-len(m.samples)))...)[:nSamples]
			}
			recLen := recordSize + 8*nSamples
			all := make([]byte, p*recLen)
			if err := channel.Gather(ctx, ctl, 0, rec.encode(m.samples), all); err != nil {
				return err
			}
			if c.Rank() != 0 {
				continue
			}
			row := Row{Op: cfg.Op, Transport: cfg.Transport, Protect: cfg.Protect[i], Size: size,
				Unit: Unit(cfg.Op), Iters: m.iters}
			var (
				sum    float64
				pooled []float64
			)
			for r := range p {
				b := all[r*recLen : (r+1)*recLen]
				x := decodeRecord(b)
				row.Injected += x.injected
				row.Detected += x.detected
				row.Repaired += x.repaired
				row.Mismatches += x.mismatch
				sum += x.value
				if r == 0 || cfg.Op == Bcast || cfg.Op == Allgather {
					pooled = appendSamples(pooled, b[recordSize:])
				}
			}
			switch cfg.Op {
			case Latency, Bandwidth:
				row.Value = rec.value // rank 0 measures the pair
			default:
				row.Value = sum / float64(p) // as OSU's "Avg Latency"
			}
			if cfg.Full {
				row.Spread = spreadOf(pooled)
			}
			if emit != nil {
				emit(row)
			}
			done++
			if cfg.Progress != nil {
				cfg.Progress(done, total)
			}
		}
	}
	// No rank closes its endpoint while another still needs it.
	return channel.Barrier(ctx, c)
}

// settle reads c's counters at a point where no transfer is under way
// on any rank: once this rank's eager sends are all verified, between two
// barriers of the endpoint itself (whose
// messages are empty, so an injector never damages them). No rank leaves
// the first before every rank has settled (verified, acknowledged) every
// transfer before it, and none leaves the second — to send more —
// before every rank has read its counters. So each row counts its own
// faults, not those of the previous row or of the results' gather.
func settle(ctx context.Context, c channel.Comm) (channel.Stats, error) {
	if err := channel.Flush(ctx, c); err != nil { // eager sends still hearing from their receivers
		return channel.Stats{}, err
	}
	if err := channel.Barrier(ctx, c); err != nil {
		return channel.Stats{}, err
	}
	s := channel.StatsOf(c)
	return s, channel.Barrier(ctx, c)
}

// record is what each rank reports to rank 0 after a row.
type record struct {
	value                                  float64
	injected, detected, repaired, mismatch uint64
}

const recordSize = 40

// encode returns the record followed by the samples.
func (r record) encode(samples []float64) []byte {
	b := make([]byte, recordSize, recordSize+8*len(samples))
	binary.LittleEndian.PutUint64(b, math.Float64bits(r.value))
	binary.LittleEndian.PutUint64(b[8:], r.injected)
	binary.LittleEndian.PutUint64(b[16:], r.detected)
	binary.LittleEndian.PutUint64(b[24:], r.repaired)
	binary.LittleEndian.PutUint64(b[32:], r.mismatch)
	for _, v := range samples {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

func appendSamples(dst []float64, b []byte) []float64 {
	for ; len(b) >= 8; b = b[8:] {
		dst = append(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	return dst
}

func decodeRecord(b []byte) record {
	return record{
		value:    math.Float64frombits(binary.LittleEndian.Uint64(b)),
		injected: binary.LittleEndian.Uint64(b[8:]),
		detected: binary.LittleEndian.Uint64(b[16:]),
		repaired: binary.LittleEndian.Uint64(b[24:]),
		mismatch: binary.LittleEndian.Uint64(b[32:]),
	}
}

// bufs are one size's buffers, shared by the protections' rows.
type bufs struct {
	send []byte         // this rank's data (stamped per iteration)
	recv [][]byte       // receive buffers: one, a window's two sets, or p blocks
	sets [2][][]byte    // bw's receiver: two windows, one filling while the other is checked
	want map[int][]byte // each source's data, unstamped, for the checks
}

func newBufs(op string, rank, p, size, window int) *bufs {
	b := &bufs{}
	switch op {
	case Latency:
		if rank <= 1 {
			b.send = make([]byte, size)
			fill(b.send, rank)
			b.recv = [][]byte{make([]byte, size)}
		}
	case Bandwidth:
		switch rank {
		case 0:
			b.send = make([]byte, size)
			fill(b.send, 0)
		case 1:
			for s := range b.sets {
				for range window {
					b.sets[s] = append(b.sets[s], make([]byte, size))
				}
			}
		}
	case Bcast:
		b.send = make([]byte, size)
		if rank == 0 {
			fill(b.send, 0)
		}
	case Allgather:
		b.send = make([]byte, size)
		fill(b.send, rank)
		b.recv = [][]byte{make([]byte, p*size)}
	}
	return b
}

// measurer runs one row on one rank.
type measurer struct {
	cfg        *Config
	base, c    channel.Comm // the endpoint (barriers between iterations) and the layer measured
	size       int
	b          *bufs
	iters      int
	mismatches uint64
	samples    []float64 // with Config.Full: each timed iteration, in the row's unit
}

// sample keeps one timed iteration's value, with Config.Full.
func (m *measurer) sample(v float64) {
	if m.cfg.Full {
		m.samples = append(m.samples, v)
	}
}

// Tags of the benchmarks' messages.
const (
	tagData = 1
	tagAck  = 2
)

func (m *measurer) run(ctx context.Context) (float64, error) {
	switch m.cfg.Op {
	case Latency:
		return m.latency(ctx)
	case Bandwidth:
		return m.bandwidth(ctx)
	case Bcast:
		return m.collective(ctx, func() error { return channel.Bcast(ctx, m.c, 0, m.b.send) })
	default:
		return m.collective(ctx, func() error { return channel.Allgather(ctx, m.c, m.b.send, m.b.recv[0]) })
	}
}

// latency: rank 0 sends, rank 1 sends back what it got; half the round
// trip. Rank 0 compares what came back with what it sent (after the
// clock stops), so a message damaged either way counts.
func (m *measurer) latency(ctx context.Context) (float64, error) {
	warm, iters := m.cfg.counts(m.size, 1)
	m.iters = iters
	rank := m.c.Rank()
	if rank > 1 {
		return 0, nil
	}
	var busy time.Duration
	for i := range warm + iters {
		if rank == 1 {
			st, err := m.c.Recv(ctx, 0, tagData, m.b.recv[0])
			if err != nil {
				return 0, err
			}
			if err := m.c.Send(ctx, 0, tagData, m.b.recv[0][:st.Len]); err != nil {
				return 0, err
			}
			continue
		}
		stamp(m.b.send, i)
		t := time.Now()
		if err := m.c.Send(ctx, 1, tagData, m.b.send); err != nil {
			return 0, err
		}
		st, err := m.c.Recv(ctx, 1, tagData, m.b.recv[0])
		if err != nil {
			return 0, err
		}
		if i >= warm {
			d := time.Since(t)
			busy += d
			m.sample(micros(d) / 2)
		}
		if st.Len != m.size || !bytes.Equal(m.b.recv[0], m.b.send) {
			m.mismatches++
		}
	}
	return micros(busy) / float64(iters) / 2, nil
}

// bandwidth: rank 0 sends windows of messages with Isend, rank 1
// acknowledges each window; the next window's receives are posted
// before the acknowledgement (into the other set of buffers), and the
// window just received is checked while the next one arrives.
func (m *measurer) bandwidth(ctx context.Context) (float64, error) {
	w := m.cfg.window(m.size)
	warm, iters := m.cfg.counts(m.size, w)
	m.iters = iters
	switch m.c.Rank() {
	case 0:
		reqs := make([]*channel.Request, w)
		var t0, tw time.Time
		for k := range warm + iters {
			if k == warm {
				t0 = time.Now()
			}
			if k > warm {
				now := time.Now()
				m.sample(float64(m.size) * float64(w) / now.Sub(tw).Seconds() / 1e6)
				tw = now
			} else if k == warm {
				tw = t0
			}
			stamp(m.b.send, k)
			for i := range reqs {
				reqs[i] = channel.Isend(ctx, m.c, 1, tagData, m.b.send)
			}
			if err := channel.WaitAll(reqs...); err != nil {
				return 0, err
			}
			if _, err := m.c.Recv(ctx, 1, tagAck, nil); err != nil {
				return 0, err
			}
		}
		end := time.Now()
		m.sample(float64(m.size) * float64(w) / end.Sub(tw).Seconds() / 1e6)
		secs := end.Sub(t0).Seconds()
		return float64(m.size) * float64(w) * float64(iters) / secs / 1e6, nil
	case 1:
		post := func(set [][]byte) []*channel.Request {
			reqs := make([]*channel.Request, len(set))
			for i, buf := range set {
				reqs[i] = channel.Irecv(ctx, m.c, 0, tagData, buf)
			}
			return reqs
		}
		reqs := post(m.b.sets[0])
		for k := range warm + iters {
			lens := make([]int, len(reqs))
			for i, r := range reqs {
				st, err := r.Wait()
				if err != nil {
					return 0, err
				}
				lens[i] = st.Len
			}
			if k+1 < warm+iters {
				reqs = post(m.b.sets[(k+1)%2])
			}
			if err := m.c.Send(ctx, 0, tagAck, nil); err != nil {
				return 0, err
			}
			for i, buf := range m.b.sets[k%2] {
				if lens[i] != m.size || !m.b.check(buf, 0, k) {
					m.mismatches++
				}
			}
		}
	}
	return 0, nil
}

// collective times fn on every rank, with a barrier of the endpoint
// between iterations (as OSU does), and checks every block each rank
// holds afterwards against its owner's data.
func (m *measurer) collective(ctx context.Context, fn func() error) (float64, error) {
	warm, iters := m.cfg.counts(m.size, 1)
	m.iters = iters
	rank, p := m.c.Rank(), m.c.Size()
	var busy time.Duration
	for i := range warm + iters {
		if m.cfg.Op == Allgather || rank == 0 {
			stamp(m.b.send, i)
		}
		t := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		if i >= warm {
			d := time.Since(t)
			busy += d
			m.sample(micros(d))
		}
		if m.cfg.Op == Bcast {
			if rank != 0 && !m.b.check(m.b.send, 0, i) {
				m.mismatches++
			}
		} else {
			for j := range p {
				if !m.b.check(m.b.recv[0][j*m.size:(j+1)*m.size], j, i) {
					m.mismatches++
				}
			}
		}
		if err := channel.Barrier(ctx, m.base); err != nil {
			return 0, err
		}
	}
	return micros(busy) / float64(iters), nil
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// The data: 64-bit words of a SplitMix64 sequence that depends on the
// sending rank, so that a block delivered to the wrong place is caught;
// its first (up to) 8 bytes are replaced by the iteration number, so that
// a buffer left over from the previous iteration is caught too.

func word(src, k int) uint64 {
	z := uint64(src)<<48 ^ uint64(k) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func fill(b []byte, src int) {
	k := 0
	for ; 8*k+8 <= len(b); k++ {
		binary.LittleEndian.PutUint64(b[8*k:], word(src, k))
	}
	if tail := b[8*k:]; len(tail) > 0 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], word(src, k))
		copy(tail, w[:])
	}
}

func stamp(b []byte, iter int) {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], uint64(iter))
	copy(b, w[:])
}

// check reports whether got is src's data stamped with iter, against a
// copy of src's data made once per size (memcmp speed: checking must not
// slow down the receiver it runs beside).
func (b *bufs) check(got []byte, src, iter int) bool {
	want := b.want[src]
	if want == nil {
		want = make([]byte, len(got))
		fill(want, src)
		if b.want == nil {
			b.want = map[int][]byte{}
		}
		b.want[src] = want
	}
	return checkData(got, want, iter)
}

// checkData reports whether got is want stamped with iter.
func checkData(got, want []byte, iter int) bool {
	if len(got) != len(want) {
		return false
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], uint64(iter))
	n := min(8, len(got))
	return bytes.Equal(got[:n], w[:n]) && bytes.Equal(got[n:], want[n:])
}
