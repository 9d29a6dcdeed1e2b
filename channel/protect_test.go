package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

type protCase struct {
	P, Size, Mode, Seg int
	Rate               float64
	Seed               uint64
}

var modeNames = []string{"checksum", "merkle", "merkle+parity"}

func protGen() gopter.Gen {
	return gopter.CombineGens(gen.IntRange(2, 5), gen.IntRange(0, 600_000), gen.IntRange(0, 2),
		gen.OneConstOf(64, 1000, 2048), gen.OneConstOf(0.0, 0.01, 0.05, 0.2), gen.UInt64()).
		Map(func(v []any) protCase {
			return protCase{P: v[0].(int), Size: v[1].(int), Mode: v[2].(int), Seg: v[3].(int), Rate: v[4].(float64), Seed: v[5].(uint64)}
		})
}

// protect wraps every endpoint in the case's protection.
func (c protCase) protect(t testing.TB, eps []*Endpoint) []Comm {
	comms := make([]Comm, len(eps))
	for i, ep := range eps {
		var l Comm
		var err error
		switch c.Mode {
		case 0:
			l, err = WithChecksum(ep, Chunk(max(1, c.Seg*8)))
		case 1:
			l, err = WithMerkle(ep, Segment(c.Seg))
		default:
			l, err = WithMerkle(ep, Segment(c.Seg), Parity(2))
		}
		if err != nil {
			t.Fatal(err)
		}
		comms[i] = l
	}
	return comms
}

// exchange runs a ring of point-to-point messages, a broadcast and an
// all-gather, and checks every byte every rank got.
func exchange(t testing.TB, c protCase, comms []Comm) error {
	return spmd(t, comms, func(ctx context.Context, cm Comm) error {
		r, p := cm.Rank(), cm.Size()
		mine := pattern(c.Size, c.Seed+uint64(r))
		got := make([]byte, c.Size+7) // longer than the message: legal
		rr := Irecv(ctx, cm, (r-1+p)%p, 3, got)
		if err := cm.Send(ctx, (r+1)%p, 3, mine); err != nil {
			return fmt.Errorf("send: %w", err)
		}
		st, err := rr.Wait()
		if err != nil {
			return fmt.Errorf("recv: %w", err)
		}
		if st.Len != c.Size || st.Tag != 3 || st.Source != (r-1+p)%p || !bytes.Equal(got[:c.Size], pattern(c.Size, c.Seed+uint64((r-1+p)%p))) {
			return fmt.Errorf("ring: %+v, data equal %v", st, bytes.Equal(got[:c.Size], pattern(c.Size, c.Seed+uint64((r-1+p)%p))))
		}
		n := c.Size / p
		buf := make([]byte, n)
		if r == 0 {
			copy(buf, mine)
		}
		if err := Bcast(ctx, cm, 0, buf); err != nil {
			return fmt.Errorf("bcast: %w", err)
		}
		if !bytes.Equal(buf, pattern(c.Size, c.Seed)[:n]) {
			return errors.New("bcast: wrong data")
		}
		all := make([]byte, p*n)
		if err := Allgather(ctx, cm, mine[:n], all); err != nil {
			return fmt.Errorf("allgather: %w", err)
		}
		for i := range p {
			if !bytes.Equal(all[i*n:(i+1)*n], pattern(c.Size, c.Seed+uint64(i))[:n]) {
				return fmt.Errorf("allgather: rank %d's block wrong", i)
			}
		}
		// Eager sends may still be hearing from their receivers: wait,
		// so that the counters are final.
		if err := Flush(ctx, cm); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
		return nil
	})
}

// checkCounts: every corrupted frame was caught, and all were repaired.
func checkCounts(eps []*Endpoint) error {
	var s Stats
	for _, ep := range eps {
		x := ep.Stats()
		s.Injected += x.Injected
		s.Detected += x.Detected
		s.Unrepaired += x.Unrepaired
	}
	if s.Detected != s.Injected || s.Unrepaired != 0 {
		return fmt.Errorf("injected %d, detected %d, unrepaired %d", s.Injected, s.Detected, s.Unrepaired)
	}
	return nil
}

