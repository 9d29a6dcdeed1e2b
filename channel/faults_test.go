package channel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/channeltest"
)

// Tests over transports written for them on the exported boundary, each
// doing one thing to frames that a real link may do (lose or overtake an
// opener, stall mid-frame, duplicate an answer), at the moment a test
// needs it.

// lossyNet delivers frames in process, in the sender's goroutine, except
// the opening frames a test picks: those it drops (once) or holds back
// until the link's next frame has gone (a reorder).
type lossyNet struct {
	frames  []channel.Frames
	mu      sync.Mutex
	links   map[[2]int]*sync.Mutex
	openers int            // openers seen from rank 0 to rank 1
	fate    map[int]string // by opener number: "drop" or "hold"
	held    map[[2]int]*heldFrame
}

type heldFrame struct {
	h channel.Header
	p []byte
}

type lossyTx struct {
	n    *lossyNet
	rank int
}

func (t *lossyTx) Send(ctx context.Context, dst int, h channel.Header, p []byte) error {
	n := t.n
	n.mu.Lock()
	l := n.links[[2]int{t.rank, dst}]
	if l == nil {
		l = &sync.Mutex{}
		n.links[[2]int{t.rank, dst}] = l
	}
	fate := ""
	if t.rank == 0 && dst == 1 && h.Kind == 1 { // wire.KindMsg: an opener
		fate = n.fate[n.openers]
		delete(n.fate, n.openers) // a resent opener goes through
		n.openers++
	}
	n.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	out := []heldFrame{{h, bytes.Clone(p)}}
	switch fate {
	case "drop":
		return nil
	case "hold":
		n.mu.Lock()
		if n.held[[2]int{t.rank, dst}] == nil {
			n.held[[2]int{t.rank, dst}] = &out[0]
			out = nil
		}
		n.mu.Unlock()
	}
	n.mu.Lock()
	if hf := n.held[[2]int{t.rank, dst}]; hf != nil && out != nil {
		out = append(out, *hf)
		delete(n.held, [2]int{t.rank, dst})
	}
	n.mu.Unlock()
	for _, f := range out {
		q := f.p
		err := n.frames[dst].Deliver(t.rank, f.h, func(b []byte) error {
			q = q[copy(b, q):]
			return nil
		})
		if err != nil {
			n.frames[dst].Lost(t.rank, err)
			n.frames[t.rank].Lost(dst, err)
			return err
		}
	}
	return nil
}

func (t *lossyTx) Abort(peer int, err error) {}
func (t *lossyTx) Close() error              { return nil }

