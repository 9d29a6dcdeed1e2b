package channel

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestParkedFramesBounded: frames for a layer the receiver has not made
// are held up to WithHeldLimit; past it the sender's link is dropped
// with an error that names the limit (before, a 256 MiB send to an
// uncreated layer held 488 MiB).
func TestParkedFramesBounded(t *testing.T) {
	eps, err := NewLocal(2, WithHeldLimit(1<<20))
	asComms(t, eps, err)
	l, err := WithMerkle(eps[0])
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = l.Send(ctx, 1, 0, make([]byte, 4<<20)) // rank 1 never makes its layer
	if !errors.Is(err, ErrPeerLost) {
		t.Fatalf("send to a rank holding too much: %v, want a lost peer", err)
	}
	_, rerr := eps[1].Recv(ctx, 0, 0, nil)
	if rerr == nil || !strings.Contains(rerr.Error(), "WithHeldLimit") {
		t.Fatalf("the receiver's error does not name the limit: %v", rerr)
	}
}

// TestUnexpectedMessageSizedOnce: a message that comes before its
// receive gets one buffer of its length (within the limit), and one
// beyond the limit still arrives whole.
func TestUnexpectedMessageSizedOnce(t *testing.T) {
	for _, limit := range []int64{DefaultHeldLimit, 1 << 20} {
		eps, err := NewLocal(2, WithHeldLimit(limit))
		comms := asComms(t, eps, err)
		ctx := context.Background()
		data := pattern(8<<20, 2)
		must(t, comms[0].Send(ctx, 1, 3, data))
		e := eps[1].e
		want := int64(len(data))
		if limit < want {
			want = 0
		}
		if got := e.held.Load(); got != want {
			t.Fatalf("limit %d: %d bytes held for the unexpected message, want %d", limit, got, want)
		}
		buf := make([]byte, len(data))
		if _, err := comms[1].Recv(ctx, 0, 3, buf); err != nil || !bytes.Equal(buf, data) {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if got := e.held.Load(); got != 0 {
			t.Fatalf("%d bytes still held after the receive", got)
		}
	}
}

// BenchmarkUnexpectedPeak measures the memory a message costs when its
// receive is posted after it came: peak-x is the peak of the heap during
// the transfer over the message's size, beside the receive buffer the
// caller owns. The -grown runs are the baseline: a buffer grown by
// doubling as its bytes come, as every such message's was before.
func BenchmarkUnexpectedPeak(b *testing.B) {
	for _, tr := range []string{"local", "tcp", "local-grown", "tcp-grown"} {
		b.Run(tr+"/64MiB", func(b *testing.B) {
			// -grown: a limit of 1 byte, so that the buffer grows by
			// doubling as its bytes come (what every message did before).
			var limit int64 = DefaultHeldLimit
			if strings.HasSuffix(tr, "-grown") {
				limit = 1
			}
			var eps []*Endpoint
			var err error
			if strings.HasPrefix(tr, "local") {
				eps, err = NewLocal(2, WithHeldLimit(limit))
			} else {
				eps, err = startTCPWithOpts(2, []byte("s"), WithHeldLimit(limit))
			}
			comms := asComms(b, eps, err)
			size := 64 << 20
			data, buf := pattern(size, 1), make([]byte, size)
			ctx := context.Background()
			var peak atomic.Uint64
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapAlloc
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() {
					var ms runtime.MemStats
					for {
						runtime.ReadMemStats(&ms)
						if d := ms.HeapAlloc - min(base, ms.HeapAlloc); d > peak.Load() {
							peak.Store(d)
						}
						select {
						case <-stop:
							return
						case <-time.After(time.Millisecond):
						}
					}
				})
				if err := comms[0].Send(ctx, 1, 1, data); err != nil {
					b.Fatal(err)
				}
				for StatsOf(comms[1]).MessagesReceived == 0 && !arrived(comms[1]) {
					time.Sleep(100 * time.Microsecond)
				}
				if _, err := comms[1].Recv(ctx, 0, 1, buf); err != nil {
					b.Fatal(err)
				}
				close(stop)
				wg.Wait()
			}
			b.ReportMetric(float64(peak.Load())/float64(size), "peak-x")
		})
	}
}

// arrived says whether a whole message waits unexpected at c's rank.
func arrived(c Comm) bool {
	e := c.(framed).engine()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range e.unexpected {
		if m.done {
			return true
		}
	}
	return false
}