// protectedExchange runs exchange on c's layers over eps (a transport
// with c's injector), checks the counts, closes eps, and says what went
// wrong ("" if nothing): a gopter property's answer.
func protectedExchange(t *testing.T, c protCase, eps []*Endpoint, err error) string {
	if err != nil {
		return err.Error()
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	if err := exchange(t, c, c.protect(t, eps)); err != nil {
		return fmt.Sprintf("%+v (%s): %v", c, modeNames[c.Mode], err)
	}
	if err := checkCounts(eps); err != nil {
		return fmt.Sprintf("%+v (%s): %v", c, modeNames[c.Mode], err)
	}
	return ""
}

func TestProtectedUnderCorruption(t *testing.T) {
	props := gopter.NewProperties(params(80))
	props.Property("whatever is corrupted, every rank gets exactly what was sent", prop.ForAll(func(c protCase) string {
		eps, err := NewLocal(c.P, WithInjector(&Injector{Rate: c.Rate, Seed: c.Seed}))
		return protectedExchange(t, c, eps, err)
	}, protGen()))
	props.TestingRun(t)
}

func TestProtectedOverTCP(t *testing.T) {
	props := gopter.NewProperties(params(12))
	props.Property("the same over TCP", prop.ForAll(func(c protCase) string {
		eps, err := startTCPWith(c.P, []byte("s"), &Injector{Rate: c.Rate, Seed: c.Seed})
		return protectedExchange(t, c, eps, err)
	}, protGen()))
	props.TestingRun(t)
}

// Unprotected, the same faults go through: the test above is not vacuous.
func TestUnprotectedCorruptionGoesThrough(t *testing.T) {
	eps, _ := NewLocal(2, WithInjector(&Injector{Rate: 1, Seed: 1}))
	defer eps[0].Close()
	defer eps[1].Close()
	ctx := context.Background()
	msg := pattern(10_000, 1)
	go eps[0].Send(ctx, 1, 0, msg)
	got := make([]byte, len(msg))
	if _, err := eps[1].Recv(ctx, 0, 0, got); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, msg) {
		t.Error("a flipped bit arrived unchanged")
	}
}

// A link that corrupts everything: both ends give up with ErrCorrupted
// after a bounded exchange, neither hangs. An eager send (up to
// EagerLimit bytes) has returned by then: the receiver reports the
// failure, and the sender's Flush.
func TestHopelessLink(t *testing.T) {
	for mode := range 3 {
		for _, size := range []int{50_000, EagerLimit + 1000} {
			c := protCase{P: 2, Size: size, Mode: mode, Seg: 1000}
			eps, _ := NewLocal(2, WithInjector(&Injector{Rate: 1, Seed: 5}))
			comms := c.protect(t, eps)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			sent := make(chan error, 1)
			go func() { sent <- comms[0].Send(ctx, 1, 0, pattern(c.Size, 1)) }()
			_, err := comms[1].Recv(ctx, 0, 0, make([]byte, c.Size))
			if !errors.Is(err, ErrCorrupted) {
				t.Errorf("%s, %d bytes: receive: %v", modeNames[mode], size, err)
			}
			err = <-sent
			if size > EagerLimit {
				if !errors.Is(err, ErrCorrupted) {
					t.Errorf("%s, %d bytes: send: %v", modeNames[mode], size, err)
				}
			} else {
				if err != nil {
					t.Errorf("%s, %d bytes: eager send: %v", modeNames[mode], size, err)
				}
				if err := Flush(ctx, comms[0]); !errors.Is(err, ErrCorrupted) {
					t.Errorf("%s, %d bytes: Flush after an eager send that failed: %v", modeNames[mode], size, err)
				}
				if err := Flush(ctx, comms[0]); err != nil {
					t.Errorf("%s, %d bytes: a second Flush: %v", modeNames[mode], size, err)
				}
				if n := eps[0].Stats().Unrepaired; n != 1 {
					t.Errorf("%s, %d bytes: the sender counts %d unrepaired", modeNames[mode], size, n)
				}
			}
			cancel()
			eps[0].Close()
			eps[1].Close()
		}
	}
}

