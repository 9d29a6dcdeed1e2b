package tcp

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// The read side of a TCP link (tcpread.go): a receive reads its peer's
// socket itself, takes the link from its own goroutine, gives it up when
// its context is done without breaking a frame, and never leaves other
// waiters without a reader.

// TestTCPReadTakesOver: whether the message comes before the receive,
// right after, or after the link's own goroutine has taken the link
// back (takeover), it arrives whole, and soon.
func TestTCPReadTakesOver(t *testing.T) {
	eps, err := startTCP(2, []byte("read"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, pause := range []time.Duration{0, 0, takeover / 2, 3 * takeover, 20 * takeover, 0} {
		msg := pattern(100+i*3000, uint64(i))
		go func() {
			time.Sleep(pause)
			eps[1].Send(ctx, 0, 1, msg)
		}()
		if i%2 == 1 {
			time.Sleep(pause + 5*takeover) // the message waits, read by the link's goroutine
		}
		buf := make([]byte, len(msg))
		start := time.Now()
		if _, err := eps[0].Recv(ctx, 1, 1, buf); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(buf, msg) {
			t.Fatalf("message %d: other bytes than were sent", i)
		}
		if d := time.Since(start); d > pause+time.Second {
			t.Errorf("message %d took %v (sent after %v)", i, d, pause)
		}
	}
}

// TestTCPReadCanceled: a receive reading for itself whose context ends
// returns then, and leaves the link whole for the next.
func TestTCPReadCanceled(t *testing.T) { readCanceled(t) }

func readCanceled(t *testing.T) {
	eps, err := startTCP(2, []byte("read"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps)
	for i := range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		start := time.Now()
		_, err := eps[0].Recv(ctx, 1, 1, make([]byte, 10))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: %v, want the deadline", i, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("round %d: canceled after %v", i, d)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		msg := pattern(1000*i+1, uint64(i))
		if err := eps[1].Send(ctx, 0, 1, msg); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(msg))
		if _, err := eps[0].Recv(ctx, 1, 1, buf); err != nil || !bytes.Equal(buf, msg) {
			t.Fatalf("round %d: after a canceled receive: %v (same bytes: %v)", i, err, bytes.Equal(buf, msg))
		}
		cancel()
	}
}

// TestTCPReadOthersWait: while one receive holds a link, waiting for a
// message that comes late, the other goroutines' messages — on that
// link (another tag) and on another (channel.AnySource) — are delivered at once,
// not after the late one.
func TestTCPReadOthersWait(t *testing.T) {
	eps, err := startTCP(3, []byte("read"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(eps)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	late := make(chan error, 1)
	go func() {
		_, err := eps[0].Recv(ctx, 1, 1, make([]byte, 1)) // holds link 1, for long
		late <- err
	}()
	time.Sleep(10 * time.Millisecond)
	for _, c := range []struct {
		src, tag, from int
	}{{1, 2, 1}, {channel.AnySource, 3, 2}, {channel.AnySource, 4, 1}} {
		start := time.Now()
		go eps[c.from].Send(ctx, 0, c.tag, []byte{byte(c.tag)})
		var b [1]byte
		st, err := eps[0].Recv(ctx, c.src, c.tag, b[:])
		if err != nil || st.Source != c.from || b[0] != byte(c.tag) {
			t.Fatalf("tag %d: %v, %+v, %d", c.tag, err, st, b[0])
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("tag %d from rank %d took %v while another receive held the link", c.tag, c.from, d)
		}
	}
	if err := eps[1].Send(ctx, 0, 1, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := <-late; err != nil {
		t.Fatal(err)
	}
}
