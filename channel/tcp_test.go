package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// tcpRanks starts n ranks over loopback TCP in this process.
func tcpRanks(t testing.TB, n int) []Comm {
	t.Helper()
	eps, err := startTCP(n, []byte("test secret"))
	return asComms(t, eps, err)
}

func startTCP(n int, secret []byte) ([]*Endpoint, error) { return startTCPWith(n, secret, nil) }

// checksummedTCP starts two ranks over loopback TCP with topts and wraps
// each in WithChecksum(opts...); they close when the test ends.
func checksummedTCP(t *testing.T, secret string, topts []TransportOption, opts ...Option) ([]*Endpoint, []Comm) {
	t.Helper()
	eps, err := startTCPWithOpts(2, []byte(secret), topts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeAll(eps) })
	comms := make([]Comm, 2)
	for r, ep := range eps {
		if comms[r], err = WithChecksum(ep, opts...); err != nil {
			t.Fatal(err)
		}
	}
	return eps, comms
}

func startTCPWith(n int, secret []byte, inj *Injector) ([]*Endpoint, error) {
	return startTCPWithOpts(n, secret, WithInjector(inj))
}

func startTCPWithOpts(n int, secret []byte, opts ...TransportOption) ([]*Endpoint, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return ConnectLoopback(ctx, n, TCPConfig{Secret: secret, Options: opts})
}

