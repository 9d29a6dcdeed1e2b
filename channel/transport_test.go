package channel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/channeltest"
)

// pipeNet is a transport written outside the engine, with nothing but
// the exported boundary: frames are encoded as bytes, queued, and parsed
// by a goroutine per rank, as a transport over a real network would.
type pipeNet struct {
	frames []channel.Frames
	queues []chan []byte // per destination: header (with the source in front) and payload
	wg     sync.WaitGroup
	done   chan struct{} // closed when the test ends
	nBcast int           // calls of the native broadcast
	mu     sync.Mutex
}

type pipeTx struct {
	net  *pipeNet
	rank int
}

func (t *pipeTx) Send(ctx context.Context, dst int, h channel.Header, payload []byte) error {
	b := make([]byte, 1+channel.HeaderSize+len(payload))
	b[0] = byte(t.rank)
	h.Put(b[1:])
	copy(b[1+channel.HeaderSize:], payload)
	select {
	case t.net.queues[dst] <- b:
		return nil
	case <-t.net.done:
		return channel.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *pipeTx) Abort(peer int, err error) {}
func (t *pipeTx) Close() error              { return nil }

// pipeBcastTx also has a broadcast of its own.
type pipeBcastTx struct{ pipeTx }

func (t *pipeBcastTx) Bcast(ctx context.Context, root int, buf []byte) error {
	t.net.mu.Lock()
	t.net.nBcast++
	t.net.mu.Unlock()
	return channel.BinomialBcast(ctx, t.net.comm(t.rank), root, buf)
}

var pipeEps sync.Map // *pipeNet → []*channel.Endpoint, for pipeBcastTx

func (n *pipeNet) comm(r int) channel.Comm {
	v, _ := pipeEps.Load(n)
	return v.([]*channel.Endpoint)[r]
}

func newPipe(t *testing.T, size int, bcast bool, opts ...channel.TransportOption) []*channel.Endpoint {
	t.Helper()
	n := &pipeNet{frames: make([]channel.Frames, size), queues: make([]chan []byte, size), done: make(chan struct{})}
	eps := make([]*channel.Endpoint, size)
	for r := range size {
		n.queues[r] = make(chan []byte, 1024)
		ep, err := channel.NewEndpoint(r, size, func(f channel.Frames) (channel.Transport, error) {
			n.frames[r] = f
			if bcast {
				return &pipeBcastTx{pipeTx{n, r}}, nil
			}
			return &pipeTx{n, r}, nil
		}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		eps[r] = ep
	}
	pipeEps.Store(n, eps)
	for r := range size {
		n.wg.Go(func() {
			for {
				var b []byte
				select {
				case b = <-n.queues[r]:
				case <-n.done:
					return
				}
				src := int(b[0])
				h, err := channel.ParseHeader(b[1 : 1+channel.HeaderSize])
				if err == nil {
					payload := b[1+channel.HeaderSize:]
					err = n.frames[r].Deliver(src, h, func(p []byte) error {
						if len(payload) < len(p) {
							return fmt.Errorf("%w: short frame", channel.ErrProtocol)
						}
						payload = payload[copy(p, payload):]
						return nil
					})
				}
				if err != nil {
					n.frames[r].Lost(src, err)
				}
			}
		})
	}
	t.Cleanup(func() {
		close(n.done)
		n.wg.Wait()
		for r := range size {
			eps[r].Close()
		}
	})
	return eps
}

// TestTransportOutsideTheEngine: a transport built only from the
// exported boundary carries protected messages under injected faults,
// and the Merkle layer repairs every one.
func TestTransportOutsideTheEngine(t *testing.T) {
	eps := newPipe(t, 3, false, channel.WithInjector(&channel.Injector{Rate: 0.2, Seed: 7}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	comms := make([]channel.Comm, 3)
	for r, ep := range eps {
		l, err := channel.WithMerkle(ep, channel.Segment(1024))
		if err != nil {
			t.Fatal(err)
		}
		comms[r] = l
	}
	data := bytes.Repeat([]byte("sigcheck"), 40000)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for r, c := range comms {
		wg.Go(func() {
			if r == 0 {
				for i := range 20 {
					for dst := 1; dst < 3; dst++ {
						if err := c.Send(ctx, dst, 5, data[:len(data)-i*1000]); err != nil {
							errs[r] = err
							return
						}
					}
				}
				errs[r] = channel.Flush(ctx, c)
				return
			}
			buf := make([]byte, len(data))
			for i := range 20 {
				st, err := c.Recv(ctx, 0, 5, buf)
				if err == nil && (st.Len != len(data)-i*1000 || !bytes.Equal(buf[:st.Len], data[:st.Len])) {
					err = errors.New("delivered bytes differ from those sent")
				}
				if err != nil {
					errs[r] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if eps[0].Stats().Injected == 0 {
		t.Fatal("no fault was injected: the test proves nothing")
	}
}

// TestNativeCollectives: an Endpoint uses its transport's own broadcast
// when unprotected, and the layer's checked one when protected.
func TestNativeCollectives(t *testing.T) {
	eps := newPipe(t, 3, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run := func(comms []channel.Comm) {
		var wg sync.WaitGroup
		errs := make([]error, len(comms))
		for r, c := range comms {
			wg.Go(func() {
				buf := make([]byte, 100)
				if r == 1 {
					copy(buf, "from the root")
				}
				errs[r] = channel.Bcast(ctx, c, 1, buf)
				if errs[r] == nil && !bytes.HasPrefix(buf, []byte("from the root")) {
					errs[r] = fmt.Errorf("rank %d got %q", r, buf[:13])
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	n := findNet(eps)
	run([]channel.Comm{eps[0], eps[1], eps[2]})
	if n.nBcast != 3 {
		t.Fatalf("the transport's broadcast ran on %d ranks of 3", n.nBcast)
	}
	layers := make([]channel.Comm, 3)
	for r, ep := range eps {
		layers[r], _ = channel.WithMerkle(ep)
	}
	run(layers)
	if n.nBcast != 3 {
		t.Fatal("a protected broadcast went through the transport's own")
	}
}

func findNet(eps []*channel.Endpoint) *pipeNet {
	var found *pipeNet
	pipeEps.Range(func(k, v any) bool {
		if v.([]*channel.Endpoint)[0] == eps[0] {
			found = k.(*pipeNet)
		}
		return true
	})
	return found
}

// TestLostWhileOpening: a transport may report a peer lost from inside
// its constructor (a link that failed to come up); the endpoint then
// fails what needs that peer instead of panicking.
func TestLostWhileOpening(t *testing.T) {
	ep, err := channel.NewEndpoint(0, 2, func(f channel.Frames) (channel.Transport, error) {
		f.Lost(1, errors.New("never came up"))
		return &pipeTx{&pipeNet{done: make(chan struct{})}, 0}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	_, err = ep.Recv(context.Background(), 1, 0, nil)
	var pe *channel.PeerError
	if !errors.As(err, &pe) || pe.Rank != 1 {
		t.Fatalf("receive from a peer lost while opening: %v", err)
	}
}

// countTx is a wrapper that counts the frames its rank sends, and loses
// the first data frame it sees if drop is set.
type countTx struct {
	channel.Transport
	rank    int
	mu      *sync.Mutex
	frames  map[int]int // by sending rank
	drop    bool
	dropped bool
}

func (t *countTx) Send(ctx context.Context, dst int, h channel.Header, p []byte) error {
	t.mu.Lock()
	t.frames[t.rank]++
	lose := t.drop && !t.dropped && len(p) > 0
	t.dropped = t.dropped || lose
	t.mu.Unlock()
	if lose {
		return nil
	}
	return t.Transport.Send(ctx, dst, h, p)
}

// TestTransportWrapper: every frame a rank sends goes through the
// wrapper made for that rank; a wrapped endpoint does not use its
// transport's native collectives (the wrapper would not see them); and
// a wrapper that loses a frame is a fault like any other, which the
// Merkle layer repairs.
func TestTransportWrapper(t *testing.T) {
	var mu sync.Mutex
	frames := map[int]int{}
	var made []int
	wrap := func(drop bool) channel.TransportOption {
		return channel.WithTransportWrapper(func(rank int, tx channel.Transport) channel.Transport {
			mu.Lock()
			made = append(made, rank)
			mu.Unlock()
			return &countTx{Transport: tx, rank: rank, mu: &mu, frames: frames, drop: drop}
		})
	}
	eps := newPipe(t, 3, true, wrap(false))
	if fmt.Sprint(made) != "[0 1 2]" {
		t.Fatalf("wrappers made for ranks %v, want [0 1 2]", made)
	}
	err := channeltest.Run(t, 3, 10*time.Second, nil, func(ctx context.Context, r int) error {
		buf := make([]byte, 1000)
		if r == 2 {
			copy(buf, "bcast")
		}
		return channel.Bcast(ctx, eps[r], 2, buf)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := findNet(eps).nBcast; n != 0 {
		t.Fatalf("a wrapped endpoint used its transport's broadcast (%d ranks)", n)
	}
	mu.Lock()
	if frames[2] < 2 {
		t.Fatalf("the root's wrapper saw %d frames of a broadcast to 2 ranks", frames[2])
	}
	mu.Unlock()

	eps = newPipe(t, 2, false, wrap(true))
	a, _ := channel.WithMerkle(eps[0])
	b, _ := channel.WithMerkle(eps[1])
	msg := bytes.Repeat([]byte("wrapped "), 20000)
	err = channeltest.Run(t, 2, 10*time.Second, nil, func(ctx context.Context, r int) error {
		if r == 0 {
			return a.Send(ctx, 1, 7, msg)
		}
		buf := make([]byte, len(msg))
		if _, err := b.Recv(ctx, 0, 7, buf); err != nil {
			return err
		}
		if !bytes.Equal(buf, msg) {
			return errors.New("the message arrived damaged")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	_, err = channel.NewEndpoint(0, 1, func(f channel.Frames) (channel.Transport, error) { return &pipeTx{}, nil },
		channel.WithTransportWrapper(func(int, channel.Transport) channel.Transport { return nil }))
	if err == nil {
		t.Fatal("a wrapper that returned no transport made an endpoint")
	}
}
