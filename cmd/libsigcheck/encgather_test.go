package main

// The encrypted all-gather's schedules, run between goroutines: a wire of
// channels and a node's memory that is a Go slice stand for MPI's
// messages and shared-memory window, so that every algorithm is checked
// on many layouts in a fraction of a second, without MPI. The MPI tests
// (encrypt_test.go) run the same code inside real programs.

import (
	"bytes"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel/encrypt"
)

var errTestDeadline = errors.New("test deadline, or another rank failed")

// chanWire is rank's end of a job's channels: box[src][dst].
type chanWire struct {
	rank int
	box  [][]chan []byte
	quit <-chan struct{}
}

func (w chanWire) send(dst int, out []byte, tag int) error {
	select {
	case w.box[w.rank][dst] <- bytes.Clone(out):
		return nil
	case <-w.quit:
		return errTestDeadline
	}
}

func (w chanWire) recv(src int, in []byte, tag int) (int, error) {
	select {
	case b := <-w.box[src][w.rank]:
		if len(b) > len(in) {
			return 0, fmt.Errorf("truncated: a message of %d bytes for %d", len(b), len(in))
		}
		return copy(in, b), nil
	case <-w.quit:
		return 0, errTestDeadline
	}
}

func (w chanWire) sendrecv(dst int, out []byte, src int, in []byte, tag int) (int, error) {
	if err := w.send(dst, out, tag); err != nil {
		return 0, err
	}
	return w.recv(src, in, tag)
}

// sliceNode is one node's shared memory and barrier.
type sliceNode struct {
	mu      sync.Mutex
	cond    *sync.Cond
	size    int
	arrived int
	gen     uint64
	buf     []byte
	quit    <-chan struct{}
}

// sliceMem is one rank's view of its node.
type sliceMem struct {
	n     *sliceNode
	local int
	view  []byte
}

func (s *sliceMem) barrier() error {
	n := s.n
	n.mu.Lock()
	defer n.mu.Unlock()
	gen := n.gen
	if n.arrived++; n.arrived == n.size {
		n.arrived = 0
		n.gen++
		n.cond.Broadcast()
		return nil
	}
	for n.gen == gen {
		select {
		case <-n.quit:
			return errTestDeadline
		default:
		}
		n.cond.Wait()
	}
	return nil
}

func (s *sliceMem) yield() error {
	select {
	case <-s.n.quit:
		return errTestDeadline
	default:
	}
	runtime.Gosched()
	return nil
}

func (s *sliceMem) mem(size int) ([]byte, error) {
	if len(s.view) >= size {
		return s.view, nil
	}
	// As the MPI window grows: nobody uses the old memory any more once
	// every rank has asked for more.
	if err := s.barrier(); err != nil {
		return nil, err
	}
	if s.local == 0 {
		s.n.buf = make([]byte, size)
	}
	if err := s.barrier(); err != nil {
		return nil, err
	}
	s.view = s.n.buf
	return s.view, nil
}

// testJob is p ranks of a layout, each with its group.
type testJob struct {
	lay    encrypt.Layout
	groups []*encGroup
	stats  *encStats
	quit   chan struct{}
	stop   func() // ends every wait: a rank failed, or the deadline came
}

func newTestJob(t testing.TB, lay encrypt.Layout) *testJob {
	t.Helper()
	p := lay.Size()
	key := make([]byte, encrypt.KeyLen)
	crand.Read(key)
	quit := make(chan struct{})
	stop := sync.OnceFunc(func() { close(quit) })
	timer := time.AfterFunc(20*time.Second, stop)
	t.Cleanup(func() { timer.Stop() })
	box := make([][]chan []byte, p)
	for i := range box {
		box[i] = make([]chan []byte, p)
		for j := range box[i] {
			box[i][j] = make(chan []byte, 64)
		}
	}
	nodes := make([]*sliceNode, lay.Nodes())
	for k := range nodes {
		nodes[k] = &sliceNode{size: len(lay.Ranks(k)), quit: quit}
		nodes[k].cond = sync.NewCond(&nodes[k].mu)
		// A barrier stuck at the deadline is woken to see it.
		n := nodes[k]
		go func() {
			<-quit
			n.mu.Lock()
			n.cond.Broadcast()
			n.mu.Unlock()
		}()
	}
	prefix := make([]uint32, p)
	for r := range prefix {
		prefix[r] = uint32(1000 + 3*r) // world ranks need not be the communicator's
	}
	j := &testJob{lay: lay, groups: make([]*encGroup, p), stats: &encStats{}, quit: quit, stop: stop}
	for r := range p {
		aead, err := encrypt.NewAEAD(key)
		if err != nil {
			t.Fatal(err)
		}
		j.groups[r] = &encGroup{w: chanWire{rank: r, box: box, quit: quit},
			node: &sliceMem{n: nodes[lay.Node(r)], local: lay.Local(r)},
			rank: r, p: p, lay: lay, aead: aead, prefix: prefix, ctr: new(atomic.Uint64), stats: j.stats}
	}
	return j
}

