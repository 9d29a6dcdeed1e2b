package channel

import (
	"context"
	"fmt"
	"testing"
)

// Issue 14: in process, a round trip — protected or not — allocates
// nothing once the engines have warmed up (recycle.go: receives,
// messages and sends are recycled, small control payloads read into
// pooled buffers). Merkle messages of more than one frame still make
// their trees, so sizes stop at one frame.
func TestSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, protect := range []string{"none", "checksum", "merkle"} {
		for _, size := range []int{1, 1 << 10, 64 << 10} {
			t.Run(fmt.Sprintf("protect=%s/size=%s", protect, sizeName(size)), func(t *testing.T) {
				comms := benchComms(t, "local", protect)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				echoed := make(chan error, 1)
				go func() {
					buf := make([]byte, size)
					for {
						st, err := comms[1].Recv(ctx, 0, 1, buf)
						if err == nil {
							err = comms[1].Send(ctx, 0, 1, buf[:st.Len])
						}
						if err != nil {
							echoed <- err
							return
						}
					}
				}()
				msg, buf := pattern(size, 5), make([]byte, size)
				var failed error
				roundTrip := func() {
					if err := comms[0].Send(ctx, 1, 1, msg); err != nil && failed == nil {
						failed = err
					}
					if _, err := comms[0].Recv(ctx, 1, 1, buf); err != nil && failed == nil {
						failed = err
					}
				}
				for range 100 { // the free lists, the pools, the verdict ring
					roundTrip()
				}
				n := testing.AllocsPerRun(1000, roundTrip)
				if failed != nil {
					t.Fatal(failed)
				}
				if n != 0 {
					t.Errorf("%v allocations per round trip, want 0", n)
				}
				cancel()
				<-echoed
			})
		}
	}
}
