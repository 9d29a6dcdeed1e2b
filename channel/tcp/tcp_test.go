package tcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// TestTCPSendRecv: crossed sends of every size between three ranks,
// over links authenticated and not, and with every protection layer over
// authenticated links.
func TestTCPSendRecv(t *testing.T) {
	for _, auth := range []Auth{AuthOff, AuthOn} {
		for _, protect := range []string{"none", "checksum", "merkle"} {
			if auth == AuthOff && protect != "none" {
				continue // channel's own tests run the layers over TCP
			}
			t.Run(fmt.Sprintf("auth=%v/protect=%s", auth, protect), func(t *testing.T) {
				eps, _, err := startTxs(3, Config{Secret: []byte("test secret"), Auth: auth})
				comms := asComms(t, eps, err)
				for r, c := range comms {
					switch protect {
					case "checksum":
						comms[r], err = channel.WithChecksum(c)
					case "merkle":
						comms[r], err = channel.WithMerkle(c)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				sizes := []int{0, 1, 5000, 3*channel.MaxFrame + 1, 8 << 20}
				if protect != "none" {
					sizes = sizes[:4]
				}
				crossedSends(t, comms, sizes)
			})
		}
	}
}

func crossedSends(t *testing.T, comms []channel.Comm, sizes []int) {
	for _, size := range sizes {
		err := spmd(t, comms, func(ctx context.Context, c channel.Comm) error {
			// Everyone sends to everyone, then receives: crossed sends.
			for d := range c.Size() {
				if err := c.Send(ctx, d, 5, pattern(size, uint64(c.Rank()*10+d))); err != nil {
					return err
				}
			}
			buf := make([]byte, size)
			for range c.Size() {
				st, err := c.Recv(ctx, channel.AnySource, 5, buf)
				if err != nil {
					return err
				}
				if st.Len != size || !bytes.Equal(buf, pattern(size, uint64(st.Source*10+c.Rank()))) {
					return fmt.Errorf("from %d: wrong data", st.Source)
				}
			}
			return channel.Flush(ctx, c)
		})
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
	}
}

func TestTCPRefusesStrangers(t *testing.T) {
	// Another job's secret: refused, and the job does not form.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Connect(ctx, Config{Rank: 0, Size: 2, Listener: ln, Secret: []byte("ours")})
		done <- err
	}()
	_, err := Connect(ctx, Config{Rank: 1, Size: 2, Root: ln.Addr().String(), Secret: []byte("theirs")})
	if !errors.Is(err, channel.ErrUnauthenticated) {
		t.Errorf("a rank with another secret: %v", err)
	}
	// A stranger who connects and stays silent, then one who speaks
	// nonsense: neither counts, and the real rank still joins.
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	silent, _ := net.Dial("tcp", ln2.Addr().String())
	defer silent.Close()
	noisy, _ := net.Dial("tcp", ln2.Addr().String())
	noisy.Write(bytes.Repeat([]byte("GET / HTTP/1.1\r\n"), 10))
	defer noisy.Close()
	var eps [2]*channel.Endpoint
	var errs [2]error
	var wg sync.WaitGroup
	for r := range 2 {
		cfg := Config{Rank: r, Size: 2, Root: ln2.Addr().String(), Listener: ln2, Secret: []byte("s"), HandshakeTimeout: 500 * time.Millisecond}
		wg.Go(func() { eps[r], errs[r] = Connect(context.Background(), cfg) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("the job did not form beside strangers: %v %v", errs[0], errs[1])
	}
	eps[0].Close()
	eps[1].Close()
	<-done
	if _, err := Connect(ctx, Config{Rank: 1, Size: 2, Root: "127.0.0.1:1"}); !errors.Is(err, errNoSecret) {
		t.Errorf("no secret: %v", err)
	}
}

func TestTCPPeerDies(t *testing.T) {
	eps, err := startTCP(3, []byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	defer eps[0].Close()
	defer eps[2].Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Rank 1 dies in the middle of sending a large message to rank 0.
	got := make(chan error, 1)
	// (128 MiB take 40 ms or more here: the close comes well before.)
	const big = 128 << 20
	started := make(chan struct{})
	go func() {
		_, err := eps[0].Recv(ctx, 1, 0, make([]byte, big))
		got <- err
	}()
	go func() {
		data := make([]byte, big)
		close(started)
		eps[1].Send(ctx, 0, 0, data)
	}()
	<-started
	time.Sleep(5 * time.Millisecond)
	eps[1].Close()
	select {
	case err := <-got:
		if !errors.Is(err, channel.ErrPeerLost) {
			t.Errorf("receive from a dead peer: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("a receive from a dead peer hangs")
	}
	// Rank 2 learns of the death when its link reports it: an eager send
	// just before may still go into the socket's buffer. Soon every send
	// fails.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(time.Millisecond) {
		err := eps[2].Send(ctx, 1, 0, []byte("x"))
		if errors.Is(err, channel.ErrPeerLost) {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("send to a dead peer: %v", err)
		}
	}
	// The others still talk.
	if err := eps[2].Send(ctx, 0, 1, []byte("alive")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := eps[0].Recv(ctx, 2, 1, buf); err != nil || string(buf) != "alive" {
		t.Errorf("%q %v", buf, err)
	}
}

// A launcher starts ranks in any order: a rank that comes up before rank
// 0 listens keeps trying until it does (or its context ends).
func TestTCPRankBeforeRoot(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there for now
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secret := []byte("order")
	joined := make(chan error, 1)
	var ep1 *channel.Endpoint
	go func() {
		var err error
		ep1, err = Connect(ctx, Config{Rank: 1, Size: 2, Root: addr, Secret: secret})
		joined <- err
	}()
	time.Sleep(150 * time.Millisecond)
	ep0, err := Connect(ctx, Config{Rank: 0, Size: 2, Root: addr, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer ep0.Close()
	if err := <-joined; err != nil {
		t.Fatal(err)
	}
	defer ep1.Close()
	go ep1.Send(ctx, 0, 5, []byte("late"))
	buf := make([]byte, 4)
	if _, err := ep0.Recv(ctx, 1, 5, buf); err != nil || string(buf) != "late" {
		t.Fatalf("%q %v", buf, err)
	}
	// With no rank 0 at all, the joining ends with the context.
	short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := Connect(short, Config{Rank: 1, Size: 2, Root: addr, Secret: secret}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no rank 0: %v", err)
	}
}

// TestSilentStrangerDelaysNothing: connections that say nothing — to
// rank 0 while the job forms, and to the listener of a higher rank —
// hold nobody up: each handshake has its own deadline, and the job forms
// as soon as its own ranks are in, well within one handshake timeout.
func TestSilentStrangerDelaysNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var strangers []net.Conn
	defer func() {
		for _, c := range strangers {
			c.Close()
		}
	}()
	for range 5 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		strangers = append(strangers, c)
	}
	const n = 4
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	eps := make([]*channel.Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		cfg := Config{Rank: r, Size: n, Root: ln.Addr().String(), Secret: []byte("s"), HandshakeTimeout: 5 * time.Second}
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() { eps[r], errs[r] = Connect(ctx, cfg) })
	}
	wg.Wait()
	took := time.Since(start)
	for _, ep := range eps {
		if ep != nil {
			defer ep.Close()
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if took > 2*time.Second {
		t.Fatalf("the job took %v to form beside silent strangers (handshake timeout 5 s)", took)
	}
}

// TestTCPSendAfterCanceledWrite: a send canceled mid-write leaves its
// connection's write deadline in the past (watch); the next send, which
// first tries a write that does not wait (link.write), must set its
// own deadline before, or it fails — and breaks the link — at once. The
// fault campaign found that one: receives then waited on a broken link.
func TestTCPSendAfterCanceledWrite(t *testing.T) {
	eps, txs, err := startTxs(2, Config{Secret: []byte("deadline")})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps)
	tc := txs[0].conn(1)
	tc.wmu.Lock()
	tc.c.SetWriteDeadline(time.Now()) // as a canceled send's watch leaves it
	tc.wdl = time.Unix(1, 0)
	tc.wmu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 3 {
		msg := pattern(100, uint64(i))
		if err := eps[0].Send(ctx, 1, 1, msg); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		buf := make([]byte, len(msg))
		if _, err := eps[1].Recv(ctx, 0, 1, buf); err != nil || !bytes.Equal(buf, msg) {
			t.Fatalf("receive %d: %v", i, err)
		}
	}
}

// TestTCPWholeFrameWritesOnce: a frame the first, non-waiting write takes
// whole is done — even one without payload, whose empty payload is left
// over. Going on to a write of nothing armed the context's watch and, if
// the peer had read the frame and closed meanwhile (a barrier's last
// message), failed the send: sigcheck run's final barrier did, now and
// then. The watch leaves its mark on the connection's write deadline.
func TestTCPWholeFrameWritesOnce(t *testing.T) {
	eps, txs, err := startTxs(2, Config{Secret: []byte("once")})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc := txs[0].conn(1)
	for _, size := range []int{0, 1, 100} {
		if err := eps[0].Send(ctx, 1, 1, pattern(size, 1)); err != nil {
			t.Fatal(err)
		}
		tc.wmu.Lock()
		dl, _ := ctx.Deadline()
		armed := !tc.wdl.Equal(dl)
		tc.wmu.Unlock()
		if armed {
			t.Errorf("a frame of %d bytes taken whole went on to a second, watched write", size)
		}
		if _, err := eps[1].Recv(ctx, 0, 1, make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
}