// allgather runs one all-gather of m bytes a rank on every rank at once,
// rank r's block filled from (r, m, round), and checks what each got.
func (j *testJob) allgather(t testing.TB, a encrypt.Algorithm, m, round int) []error {
	t.Helper()
	p := j.lay.Size()
	want := make([]byte, p*m)
	for r := range p {
		fill(want[r*m:(r+1)*m], r, m, round)
	}
	errs := make([]error, p)
	recvs := make([][]byte, p)
	var wg sync.WaitGroup
	for r, g := range j.groups {
		recvs[r] = make([]byte, p*m)
		wg.Go(func() {
			alg := a
			if alg == encrypt.Auto {
				alg = encrypt.Choose(j.lay, m)
			}
			errs[r] = g.run(alg, want[r*m:(r+1)*m], recvs[r])
			if errs[r] != nil {
				j.stop() // the others would wait for it forever
			}
		})
	}
	wg.Wait()
	for r := range p {
		if errs[r] == nil && !bytes.Equal(recvs[r], want) {
			errs[r] = fmt.Errorf("rank %d: wrong data", r)
		}
	}
	return errs
}

func fill(b []byte, r, m, round int) {
	for i := range b {
		b[i] = byte(r*131 + i*7 + m + round*17)
	}
}

func layouts(t *testing.T) []encrypt.Layout {
	t.Helper()
	var out []encrypt.Layout
	for _, c := range []struct {
		p, n int
		m    encrypt.Mapping
	}{{4, 2, encrypt.Block}, {7, 2, encrypt.Block}, {8, 2, encrypt.Cyclic}, {5, 5, encrypt.Block},
		{6, 3, encrypt.Cyclic}, {8, 4, encrypt.Block}, {2, 2, encrypt.Block}, {9, 2, encrypt.Cyclic}} {
		lay, err := encrypt.NewLayout(c.p, c.n, c.m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, lay)
	}
	return out
}

func TestEncAllgatherEveryAlgorithm(t *testing.T) {
	algs := append([]encrypt.Algorithm{encrypt.Auto}, encrypt.Algorithms()...)
	for _, lay := range layouts(t) {
		for _, a := range algs {
			t.Run(fmt.Sprintf("%v/%v", lay, a), func(t *testing.T) {
				t.Parallel()
				j := newTestJob(t, lay)
				// Sizes that grow and shrink, so that HS's shared memory
				// grows while the halves' contents move.
				for round, m := range []int{1, 13, 1000, 40000, 7, 1000} {
					if err := errors.Join(j.allgather(t, a, m, round)...); err != nil {
						t.Fatalf("m=%d: %v", m, err)
					}
				}
			})
		}
	}
}

// Every seal of a job, whatever its algorithm, takes a nonce that no
// other seal under the same key took.
func TestEncNoncesNeverRepeat(t *testing.T) {
	lay, _ := encrypt.NewLayout(8, 2, encrypt.Block)
	j := newTestJob(t, lay)
	var mu sync.Mutex
	seen := map[[12]byte]bool{}
	dup := 0
	for _, g := range j.groups {
		g.testHookNonce = func(n []byte) {
			mu.Lock()
			defer mu.Unlock()
			if seen[[12]byte(n)] {
				dup++
			}
			seen[[12]byte(n)] = true
		}
	}
	for round, a := range append(encrypt.Algorithms(), encrypt.Algorithms()...) {
		if err := errors.Join(j.allgather(t, a, 100+round, round)...); err != nil {
			t.Fatal(err)
		}
	}
	if dup != 0 || len(seen) < 100 {
		t.Errorf("%d nonces, %d of them again", len(seen), dup)
	}
}

