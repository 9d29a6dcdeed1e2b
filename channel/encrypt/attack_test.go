package encrypt

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// wire is an adversary on the network side of one rank: every frame that
// rank sends between nodes passes through hook, which says what to
// deliver instead (to which rank, which bytes), having seen the frames
// sent before.
type wire struct {
	channel.Comm
	mu   sync.Mutex
	sent []sentFrame
	hook func(w *wire, f sentFrame) []sentFrame
}

type sentFrame struct {
	dst, tag int
	data     []byte
}

func (w *wire) Send(ctx context.Context, dst, tag int, data []byte) error {
	if tag == tagSetup || w.hook == nil {
		return w.Comm.Send(ctx, dst, tag, data)
	}
	f := sentFrame{dst, tag, append([]byte(nil), data...)}
	w.mu.Lock()
	out := w.hook(w, f)
	w.sent = append(w.sent, f)
	w.mu.Unlock()
	for _, o := range out {
		if err := w.Comm.Send(ctx, o.dst, o.tag, o.data); err != nil {
			return err
		}
	}
	return nil
}

// runAttack runs calls all-gathers of alg on p ranks over n nodes (block)
// with the adversary on rank 0's wire, and returns each rank's error. It
// checks that no rank ever holds a wrong block: each block is the right
// one or never written (0xAA, or zeroed by a failed Open).
func runAttack(t *testing.T, p, n int, alg Algorithm, calls int, hook func(w *wire, f sentFrame) []sentFrame) []error {
	t.Helper()
	lay, err := NewLayout(p, n, Block)
	if err != nil {
		t.Fatal(err)
	}
	eps := endpoints(t, "local", p)
	w := &wire{}
	j := newJob(t, eps, lay, func(r int) []Option {
		if r != 0 {
			return nil
		}
		return []Option{func(o *options) {
			o.testHookWire = func(c channel.Comm) channel.Comm { w.Comm = c; return w }
		}}
	})
	w.hook = hook
	errs := make([]error, p)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	const m = 100
	for r := range p {
		wg.Go(func() {
			for call := range calls {
				recv := bytes.Repeat([]byte{0xAA}, p*m)
				_, err := j.gs[r].Run(ctx, alg, block(m, r, uint64(call)), recv)
				for o := range p {
					b := recv[o*m : (o+1)*m]
					if !bytes.Equal(b, block(m, o, uint64(call))) && !bytes.Equal(b, bytes.Repeat([]byte{0xAA}, m)) && !bytes.Equal(b, make([]byte, m)) {
						t.Errorf("rank %d, call %d: a wrong block of rank %d delivered", r, call, o)
					}
				}
				if err != nil {
					errs[r] = err
					cancel() // the others would wait for frames never coming
					return
				}
			}
		})
	}
	wg.Wait()
	return errs
}

func wantErr(t *testing.T, errs []error, victim int, target error) {
	t.Helper()
	if !errors.Is(errs[victim], target) {
		t.Fatalf("rank %d: got %v, want %v (all: %v)", victim, errs[victim], target, errs)
	}
	t.Logf("rank %d: %v", victim, errs[victim])
}

func TestTampered(t *testing.T) {
	for _, where := range []struct {
		name string
		off  func(n int) int
	}{
		{"ciphertext", func(n int) int { return n - 40 }},
		{"ciphertext tag", func(n int) int { return n - tagLen - 1 }},
		{"envelope tag", func(n int) int { return n - 1 }},
		{"header src", func(n int) int { return 8 }},
		{"header seq", func(n int) int { return 16 }},
		{"header counts", func(n int) int { return 45 }},
		{"table counter", func(n int) int { return hdrLen + 12 }},
	} {
		t.Run(where.name, func(t *testing.T) {
			// C-Ring, p=4 on 2 nodes: rank 0's only frame between nodes goes to rank 2.
			errs := runAttack(t, 4, 2, CRing, 1, func(w *wire, f sentFrame) []sentFrame {
				f.data[where.off(len(f.data))] ^= 0x10
				return []sentFrame{f}
			})
			if where.name == "header src" {
				// A source beyond the ranks does not parse (ErrFrame):
				// that or ErrAuth will do.
				if !errors.Is(errs[2], ErrAuth) && !errors.Is(errs[2], ErrFrame) {
					t.Fatalf("rank 2: %v", errs[2])
				}
				return
			}
			wantErr(t, errs, 2, ErrAuth)
		})
	}
}

func TestTamperedEveryAlgorithm(t *testing.T) {
	for _, a := range Algorithms() {
		rng := rand.New(rand.NewPCG(uint64(a), 1))
		n := 2
		if a == ORing {
			n = 8 // in block order rank 0 sends O-Ring's frames to rank 1, of its node
		}
		errs := runAttack(t, 8, n, a, 2, func(w *wire, f sentFrame) []sentFrame {
			f.data[hdrLen+rng.IntN(len(f.data)-hdrLen)] ^= 1 << rng.IntN(8)
			return []sentFrame{f}
		})
		hit := false
		for _, err := range errs {
			if errors.Is(err, ErrAuth) || errors.Is(err, ErrFrame) {
				hit = true
			}
		}
		if !hit {
			t.Errorf("%v: a flipped bit went unnoticed: %v", a.Title(), errs)
		}
	}
}

