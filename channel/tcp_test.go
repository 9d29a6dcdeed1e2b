package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// TestTCPSenderReadsItsVerdict: a blocking protected send over TCP reads
// its receiver's link itself while it waits for the verdict (pending.next),
// and still probes on time when the verdict is lost: the probe's timer
// must cut the read it is blocked in, since nothing else will come over
// that link until the sender asks. Rank 1's verdicts are dropped at random;
// every send must end verified, within the test's deadline, and the data
// arrive whole.
func TestTCPSenderReadsItsVerdict(t *testing.T) {
	eps, err := startTCPWithOpts(2, []byte("verdict"),
		WithInjector(&Injector{Rate: 0.3, Seed: 5, Fault: Drop, Ranks: []int{1}}), WithProbe(5*time.Millisecond))
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
		eps, err := startTCP(2, []byte("close"))
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
