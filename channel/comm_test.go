package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// spmd runs fn on every rank at once, as an MPI program does, and returns
// the ranks' errors joined. Every test gets a deadline: a hang fails.
func spmd(t testing.TB, comms []Comm, fn func(ctx context.Context, c Comm) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for i, c := range comms {
		wg.Go(func() {
			if err := fn(ctx, c); err != nil {
				errs[i] = fmt.Errorf("rank %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func local(t testing.TB, n int) []Comm {
	t.Helper()
	eps, err := NewLocal(n)
	return asComms(t, eps, err)
}

// asComms returns a transport's endpoints as Comms, closed when the test
// ends.
func asComms(t testing.TB, eps []*Endpoint, err error) []Comm {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	comms := make([]Comm, len(eps))
	for i, ep := range eps {
		comms[i] = ep
		t.Cleanup(func() { ep.Close() })
	}
	return comms
}

func closeAll(eps []*Endpoint) {
	for _, ep := range eps {
		ep.Close()
	}
}

func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 99))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestSendRecv(t *testing.T) {
	for _, size := range []int{0, 1, 1000, MaxFrame, MaxFrame + 1, 3*MaxFrame + 17} {
		comms := local(t, 2)
		msg := pattern(size, uint64(size))
		err := spmd(t, comms, func(ctx context.Context, c Comm) error {
			if c.Rank() == 0 {
				return c.Send(ctx, 1, 7, msg)
			}
			buf := make([]byte, size+10) // a receive longer than the message is legal
			st, err := c.Recv(ctx, AnySource, AnyTag, buf)
			if err != nil {
				return err
			}
			if st != (Status{Source: 0, Tag: 7, Len: size}) || !bytes.Equal(buf[:size], msg) {
				return fmt.Errorf("got %+v, data equal %v", st, bytes.Equal(buf[:size], msg))
			}
			return nil
		})
		if err != nil {
			t.Errorf("%d bytes: %v", size, err)
		}
	}
}

// Both orders: the receive posted before the message (bytes written
// straight into its buffer) and after (the message waits in its own).
func TestPostedAndUnexpected(t *testing.T) {
	for _, first := range []string{"recv", "send"} {
		comms := local(t, 2)
		msg := pattern(2*MaxFrame+5, 3)
		posted := make(chan struct{})
		sent := make(chan struct{})
		err := spmd(t, comms, func(ctx context.Context, c Comm) error {
			if c.Rank() == 0 {
				if first == "recv" {
					<-posted
					time.Sleep(10 * time.Millisecond)
				}
				err := c.Send(ctx, 1, 1, msg)
				close(sent)
				return err
			}
			buf := make([]byte, len(msg))
			if first == "send" {
				<-sent
			} else {
				close(posted)
			}
			if _, err := c.Recv(ctx, 0, 1, buf); err != nil {
				return err
			}
			if !bytes.Equal(buf, msg) {
				return errors.New("data differs")
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s first: %v", first, err)
		}
	}
}

func TestNonOvertakingAndTags(t *testing.T) {
	comms := local(t, 3)
	err := spmd(t, comms, func(ctx context.Context, c Comm) error {
		switch c.Rank() {
		case 0, 1:
			for i := range 100 {
				if err := c.Send(ctx, 2, i%3, []byte{byte(c.Rank()), byte(i)}); err != nil {
					return err
				}
			}
			// A reserved tag (the package's protocols' view): only a
			// receive naming it takes it.
			return sys(c).Send(ctx, 2, ReservedTag+5, []byte{9})
		}
		next := [2][3]int{{0, 1, 2}, {0, 1, 2}} // the next message expected per source and tag
		for range 200 {
			buf := make([]byte, 2)
			st, err := c.Recv(ctx, AnySource, AnyTag, buf)
			if err != nil {
				return err
			}
			src, i := int(buf[0]), int(buf[1])
			if st.Source != src || st.Tag != i%3 || st.Len != 2 {
				return fmt.Errorf("status %+v for message %d of rank %d", st, i, src)
			}
			// Per source and tag, messages come in the order sent.
			if want := next[src][i%3]; i != want {
				return fmt.Errorf("rank %d tag %d: message %d before %d", src, i%3, i, want)
			}
			next[src][i%3] = i + 3
		}
		ctx2, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := c.Recv(ctx2, AnySource, AnyTag, make([]byte, 2)); !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("AnyTag took a reserved-tag message: %v", err)
		}
		for src := range 2 {
			if _, err := sys(c).Recv(ctx, src, ReservedTag+5, make([]byte, 1)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReservedTagsRefused: a user's Send or Recv on a reserved tag is an
// error on every Comm of the package (before, an unprotected or checksum
// Bcast then delivered the user's message as the broadcast's data).
func TestReservedTagsRefused(t *testing.T) {
	comms := local(t, 2)
	ctx := context.Background()
	m, err := WithMerkle(comms[0])
	must(t, err)
	k, err := WithChecksum(comms[0])
	must(t, err)
	for _, c := range []Comm{comms[0], m, k, Dup(comms[0].(Duplicator))} {
		for _, tag := range []int{ReservedTag, ReservedTag + 2, 1<<31 - 1} {
			if err := c.Send(ctx, 1, tag, []byte{1}); !errors.Is(err, ErrTag) {
				t.Errorf("%T: Send on tag %d: %v", c, tag, err)
			}
			if _, err := c.Recv(ctx, 1, tag, nil); !errors.Is(err, ErrTag) {
				t.Errorf("%T: Recv on tag %d: %v", c, tag, err)
			}
			if _, err := Irecv(ctx, c, 1, tag, nil).Wait(); !errors.Is(err, ErrTag) {
				t.Errorf("%T: Irecv on tag %d: %v", c, tag, err)
			}
		}
	}
	tc := WithTypes(comms[0], nil)
	if err := tc.Send(ctx, 1, ReservedTag, []byte{1}, nil, 0); !errors.Is(err, ErrTag) {
		t.Errorf("Typed: Send on a reserved tag: %v", err)
	}
}

// Two ranks that send to each other and then receive: eager sends make
// this safe at every size (the reference library deadlocks or truncates).
func TestCrossedSends(t *testing.T) {
	for _, size := range []int{0, 100, 4 << 20} {
		comms := local(t, 2)
		err := spmd(t, comms, func(ctx context.Context, c Comm) error {
			mine := pattern(size, uint64(c.Rank()))
			if err := c.Send(ctx, 1-c.Rank(), 0, mine); err != nil {
				return err
			}
			buf := make([]byte, size)
			if _, err := c.Recv(ctx, 1-c.Rank(), 0, buf); err != nil {
				return err
			}
			if !bytes.Equal(buf, pattern(size, uint64(1-c.Rank()))) {
				return errors.New("data differs")
			}
			return nil
		})
		if err != nil {
			t.Errorf("%d bytes: %v", size, err)
		}
	}
}

func TestErrors(t *testing.T) {
	comms := local(t, 2)
	ctx := context.Background()
	c := comms[0]
	if err := c.Send(ctx, 2, 0, nil); !errors.Is(err, ErrRank) {
		t.Errorf("send to rank 2 of 2: %v", err)
	}
	if err := c.Send(ctx, 1, -1, nil); !errors.Is(err, ErrTag) {
		t.Errorf("tag -1: %v", err)
	}
	if _, err := c.Recv(ctx, 5, 0, nil); !errors.Is(err, ErrRank) {
		t.Errorf("recv from 5: %v", err)
	}
	// Truncation: the receive says how long the message was.
	comms[1].Send(ctx, 0, 3, make([]byte, 100))
	st, err := c.Recv(ctx, 1, 3, make([]byte, 10))
	if !errors.Is(err, ErrTruncated) || st.Len != 100 {
		t.Errorf("truncation: %+v %v", st, err)
	}
	// A posted receive too short: the same, and the link still works.
	done := make(chan error)
	go func() { _, err := c.Recv(ctx, 1, 4, make([]byte, 10)); done <- err }()
	time.Sleep(10 * time.Millisecond)
	comms[1].Send(ctx, 0, 4, make([]byte, 3*MaxFrame))
	if err := <-done; !errors.Is(err, ErrTruncated) {
		t.Errorf("posted truncation: %v", err)
	}
	comms[1].Send(ctx, 0, 5, []byte("after"))
	buf := make([]byte, 5)
	if _, err := c.Recv(ctx, 1, 5, buf); err != nil || string(buf) != "after" {
		t.Errorf("after a truncation: %q %v", buf, err)
	}
	// A canceled receive leaves no trace: the message goes to the next one.
	ctx2, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	if _, err := c.Recv(ctx2, 1, 6, buf); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
	cancel()
	comms[1].Send(ctx, 0, 6, []byte("again"))
	if _, err := c.Recv(ctx, 1, 6, buf); err != nil || string(buf) != "again" {
		t.Errorf("after a canceled receive: %q %v", buf, err)
	}
}

func TestPeerLost(t *testing.T) {
	eps, _ := NewLocal(3)
	ctx := context.Background()
	eps[1].Send(ctx, 0, 0, []byte("before")) // sent before closing: still received
	waiting := make(chan error, 2)
	go func() { _, err := eps[0].Recv(ctx, 1, 9, nil); waiting <- err }()
	go func() { _, err := eps[2].Recv(ctx, AnySource, 9, nil); waiting <- err }()
	time.Sleep(10 * time.Millisecond)
	eps[1].Close()
	for range 2 {
		if err := <-waiting; !errors.Is(err, ErrPeerLost) {
			t.Errorf("waiting receive: %v", err)
		}
	}
	var pe *PeerError
	if err := eps[0].Send(ctx, 1, 0, nil); !errors.As(err, &pe) || pe.Rank != 1 {
		t.Errorf("send to a closed rank: %v", err)
	}
	buf := make([]byte, 6)
	if _, err := eps[0].Recv(ctx, 1, 0, buf); err != nil || string(buf) != "before" {
		t.Errorf("message sent before the close: %q %v", buf, err)
	}
	if _, err := eps[0].Recv(ctx, 1, 0, buf); !errors.Is(err, ErrPeerLost) {
		t.Errorf("receive from a closed rank: %v", err)
	}
	if _, err := eps[1].Recv(ctx, 0, 0, buf); !errors.Is(err, ErrClosed) {
		t.Errorf("receive on a closed endpoint: %v", err)
	}
	eps[0].Close()
	eps[2].Close()
}

// A posted receive is waited for by whoever asks first: Wait on its own
// goroutine, or Done, which must close without any Wait (a select on
// Done is how a Go program waits for one of several). A receive whose
// context ends before its message comes is withdrawn by that first
// wait, and the message then goes to the next receive. Over TCP too,
// where Isend of a small message sends it before returning.
func TestRequestWaitedLazily(t *testing.T) {
	for _, tcp := range []bool{false, true} {
		var eps []*Endpoint
		var err error
		if tcp {
			eps, err = startTCP(2, []byte("lazy"))
		} else {
			eps, err = NewLocal(2)
		}
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		// Done alone.
		buf := make([]byte, 5)
		r := Irecv(ctx, eps[1], 0, 1, buf)
		s := Isend(ctx, eps[0], 1, 1, []byte("hello"))
		select {
		case <-r.Done():
		case <-ctx.Done():
			t.Fatalf("tcp=%v: Done never closed", tcp)
		}
		if st, err := r.Wait(); err != nil || st.Len != 5 || string(buf) != "hello" {
			t.Fatalf("tcp=%v: %v %v %q", tcp, st, err, buf)
		}
		if _, err := s.Wait(); err != nil {
			t.Fatal(err)
		}
		// A receive whose context ended is withdrawn by its Wait; the
		// message goes to the receive after it.
		dead, kill := context.WithCancel(ctx)
		r1 := Irecv(dead, eps[1], 0, 2, make([]byte, 5))
		kill()
		if _, err := r1.Wait(); !errors.Is(err, context.Canceled) {
			t.Fatalf("tcp=%v: a withdrawn receive: %v", tcp, err)
		}
		if err := eps[0].Send(ctx, 1, 2, []byte("world")); err != nil {
			t.Fatal(err)
		}
		if _, err := eps[1].Recv(ctx, 0, 2, buf); err != nil || string(buf) != "world" {
			t.Fatalf("tcp=%v: after the withdrawn receive: %v %q", tcp, err, buf)
		}
		// One nobody waits for is withdrawn all the same when its
		// context ends: the next message goes to the next receive.
		dead2, kill2 := context.WithCancel(ctx)
		lost := make([]byte, 5)
		Irecv(dead2, eps[1], 0, 3, lost)
		kill2()
		for e, until := eps[1].e, time.Now().Add(5*time.Second); ; time.Sleep(time.Millisecond) {
			e.mu.Lock()
			n := len(e.posted)
			e.mu.Unlock()
			if n == 0 {
				break // withdrawn (on a goroutine of its own)
			}
			if time.Now().After(until) {
				t.Fatalf("tcp=%v: a receive whose context ended is still posted", tcp)
			}
		}
		if err := eps[0].Send(ctx, 1, 3, []byte("again")); err != nil {
			t.Fatal(err)
		}
		if _, err := eps[1].Recv(ctx, 0, 3, buf); err != nil || string(buf) != "again" || string(lost) == "again" {
			t.Fatalf("tcp=%v: after a receive dropped unwaited: %v %q (the dropped one holds %q)", tcp, err, buf, lost)
		}
		cancel()
		closeAll(eps)
	}
}