func TestReplayed(t *testing.T) {
	// The second all-gather's frame 0→2 is replaced by the first's.
	errs := runAttack(t, 4, 2, CRing, 2, func(w *wire, f sentFrame) []sentFrame {
		if len(w.sent) == 1 {
			return []sentFrame{w.sent[0]}
		}
		return []sentFrame{f}
	})
	wantErr(t, errs, 2, ErrReplay)
}

func TestReordered(t *testing.T) {
	// The first all-gather's frame 0→2 is held back and sent after the second's.
	errs := runAttack(t, 4, 2, CRing, 2, func(w *wire, f sentFrame) []sentFrame {
		if len(w.sent) == 0 {
			return nil
		}
		return []sentFrame{f, w.sent[0]}
	})
	wantErr(t, errs, 2, ErrReplay)
}

func TestRedirected(t *testing.T) {
	// Naive on 4 nodes of one rank: rank 0 sends to rank 1, then to rank
	// 2; the adversary delivers the frame meant for rank 1 to rank 2.
	errs := runAttack(t, 4, 4, Naive, 1, func(w *wire, f sentFrame) []sentFrame {
		if f.dst == 2 && len(w.sent) > 0 {
			return []sentFrame{{dst: 2, tag: f.tag, data: w.sent[0].data}}
		}
		return []sentFrame{f}
	})
	wantErr(t, errs, 2, ErrAuth)
}

func TestSwappedCiphertexts(t *testing.T) {
	// O-RD on 4 nodes of one rank: in its second step rank 0 forwards its
	// own and rank 1's ciphertexts to rank 2; the adversary swaps their
	// origins in the table (the envelope would catch it; so it also
	// recomputes nothing, and rank 2 must refuse).
	errs := runAttack(t, 4, 4, ORD, 1, func(w *wire, f sentFrame) []sentFrame {
		fr, err := DecodeFrame(f.data, Limits{Ranks: 4, Origins: 4})
		if err == nil && len(fr.Pieces) == 2 {
			fr.Pieces[0].Origins, fr.Pieces[1].Origins = fr.Pieces[1].Origins, fr.Pieces[0].Origins
			f.data = AppendFrame(nil, fr)
		}
		return []sentFrame{f}
	})
	wantErr(t, errs, 2, ErrAuth)
}

// keys gives rank 1 a wrong key for its link to rank 0.
type wrongKeys struct{ ep *channel.Endpoint }

func (k wrongKeys) LinkKey(peer int, label string) ([]byte, error) {
	key, err := k.ep.LinkKey(peer, label)
	if err == nil {
		key[0] ^= 1
	}
	return key, err
}

func TestWrongKey(t *testing.T) {
	lay, _ := NewLayout(4, 2, Block)
	eps := endpoints(t, "local", 4)
	nodes := NewNodes(lay)
	errs := make([]error, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			var keys KeySource = eps[r]
			if r == 1 {
				keys = wrongKeys{eps[r]}
			}
			_, errs[r] = New(ctx, eps[r], keys, lay, nodes[lay.Node(r)])
		})
	}
	wg.Wait()
	wantErr(t, errs, 1, ErrAuth)
	for _, r := range []int{0, 2, 3} {
		if errs[r] != nil {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

func TestLayoutDisagreement(t *testing.T) {
	a, _ := NewLayout(4, 2, Block)
	b, _ := NewLayout(4, 2, Cyclic)
	eps := endpoints(t, "local", 4)
	errs := make([]error, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	na, nb := NewNodes(a), NewNodes(b)
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			if r == 3 {
				_, errs[r] = New(ctx, eps[r], eps[r], b, nb[b.Node(r)])
			} else {
				_, errs[r] = New(ctx, eps[r], eps[r], a, na[a.Node(r)])
			}
		})
	}
	wg.Wait()
	wantErr(t, errs, 3, ErrLayout)
}

func TestNodeServesOneGatherer(t *testing.T) {
	lay, _ := NewLayout(2, 1, Block)
	eps := endpoints(t, "local", 2)
	nodes := NewNodes(lay)
	err := spmd(t, 2, func(ctx context.Context, r int) error {
		_, err := New(ctx, eps[r], eps[r], lay, nodes[0])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), eps[1], eps[1], lay, nodes[0]); !errors.Is(err, ErrLayout) {
		t.Fatalf("a second Gatherer on one Node: %v", err)
	}
}

// TestNewNeedsDuplicator: a Gatherer over a Comm it cannot duplicate is
// an error, not a panic (channel.Dup used to panic on it).
func TestNewNeedsDuplicator(t *testing.T) {
	lay, _ := NewLayout(2, 1, Block)
	eps := endpoints(t, "local", 2)
	nodes := NewNodes(lay)
	foreign := struct{ channel.Comm }{eps[0]} // a Comm of another package
	if _, err := New(context.Background(), foreign, eps[0], lay, nodes[0]); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("New over a %T: %v", foreign, err)
	}
}