// TestOrderAfterLostOpeners: whichever openers of a run of small protected
// messages (one frame each) are lost or overtaken by the next frame, the
// receiver matches the messages in the order they were sent — the lost
// ones come again after the sender's probe, and those behind them wait.
func TestOrderAfterLostOpeners(t *testing.T) {
	type run struct {
		N     int
		Fates []int // per opener: 0 through, 1 dropped, 2 held back
		Merk  bool
	}
	g := gopter.CombineGens(gen.IntRange(2, 8), gen.SliceOfN(8, gen.IntRange(0, 2)), gen.Bool()).
		Map(func(v []any) run { return run{v[0].(int), v[1].([]int), v[2].(bool)} })
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = 60
	if testing.Short() {
		p.MinSuccessfulTests = 12
	}
	props := gopter.NewProperties(p)
	props.Property("messages are matched in the order sent", prop.ForAll(func(r run) string {
		n := &lossyNet{links: map[[2]int]*sync.Mutex{}, fate: map[int]string{}, held: map[[2]int]*heldFrame{}}
		for i, f := range r.Fates[:r.N] {
			switch f {
			case 1:
				n.fate[i] = "drop"
			case 2:
				n.fate[i] = "hold"
			}
		}
		n.frames = make([]channel.Frames, 2)
		comms := make([]channel.Comm, 2)
		for rank := range 2 {
			ep, err := channel.NewEndpoint(rank, 2, func(f channel.Frames) (channel.Transport, error) {
				n.frames[rank] = f
				return &lossyTx{n, rank}, nil
			}, channel.WithProbe(5*time.Millisecond))
			if err != nil {
				return err.Error()
			}
			defer ep.Close()
			if r.Merk {
				comms[rank], err = channel.WithMerkle(ep)
			} else {
				comms[rank], err = channel.WithChecksum(ep)
			}
			if err != nil {
				return err.Error()
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		msg := func(i int) []byte { return bytes.Repeat([]byte{byte(i + 1)}, 10+i) }
		for i := range r.N {
			if err := comms[0].Send(ctx, 1, 7, msg(i)); err != nil {
				return fmt.Sprintf("%+v: send %d: %v", r, i, err)
			}
		}
		for i := range r.N {
			buf := make([]byte, 64)
			st, err := comms[1].Recv(ctx, 0, 7, buf)
			if err != nil {
				return fmt.Sprintf("%+v: receive %d: %v", r, i, err)
			}
			if !bytes.Equal(buf[:st.Len], msg(i)) {
				return fmt.Sprintf("%+v: receive %d got message %d", r, i, int(buf[0])-1)
			}
		}
		if err := channel.Flush(ctx, comms[0]); err != nil {
			return fmt.Sprintf("%+v: flush: %v", r, err)
		}
		return ""
	}, g))
	props.TestingRun(t)
}

// stallTx delivers in process; the test holds the payload of one frame
// half written.
type stallTx struct {
	frames []channel.Frames
	rank   int
	stall  func(h channel.Header) bool
	in     chan struct{} // a stalled frame is half written
	out    chan struct{} // and may go on
}

func (t *stallTx) Send(ctx context.Context, dst int, h channel.Header, p []byte) error {
	stall := t.stall(h)
	return t.frames[dst].Deliver(t.rank, h, func(b []byte) error {
		if stall && len(p) > 1 {
			stall = false // once, in the frame's first piece
			b[0] = p[0]
			t.in <- struct{}{}
			<-t.out
		}
		copy(b, p)
		p = p[len(b):]
		return nil
	})
}

func (t *stallTx) Abort(peer int, err error) {}
func (t *stallTx) Close() error              { return nil }

// stallPair makes two ranks over stallTx, each under layer; rank 0's
// frames stall where stall says (tx.in, then tx.out).
func stallPair(t *testing.T, stall func(channel.Header) bool, layer func(*channel.Endpoint) (channel.Comm, error)) (comms []channel.Comm, frames []channel.Frames, tx *stallTx) {
	frames = make([]channel.Frames, 2)
	tx = &stallTx{frames: frames, rank: 0, stall: stall, in: make(chan struct{}), out: make(chan struct{})}
	txs := []*stallTx{tx, {frames: frames, rank: 1, stall: func(channel.Header) bool { return false }}}
	comms = make([]channel.Comm, 2)
	for rank := range 2 {
		ep, err := channel.NewEndpoint(rank, 2, func(f channel.Frames) (channel.Transport, error) {
			frames[rank] = f
			return txs[rank], nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ep.Close() })
		if comms[rank], err = layer(ep); err != nil {
			t.Fatal(err)
		}
	}
	return comms, frames, tx
}

// TestPeerLostWhileFrameComes: the link to a peer is reported lost while
// a frame of its message, which no receive has taken yet, is being
// written into the message's own buffer. The buffer stays the writer's
// until it is done (no panic, no write into freed memory), and the
// receive fails with the peer lost.
func TestPeerLostWhileFrameComes(t *testing.T) {
	first := true
	comms, frames, tx := stallPair(t, func(h channel.Header) bool { // its second frame (wire.KindData)
		stall := first && h.Kind == 2
		first = first && !stall
		return stall
	}, func(ep *channel.Endpoint) (channel.Comm, error) { return channel.WithChecksum(ep, channel.Chunk(1024)) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sent := make(chan error, 1)
	go func() { sent <- comms[0].Send(ctx, 1, 1, bytes.Repeat([]byte("abcdefgh"), 512)) }()
	<-tx.in // the second frame is half written into the message's own buffer
	frames[1].Lost(0, errors.New("the test cut the link"))
	close(tx.out)
	<-sent
	if _, err := comms[1].Recv(ctx, 0, 1, make([]byte, 4096)); !errors.Is(err, channel.ErrPeerLost) {
		t.Fatalf("receive after the peer was lost: %v", err)
	}
}

// TestReceivePostedMidMessage: a receive posted while its message is
// coming (its first frames in the message's own buffer) gets the rest
// straight into its buffer after the bytes that came before; what it
// returns is the message, under every layer.
func TestReceivePostedMidMessage(t *testing.T) {
	for _, layer := range []string{"none", "checksum", "merkle"} {
		t.Run(layer, func(t *testing.T) {
			data := 0
			comms, _, tx := stallPair(t, func(h channel.Header) bool { // its third frame (the second after the opener)
				if h.Kind == 2 { // wire.KindData
					data++
				}
				return h.Kind == 2 && data == 2
			}, func(ep *channel.Endpoint) (channel.Comm, error) {
				switch layer {
				case "checksum":
					return channel.WithChecksum(ep, channel.Chunk(1024))
				case "merkle":
					return channel.WithMerkle(ep, channel.Segment(256), channel.Chunk(1024))
				}
				return ep, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			msg := make([]byte, 5*channel.MaxFrame-5) // five frames or more
			for i := range msg {
				msg[i] = byte(i*7 + i>>8)
			}
			sent := make(chan error, 1)
			go func() { sent <- comms[0].Send(ctx, 1, 1, msg) }()
			<-tx.in // two frames in the message's own buffer, the third half written
			got := make(chan error, 1)
			buf := make([]byte, len(msg))
			go func() {
				_, err := comms[1].Recv(ctx, 0, 1, buf)
				got <- err
			}()
			time.Sleep(20 * time.Millisecond) // the receive is posted
			close(tx.out)
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, msg) {
				t.Fatal("the receive returned other bytes than were sent")
			}
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// dupTx delivers in process, in the sender's goroutine; from rank 0 it
// flips a byte of the first frame and sends every descent answer twice.
type dupTx struct {
	frames  []channel.Frames
	rank    int
	flipped bool
}

func (t *dupTx) Send(ctx context.Context, dst int, h channel.Header, p []byte) error {
	n := 1
	if t.rank == 0 {
		if h.Kind == 1 && !t.flipped && len(p) > 100 { // wire.KindMsg
			p = bytes.Clone(p)
			p[100] ^= 1
			t.flipped = true
		}
		if h.Kind == 5 { // wire.KindAnswer
			n = 2
		}
	}
	for range n {
		q := p
		if err := t.frames[dst].Deliver(t.rank, h, func(b []byte) error {
			q = q[copy(b, q):]
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func (t *dupTx) Abort(peer int, err error) {}
func (t *dupTx) Close() error              { return nil }

// TestDuplicatedLastAnswer: the answer that ends a Merkle descent comes
// twice. The second, to a question already answered, is dropped; it used
// to be applied to a descent that had ended, which failed the message
// (the campaign's seed 80819).
func TestDuplicatedLastAnswer(t *testing.T) {
	frames := make([]channel.Frames, 2)
	comms := make([]channel.Comm, 2)
	for rank := range 2 {
		ep, err := channel.NewEndpoint(rank, 2, func(f channel.Frames) (channel.Transport, error) {
			frames[rank] = f
			return &dupTx{frames: frames, rank: rank}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		defer ep.Close()
		if comms[rank], err = channel.WithMerkle(ep, channel.Segment(64)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	sent := make(chan error, 1)
	go func() { sent <- comms[0].Send(ctx, 1, 1, msg) }()
	buf := make([]byte, len(msg))
	if _, err := comms[1].Recv(ctx, 0, 1, buf); err != nil {
		t.Fatalf("receive: %v", err)
	}
	if !bytes.Equal(buf, msg) {
		t.Fatal("the receive returned other bytes than were sent")
	}
	if err := <-sent; err != nil {
		t.Fatalf("send: %v", err)
	}
	if st := channel.StatsOf(comms[1]); st.Detected == 0 || st.Repaired == 0 {
		t.Fatalf("no descent: %+v", st)
	}
}

// muteTx loses every frame its rank sends.
type muteTx struct{ channel.Transport }

func (muteTx) Send(context.Context, int, channel.Header, []byte) error { return nil }

// TestSilentReceiver: a receiver that gets a protected message whole but
// whose every word back is lost (its verdicts, its answers to the
// probes) leaves its sender with ErrSilent after the probes — not
// ErrCorrupted, since nothing says the data came damaged — while its
// receive succeeds. A blocking send returns it, an eager one's Flush.
func TestSilentReceiver(t *testing.T) {
	for _, size := range []int{1000, channel.EagerLimit + 1} {
		eps, err := channel.NewLocal(2, channel.WithProbe(2*time.Millisecond),
			channel.WithTransportWrapper(func(rank int, tx channel.Transport) channel.Transport {
				if rank == 1 {
					return muteTx{tx}
				}
				return tx
			}))
		if err != nil {
			t.Fatal(err)
		}
		a, _ := channel.WithChecksum(eps[0])
		b, _ := channel.WithChecksum(eps[1])
		msg := bytes.Repeat([]byte{7}, size)
		err = channeltest.Run(t, 2, 20*time.Second, nil, func(ctx context.Context, r int) error {
			if r == 1 {
				buf := make([]byte, size)
				if _, err := b.Recv(ctx, 0, 1, buf); err != nil || !bytes.Equal(buf, msg) {
					return fmt.Errorf("the receive: %v", err)
				}
				return nil
			}
			err := a.Send(ctx, 1, 1, msg)
			if err == nil {
				err = channel.Flush(ctx, a)
			}
			if !errors.Is(err, channel.ErrSilent) || errors.Is(err, channel.ErrCorrupted) {
				return fmt.Errorf("%d bytes: the sender ended with %v, want ErrSilent", size, err)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		for _, ep := range eps {
			ep.Close()
		}
	}
}