// Frames dropped, duplicated or cut short: an error on both sides (the
// link breaks), never a panic, a hang or wrong data.
func TestBrokenFrames(t *testing.T) {
	for _, f := range []Fault{Drop, Duplicate, Truncate} {
		for mode := range 3 {
			for _, transport := range []string{"local", "tcp"} {
				c := protCase{P: 2, Size: 600_000, Mode: mode, Seg: 2048}
				inj := &Injector{Rate: 0.3, Seed: 9, Fault: f}
				var eps []*Endpoint
				var err error
				if transport == "local" {
					eps, err = NewLocal(2, WithInjector(inj))
				} else {
					eps, err = startTCPWith(2, []byte("s"), inj)
				}
				if err != nil {
					t.Fatal(err)
				}
				comms := c.protect(t, eps)
				// A lost frame (which TCP never loses: a bug or a hostile
				// peer) leaves both sides waiting for the other, until the
				// context's deadline.
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				errs := make(chan error, 2)
				got := make([]byte, c.Size)
				go func() { errs <- comms[0].Send(ctx, 1, 0, pattern(c.Size, 1)) }()
				go func() { _, err := comms[1].Recv(ctx, 0, 0, got); errs <- err }()
				e1, e2 := <-errs, <-errs
				if e1 == nil && e2 == nil && !bytes.Equal(got, pattern(c.Size, 1)) {
					t.Errorf("%s %s %s: wrong data delivered without an error", f, modeNames[mode], transport)
				}
				cancel()
				for _, ep := range eps {
					ep.Close()
				}
			}
		}
	}
}

// Corruption inside a rank that forwards a block (in its memory, after
// the wire checks): the end-to-end checks of a Merkle layer's collectives
// catch it against the owner's root and repair only that rank.
func TestEndToEndCollectives(t *testing.T) {
	defer func() { testHookCorrupt = nil }()
	for _, size := range []int{5000, 400_000} { // Bruck and ring all-gathers
		eps, _ := NewLocal(5)
		c := protCase{P: 5, Size: size, Mode: 1, Seg: 1000}
		comms := c.protect(t, eps)
		var once sync.Once
		testHookCorrupt = func(cm Comm, b []byte) {
			if cm.Rank() == 2 && len(b) > 10 {
				once.Do(func() { b[len(b)/2] ^= 0x40 })
			}
		}
		if err := exchange(t, c, comms); err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		var s Stats
		for _, ep := range eps {
			x := ep.Stats()
			s.Detected += x.Detected
			s.Repaired += x.Repaired
			ep.Close()
		}
		if s.Detected == 0 || s.Repaired == 0 {
			t.Errorf("%d bytes: the in-memory corruption went unnoticed: %+v", size, s)
		}
		// Without the end-to-end checks (a checksum layer), it goes through.
		eps, _ = NewLocal(5)
		c.Mode = 0
		once = sync.Once{}
		var wrong atomic.Int32
		err := spmd(t, c.protect(t, eps), func(ctx context.Context, cm Comm) error {
			buf := make([]byte, size)
			if cm.Rank() == 0 {
				copy(buf, pattern(size, 1))
			}
			if err := Bcast(ctx, cm, 0, buf); err != nil {
				return err
			}
			if !bytes.Equal(buf, pattern(size, 1)) {
				wrong.Add(1)
			}
			return nil
		})
		if err != nil || wrong.Load() == 0 {
			t.Errorf("%d bytes: a checksum layer caught an in-memory corruption (%v)", size, err)
		}
		for _, ep := range eps {
			ep.Close()
		}
	}
}