// A byte flipped in any ciphertext between nodes fails authentication
// where it is opened, for every algorithm; with onTamper the all-gather
// goes on and the tampered blocks arrive as zeros.
func TestEncTamperDetected(t *testing.T) {
	lay, _ := encrypt.NewLayout(6, 2, encrypt.Block)
	for _, a := range encrypt.Algorithms() {
		for _, report := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/report=%v", a, report), func(t *testing.T) {
				t.Parallel()
				j := newTestJob(t, lay)
				var tampered, reported atomic.Int64
				for _, g := range j.groups {
					g.testHookTamper = func(f *encrypt.Frame) {
						for _, pc := range f.Pieces {
							if pc.Sealed && tampered.Add(1) == 1 {
								pc.Data[len(pc.Data)/2] ^= 0x40
							}
						}
					}
					if report {
						g.onTamper = func([]int, int) { reported.Add(1) }
					}
				}
				errs := j.allgather(t, a, 64, 0)
				failed := 0
				for _, err := range errs {
					if err != nil {
						failed++
						if !report && !errors.Is(err, errTampered) && !errors.Is(err, errProtocol) && !errors.Is(err, errTestDeadline) {
							t.Errorf("%v", err)
						}
					}
				}
				switch {
				case tampered.Load() == 0:
					t.Fatal("no ciphertext crossed between nodes")
				case !report && (failed == 0 || j.stats.tampered.Load() == 0):
					t.Errorf("%d ranks failed, %d ciphertexts failed to open: want the tampering found", failed, j.stats.tampered.Load())
				case report && (reported.Load() == 0 || failed == 0):
					t.Errorf("report mode: %d reported, %d ranks with wrong data: want both", reported.Load(), failed)
				}
			})
		}
	}
}

// BenchmarkEncAllgather is one small all-gather of every rank, between
// goroutines: what the engine allocates and spends beside the transport.
func BenchmarkEncAllgather(b *testing.B) {
	for _, a := range []encrypt.Algorithm{encrypt.HS1, encrypt.HS2, encrypt.ORD, encrypt.CRD} {
		b.Run(a.String(), func(b *testing.B) {
			lay, _ := encrypt.NewLayout(4, 2, encrypt.Block)
			j := newTestJob(b, lay)
			b.ReportAllocs()
			for b.Loop() {
				if err := errors.Join(j.allgather(b, a, 8, 0)...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// corruptWire alters random bytes of some messages in transit: whatever
// it does, every rank either fails or has the right data, and none
// panics.
type corruptWire struct {
	chanWire
	rng *rand.Rand
}

func (w corruptWire) send(dst int, out []byte, tag int) error {
	b := bytes.Clone(out)
	if w.rng.IntN(3) == 0 {
		for range 1 + w.rng.IntN(4) {
			b[w.rng.IntN(len(b))] ^= byte(1 + w.rng.IntN(255))
		}
	}
	return w.chanWire.send(dst, b, tag)
}

func (w corruptWire) sendrecv(dst int, out []byte, src int, in []byte, tag int) (int, error) {
	if err := w.send(dst, out, tag); err != nil {
		return 0, err
	}
	return w.recv(src, in, tag)
}

func TestEncCorruptFramesNeverPanic(t *testing.T) {
	lay, _ := encrypt.NewLayout(6, 3, encrypt.Cyclic)
	for seed := range uint64(40) {
		a := encrypt.Algorithms()[seed%8]
		t.Run(fmt.Sprintf("%v/seed=%d", a, seed), func(t *testing.T) {
			t.Parallel()
			j := newTestJob(t, lay)
			for r, g := range j.groups {
				g.w = corruptWire{chanWire: g.w.(chanWire), rng: rand.New(rand.NewPCG(seed, uint64(r)))}
			}
			for _, err := range j.allgather(t, a, 1+int(seed)*37, 0) {
				if err != nil && !errors.Is(err, errTampered) && !errors.Is(err, errProtocol) && !errors.Is(err, errTestDeadline) {
					t.Errorf("%v", err)
				}
			}
		})
	}
}
