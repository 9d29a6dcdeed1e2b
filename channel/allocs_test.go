package channel

import (
	"context"
	"fmt"
	"testing"
)

// Issue 14: in process and over TCP, a round trip — protected or not —
// allocates nothing once the engines have warmed up (recycle.go:
// receives, messages and sends are recycled, small control payloads read
// into pooled buffers), with a context that can be canceled as with one
// that cannot (but for a receive that sleeps: see the cases). Up to
// 1 MiB, which a Merkle message sends in more than one frame, with its
// trees (kept by its protection) and, in process, a helper hashing beside
// the copy.
func TestSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, c := range []struct {
		transport string
		cancel    bool
	}{
		{"local", true},
		// Over TCP a receive that sleeps in the runtime's poller with a
		// context that can be canceled arms its watch (context.AfterFunc:
		// 3 allocations), and two ranks in one process do not poll
		// (poll_load.go): with such a context a round trip here
		// allocates 3 times; between processes, as often as a receive's
		// polling misses its frame, which is a matter of timing.
		{"tcp", false},
	} {
		for _, protect := range []string{"none", "checksum", "merkle"} {
			for _, size := range []int{1, 1 << 10, 64 << 10, 1 << 20} {
				name := fmt.Sprintf("transport=%s/cancel=%v/protect=%s/size=%s", c.transport, c.cancel, protect, sizeName(size))
				t.Run(name, func(t *testing.T) {
					if n := roundTripAllocs(t, c.transport, protect, size, c.cancel); n != 0 {
						t.Errorf("%v allocations per round trip, want 0", n)
					}
				})
			}
		}
	}
}

// roundTripAllocs returns the allocations of a round trip between two
// ranks, on average, after a warm-up.
func roundTripAllocs(t *testing.T, transport, protect string, size int, cancellable bool) float64 {
	comms := benchComms(t, transport, protect)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opCtx := ctx
	if !cancellable {
		opCtx = context.WithoutCancel(ctx)
	}
	// Warm-up, then AllocsPerRun's run before it counts and its runs:
	// the echo stops on its own, so that it too can go without a context
	// that can be canceled.
	warm, runs := 100, 1000
	if size > 64<<10 {
		warm, runs = 20, 200
	}
	echoed := make(chan error, 1)
	go func() {
		buf := make([]byte, size)
		for range warm + 1 + runs {
			st, err := comms[1].Recv(opCtx, 0, 1, buf)
			if err == nil {
				err = comms[1].Send(opCtx, 0, 1, buf[:st.Len])
			}
			if err != nil {
				echoed <- err
				return
			}
		}
		echoed <- nil
	}()
	msg, buf := pattern(size, 5), make([]byte, size)
	var failed error
	roundTrip := func() {
		if err := comms[0].Send(opCtx, 1, 1, msg); err != nil && failed == nil {
			failed = err
		}
		if _, err := comms[0].Recv(opCtx, 1, 1, buf); err != nil && failed == nil {
			failed = err
		}
	}
	for range warm { // the free lists, the pools, the verdict ring
		roundTrip()
	}
	n := testing.AllocsPerRun(runs, roundTrip)
	if failed != nil {
		t.Fatal(failed)
	}
	if err := <-echoed; err != nil {
		t.Fatal(err)
	}
	return n
}