// A layer is created without talking to the other ranks, so a message on
// it can reach a rank that has not created it yet: it waits there (and is
// checked once the layer exists) instead of going through unprotected and
// leaving its sender waiting for a verdict.
func TestLayerCreatedLate(t *testing.T) {
	for _, transport := range []string{"local", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			var eps []*Endpoint
			var err error
			if transport == "local" {
				eps, err = NewLocal(3)
			} else {
				eps, err = startTCP(3, []byte("late"))
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, ep := range eps {
					ep.Close()
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			data := pattern(300<<10, 9)
			errs := make(chan error, 3)
			for r, ep := range eps {
				go func() {
					if r != 0 {
						time.Sleep(time.Duration(r) * 50 * time.Millisecond) // rank 0 sends first
					}
					ck, err := WithChecksum(ep)
					if err != nil {
						errs <- err
						return
					}
					mk, err := WithMerkle(ep)
					if err != nil {
						errs <- err
						return
					}
					for i, c := range []Comm{ck, mk} {
						if err := Barrier(ctx, c); err != nil {
							errs <- fmt.Errorf("rank %d, layer %d: %w", r, i, err)
							return
						}
						buf := make([]byte, len(data))
						if r == 0 {
							buf = data
						}
						if err := Bcast(ctx, c, 0, buf); err != nil {
							errs <- fmt.Errorf("rank %d, layer %d: %w", r, i, err)
							return
						}
						if !bytes.Equal(buf, data) {
							errs <- fmt.Errorf("rank %d, layer %d: wrong data", r, i)
							return
						}
					}
					errs <- nil
				}()
			}
			for range eps {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// An eager send returns before its verdict: the caller may overwrite its
// buffer at once, and whatever the link corrupts must still be repaired
// from the bytes that were sent, never from what the buffer holds now.
// (Send copies the message only when the verdict is not in by the time
// its frames are out; over TCP that is nearly always, in process never.)
func TestEagerBufferReuse(t *testing.T) {
	props := gopter.NewProperties(params(20))
	props.Property("a reused eager buffer never leaks into a repair", prop.ForAll(func(c protCase, tcp bool) string {
		inj := &Injector{Rate: max(c.Rate, 0.05), Seed: c.Seed}
		var eps []*Endpoint
		var err error
		if tcp {
			eps, err = startTCPWith(2, []byte("s"), inj)
		} else {
			eps, err = NewLocal(2, WithInjector(inj))
		}
		if err != nil {
			return err.Error()
		}
		defer func() {
			for _, ep := range eps {
				ep.Close()
			}
		}()
		comms := c.protect(t, eps)
		const msgs = 20
		size := c.Size % (EagerLimit + 1)
		err = spmd(t, comms, func(ctx context.Context, cm Comm) error {
			buf := make([]byte, size)
			for i := range msgs {
				want := pattern(size, c.Seed+uint64(i))
				if cm.Rank() == 0 {
					copy(buf, want)
					if err := cm.Send(ctx, 1, 5, buf); err != nil {
						return fmt.Errorf("send %d: %w", i, err)
					}
					for k := range buf {
						buf[k] = ^want[k] // every bit a repair could take from here is wrong
					}
					continue
				}
				if _, err := cm.Recv(ctx, 0, 5, buf); err != nil {
					return fmt.Errorf("recv %d: %w", i, err)
				}
				if !bytes.Equal(buf, want) {
					return fmt.Errorf("message %d of %d bytes differs from what was sent", i, size)
				}
			}
			return Flush(ctx, cm)
		})
		if err == nil {
			err = checkCounts(eps)
		}
		if err != nil {
			return fmt.Sprintf("%+v (%s, tcp %v): %v", c, modeNames[c.Mode], tcp, err)
		}
		return ""
	}, protGen(), gen.Bool()))
	props.TestingRun(t)
}