func TestTCPSendRecv(t *testing.T) {
	comms := tcpRanks(t, 3)
	for _, size := range []int{0, 1, 5000, 3*MaxFrame + 1, 8 << 20} {
		err := spmd(t, comms, func(ctx context.Context, c Comm) error {
			// Everyone sends to everyone, then receives: crossed sends.
			for d := range c.Size() {
				if err := c.Send(ctx, d, 5, pattern(size, uint64(c.Rank()*10+d))); err != nil {
					return err
				}
			}
			buf := make([]byte, size)
			for range c.Size() {
				st, err := c.Recv(ctx, AnySource, 5, buf)
				if err != nil {
					return err
				}
				if st.Len != size || !bytes.Equal(buf, pattern(size, uint64(st.Source*10+c.Rank()))) {
					return fmt.Errorf("from %d: wrong data", st.Source)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
	}
}

func TestCollectivesTCP(t *testing.T) {
	props := gopter.NewProperties(params(20))
	props.Property("every rank gets exactly the right data over TCP", prop.ForAll(func(c collCase) string {
		if err := checkCollectives(t, c, tcpRanks(t, c.P)); err != nil {
			return fmt.Sprintf("%+v: %v", c, err)
		}
		return ""
	}, collGen()))
	props.TestingRun(t)
}

func TestTCPRefusesStrangers(t *testing.T) {
	// Another job's secret: refused, and the job does not form.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := ConnectTCP(ctx, TCPConfig{Rank: 0, Size: 2, Listener: ln, Secret: []byte("ours")})
		done <- err
	}()
	_, err := ConnectTCP(ctx, TCPConfig{Rank: 1, Size: 2, Root: ln.Addr().String(), Secret: []byte("theirs")})
	if !errors.Is(err, ErrUnauthenticated) {
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
	var eps [2]*Endpoint
	var errs [2]error
	var wg sync.WaitGroup
	for r := range 2 {
		cfg := TCPConfig{Rank: r, Size: 2, Root: ln2.Addr().String(), Listener: ln2, Secret: []byte("s"), HandshakeTimeout: 500 * time.Millisecond}
		wg.Go(func() { eps[r], errs[r] = ConnectTCP(context.Background(), cfg) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("the job did not form beside strangers: %v %v", errs[0], errs[1])
	}
	eps[0].Close()
	eps[1].Close()
	<-done
	if _, err := ConnectTCP(ctx, TCPConfig{Rank: 1, Size: 2, Root: "127.0.0.1:1"}); !errors.Is(err, errNoSecret) {
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
		if !errors.Is(err, ErrPeerLost) {
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
		if errors.Is(err, ErrPeerLost) {
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
	var ep1 *Endpoint
	go func() {
		var err error
		ep1, err = ConnectTCP(ctx, TCPConfig{Rank: 1, Size: 2, Root: addr, Secret: secret})
		joined <- err
	}()
	time.Sleep(150 * time.Millisecond)
	ep0, err := ConnectTCP(ctx, TCPConfig{Rank: 0, Size: 2, Root: addr, Secret: secret})
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
	if _, err := ConnectTCP(short, TCPConfig{Rank: 1, Size: 2, Root: addr, Secret: secret}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no rank 0: %v", err)
	}
}

// TestLinkKeys: both ends of a link derive the same key, other links and
// labels another one, and a new job new keys (the handshake's nonces).
func TestLinkKeys(t *testing.T) {
	for name, start := range map[string]func() ([]*Endpoint, error){
		"local": func() ([]*Endpoint, error) { return NewLocal(3) },
		"tcp":   func() ([]*Endpoint, error) { return startTCP(3, []byte("s")) },
	} {
		t.Run(name, func(t *testing.T) {
			job := func() [][]byte {
				eps, err := start()
				asComms(t, eps, err)
				key := func(a, b int, label string) []byte {
					k, err := eps[a].LinkKey(b, label)
					if err != nil || len(k) != 32 {
						t.Fatalf("LinkKey(%d→%d): %x %v", a, b, k, err)
					}
					return k
				}
				k01 := key(0, 1, "gcm")
				if !bytes.Equal(k01, key(1, 0, "gcm")) {
					t.Fatal("the two ends of a link derive different keys")
				}
				for _, other := range [][]byte{key(0, 2, "gcm"), key(1, 2, "gcm"), key(0, 1, "mac")} {
					if bytes.Equal(k01, other) {
						t.Fatal("two links or labels share a key")
					}
				}
				if _, err := eps[0].LinkKey(0, "gcm"); err == nil {
					t.Fatal("a key for the link to itself")
				}
				if _, err := eps[0].LinkKey(3, "gcm"); !errors.Is(err, ErrRank) {
					t.Fatalf("rank 3 of 3: %v", err)
				}
				return [][]byte{k01}
			}
			if bytes.Equal(job()[0], job()[0]) {
				t.Fatal("two jobs derived the same key")
			}
		})
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
	eps := make([]*Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		cfg := TCPConfig{Rank: r, Size: n, Root: ln.Addr().String(), Secret: []byte("s"), HandshakeTimeout: 5 * time.Second}
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() { eps[r], errs[r] = ConnectTCP(ctx, cfg) })
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

// TestTCPSenderReadsItsVerdict: a blocking protected send over TCP reads
// its receiver's link itself while it waits for the verdict (pending.next),
// and still probes on time when the verdict is lost: the probe's timer
// must cut the read it is blocked in, since nothing else will come over
// that link until the sender asks. Rank 1's verdicts are dropped at random;
// every send must end verified, within the test's deadline, and the data
// arrive whole.
func TestTCPSenderReadsItsVerdict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eps, err := ConnectLoopback(ctx, 2, TCPConfig{Secret: []byte("verdict"),
		Injector: &Injector{Rate: 0.3, Seed: 5, Fault: Drop, Ranks: []int{1}},
		Options:  []TransportOption{WithProbe(5 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	for _, mode := range []string{"checksum", "merkle"} {
		comms := make([]Comm, 2)
		for r, ep := range eps {
			if mode == "checksum" {
				comms[r], err = WithChecksum(ep)
			} else {
				comms[r], err = WithMerkle(ep)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		const n, size = 20, EagerLimit + 1 // blocking sends: they await their verdicts
		before := eps[1].Stats().Injected
		err := spmd(t, comms, func(ctx context.Context, c Comm) error {
			buf := make([]byte, size)
			for i := range n {
				msg := pattern(size, uint64(i))
				if c.Rank() == 0 {
					if err := c.Send(ctx, 1, 3, msg); err != nil {
						return fmt.Errorf("send %d: %w", i, err)
					}
					continue
				}
				if _, err := c.Recv(ctx, 0, 3, buf); err != nil {
					return fmt.Errorf("receive %d: %w", i, err)
				}
				if !bytes.Equal(buf, msg) {
					return fmt.Errorf("message %d: wrong data", i)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if eps[1].Stats().Injected == before {
			t.Fatalf("%s: no verdict was dropped: the test checks nothing", mode)
		}
	}
}

// TestHeldVerdicts: over TCP a receiver's OK for a small protected
// message goes in the same write as its next frame to the sender (the
// reply of a ping-pong); a receiver that then sends nothing and waits for
// nothing still gets it out within holdWait, not at the sender's probe;
// and one that closes at once gets it out before it goes.
func TestHeldVerdicts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The probe is long: a verdict held until then would show.
	eps, comms := checksummedTCP(t, "held", []TransportOption{WithProbe(10 * time.Second)})

	// A ping-pong: the verdicts ride on the replies.
	const rounds = 200
	err := spmd(t, comms, func(ctx context.Context, c Comm) error {
		peer := 1 - c.Rank()
		b := make([]byte, 100)
		for i := range rounds {
			if c.Rank() == 1 {
				if _, err := c.Recv(ctx, peer, 1, b); err != nil {
					return err
				}
			}
			if err := c.Send(ctx, peer, 1, pattern(100, uint64(i))); err != nil {
				return err
			}
			if c.Rank() == 0 {
				if _, err := c.Recv(ctx, peer, 1, b); err != nil {
					return err
				}
			}
		}
		return Flush(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := eps[1].e.ctl.rode.Load(); n < rounds*9/10 {
		t.Errorf("%d of rank 1's %d verdicts went with its replies", n, rounds)
	}

	// A receiver that goes off to compute: the sender's Flush returns
	// once the hold expires.
	done := make(chan error, 1)
	go func() {
		b := make([]byte, 100)
		_, err := comms[1].Recv(ctx, 0, 2, b)
		time.Sleep(time.Second) // calls nothing meanwhile
		done <- err
	}()
	if err := comms[0].Send(ctx, 1, 2, pattern(100, 9)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := Flush(ctx, comms[0]); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("the sender's Flush waited %v for a verdict held %v at most", d, holdWait)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A receiver that closes at once: its word goes before it does.
	go func() {
		b := make([]byte, 100)
		_, err := comms[1].Recv(ctx, 0, 3, b)
		eps[1].Close()
		done <- err
	}()
	if err := comms[0].Send(ctx, 1, 3, pattern(100, 10)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := Flush(ctx, comms[0]); err != nil {
		t.Fatalf("the receiver closed before its verdict went: %v", err)
	}
}

// The OK of a message over EagerLimit, whose sender waits for it, rides
// on the reply too — also on one of several frames (sendBatched) — and
// a receiver that goes off to compute keeps that sender waiting for
// holdWaitSync at most, not until its next call.
func TestHeldVerdictsLarge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eps, comms := checksummedTCP(t, "held", []TransportOption{WithProbe(10 * time.Second)}, Chunk(64<<10))
	const rounds, size = 100, 3*64<<10 + 5 // four chunks: sendBatched
	// The count below is of the mechanism, not of this machine's pace: a
	// loaded machine (go test ./... in CI) can take more than the hold's
	// 100 µs between the verdict and the reply (9 of 100 rode there), so
	// the hold is lengthened. Even so a verdict can be made by the link's
	// goroutine after the reply's first batch has gone (78 to 89 of 100
	// rode with the fault campaign's schedules running beside, 8 a
	// processor): half is what is asked, where a broken hold gives none.
	c1 := eps[1].e.ctl
	c1.mu.Lock()
	c1.testHookHoldSync = 10 * time.Second
	c1.mu.Unlock()
	err := spmd(t, comms, func(ctx context.Context, c Comm) error {
		peer := 1 - c.Rank()
		b := make([]byte, size)
		for i := range rounds {
			if c.Rank() == 1 {
				if _, err := c.Recv(ctx, peer, 1, b); err != nil {
					return err
				}
			}
			if err := c.Send(ctx, peer, 1, pattern(size, uint64(i))); err != nil {
				return err
			}
			if c.Rank() == 0 {
				if _, err := c.Recv(ctx, peer, 1, b); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := c1.rode.Load(); n < rounds/2 {
		t.Errorf("%d of rank 1's %d verdicts went with its replies", n, rounds)
	}
	c1.mu.Lock()
	c1.testHookHoldSync = 0 // holdWaitSync
	c1.mu.Unlock()

	done := make(chan error, 1)
	go func() {
		_, err := comms[1].Recv(ctx, 0, 2, make([]byte, size))
		time.Sleep(time.Second) // calls nothing meanwhile
		done <- err
	}()
	start := time.Now()
	if err := comms[0].Send(ctx, 1, 2, pattern(size, 9)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("the sender's Send waited %v for a verdict held %v at most", d, holdWaitSync)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The hold's timer: a large message's OK is held holdWaitSync at most,
// also after a small one armed the timer for holdWait, and also after the
// timer fired while a frame took what it held (expire's steps run by hand
// here, with takeHeld between them: the timer was left marked armed with
// nothing to fire, and the next OK was held until this rank's next call).
func TestHoldTimer(t *testing.T) {
	eps, err := startTCP(2, []byte("hold"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps)
	c := eps[0].e.ctl
	small := wire.Header{Kind: wire.KindVerdict, Flags: flagTriple, ID: 1 << 40, Total: 1}
	large := small
	large.Total = EagerLimit + 1
	deadline := func() time.Duration {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.heldArmed {
			return -1
		}
		return time.Until(c.heldBy)
	}
	c.hold(1, small, okTriple)
	if d := deadline(); d <= holdWaitSync || d > holdWait {
		t.Errorf("a small OK held: the timer fires in %v, want up to %v", d, holdWait)
	}
	c.hold(1, large, okTriple)
	if d := deadline(); d < 0 || d > holdWaitSync {
		t.Errorf("a large OK held after a small one: the timer fires in %v, want up to %v", d, holdWaitSync)
	}
	c.takeHeld(1, nil)
	c.mu.Lock()
	c.heldTimer.Stop() // a clean start for what follows
	c.heldArmed = false
	c.mu.Unlock()

	c.hold(1, large, okTriple)
	c.mu.Lock()
	c.heldTimer.Stop() // it fires by hand below, once its time is past
	c.mu.Unlock()
	time.Sleep(2 * holdWaitSync)
	if !c.expired() { // the timer fires, finds the OK...
		t.Fatal("expired found nothing held")
	}
	c.takeHeld(1, nil) // ...a frame takes it...
	c.release()        // ...and the release finds nothing
	c.hold(1, large, okTriple)
	if d := deadline(); d < 0 || d > holdWaitSync {
		t.Errorf("a large OK held after the timer fired empty: the timer fires in %v (-1: not armed), want up to %v", d, holdWaitSync)
	}
	c.takeHeld(1, nil)
}

// A receiver that closes right after its Recv returns still sends the
// verdict of a message too large for its OK to be held (ctl.go): it is
// queued, and Close waits for the queue (settle). Without that wait the
// sender's Send failed with "rank 1 lost" in each of 5 runs of 300 tries
// (128 KiB; at 64 KiB + 1 it did not show).
func TestCloseSendsQueuedVerdict(t *testing.T) {
	const tries, size = 300, 128 << 10
	msg := pattern(size, 3)
	for i := range tries {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		eps, err := ConnectLoopback(ctx, 2, TCPConfig{Secret: []byte("close")})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		comms := make([]Comm, 2)
		for r, ep := range eps {
			if comms[r], err = WithChecksum(ep); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() {
			_, err := comms[1].Recv(ctx, 0, 1, make([]byte, size))
			eps[1].Close()
			done <- err
		}()
		sendErr := comms[0].Send(ctx, 1, 1, msg)
		recvErr := <-done
		eps[0].Close()
		cancel()
		if recvErr != nil {
			t.Fatalf("try %d: Recv: %v", i, recvErr)
		}
		if sendErr != nil {
			t.Fatalf("try %d: the receiver closed before its verdict went: %v", i, sendErr)
		}
	}
}

// TestTCPSendAfterCanceledWrite: a send canceled mid-write leaves its
// connection's write deadline in the past (watch); the next send, which
// first tries a write that does not wait (tcpConn.write), must set its
// own deadline before, or it fails — and breaks the link — at once. The
// fault campaign found that one: receives then waited on a broken link.
func TestTCPSendAfterCanceledWrite(t *testing.T) {
	eps, err := startTCP(2, []byte("deadline"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps)
	tc := eps[0].e.tx.(*tcpTx).conn(1)
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
	eps, err := startTCP(2, []byte("once"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc := eps[0].e.tx.(*tcpTx).conn(1)
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
