package channel

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/internal/wire"
	"github.com/sigcheck/sigcheck/sig"
)

// aimed damages the frames a rule picks: the rule sees each frame going
// out and says what to do with it (nil payload and drop, or a damaged
// copy).
type aimed struct {
	Transport
	mu   sync.Mutex
	rule func(h Header, p []byte) (out []byte, drop bool)
}

func (a *aimed) Send(ctx context.Context, dst int, h Header, p []byte) error {
	a.mu.Lock()
	out, drop := a.rule(h, p)
	a.mu.Unlock()
	if drop {
		return nil
	}
	return a.Transport.Send(ctx, dst, h, out)
}

// aim puts rule on the frames rank r sends.
func aim(ep *Endpoint, rule func(h Header, p []byte) ([]byte, bool)) {
	setTx(ep, &aimed{Transport: ep.e.tx, rule: rule})
}

// setTx puts t between ep's engine and its transport, as
// WithTransportWrapper does when the endpoint is made: the engine finds
// its capabilities anew, so that those t hides are not used past it.
func setTx(ep *Endpoint, t Transport) {
	ep.e.tx = t
	ep.e.caps = capsOf(t)
}

func flipped(p []byte, bit int) []byte {
	c := bytes.Clone(p)
	c[bit/8%len(c)] ^= 1 << (bit % 8)
	return c
}

var transports = map[string]func() ([]*Endpoint, error){
	"local": func() ([]*Endpoint, error) { return NewLocal(2) },
	"tcp":   func() ([]*Endpoint, error) { return startTCP(2, []byte("s")) },
}

func protectBoth(t testing.TB, eps []*Endpoint, mode string) []Comm {
	out := make([]Comm, len(eps))
	for i, ep := range eps {
		var err error
		if mode == "checksum" {
			out[i], err = WithChecksum(ep, Chunk(64<<10))
		} else {
			out[i], err = WithMerkle(ep, Segment(4096))
		}
		must(t, err)
	}
	return out
}

// transfer sends data from rank 0 to rank 1 and checks that both sides
// end, and agree: both succeed with the bytes intact, or both fail.
func transfer(t *testing.T, comms []Comm, data []byte, within time.Duration) (sendErr, recvErr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	buf := make([]byte, len(data))
	r := Irecv(ctx, comms[1], 0, 1, buf)
	sendErr = comms[0].Send(ctx, 1, 1, data)
	if sendErr == nil {
		sendErr = Flush(ctx, comms[0])
	}
	_, recvErr = r.Wait()
	if recvErr == nil && !bytes.Equal(buf, data) {
		t.Fatal("the receive succeeded with bytes that differ from those sent")
	}
	if (sendErr == nil) != (recvErr == nil) {
		t.Fatalf("the sides disagree: send %v, receive %v", sendErr, recvErr)
	}
	if took := time.Since(start); took > within {
		t.Fatalf("the transfer took %v (send %v, receive %v)", took, sendErr, recvErr)
	}
	return sendErr, recvErr
}

// TestLostLastFrame: the last data frame of a message, or its trailer,
// lost on the way costs a probe and a round trip, not a deadline; both
// sides end with the message delivered (before, both stalled until their
// deadlines).
func TestLostLastFrame(t *testing.T) {
	for tr, start := range transports {
		for _, mode := range []string{"checksum", "merkle"} {
			for _, what := range []string{"last data frame", "trailer"} {
				if mode == "checksum" && what == "trailer" {
					continue // none
				}
				t.Run(fmt.Sprintf("%s/%s/%s", tr, mode, what), func(t *testing.T) {
					eps, err := start()
					asComms(t, eps, err)
					data := pattern(3<<20+1000, 7)
					dropped := 0
					aim(eps[0], func(h Header, p []byte) ([]byte, bool) {
						last := h.Kind == wire.KindData && h.Offset+int64(h.Plen) == h.Total
						if what == "trailer" {
							last = h.Kind == wire.KindTrailer
						}
						if last && dropped == 0 {
							dropped++
							return nil, true
						}
						return p, false
					})
					comms := protectBoth(t, eps, mode)
					if s, r := transfer(t, comms, data, 3*time.Second); s != nil || r != nil {
						t.Fatalf("send %v, receive %v", s, r)
					}
					if a := eps[0].e.tx.(*aimed); func() bool { a.mu.Lock(); defer a.mu.Unlock(); return dropped != 1 }() {
						t.Fatal("nothing was dropped: the test proves nothing")
					}
				})
			}
		}
	}
}

// TestDamagedFinalVerdict: a final verdict with a bit flipped, in one
// copy or in two, still ends both sides the same way (before, the sender
// could return ErrCorrupted while the receiver held exact data).
func TestDamagedFinalVerdict(t *testing.T) {
	for tr, start := range transports {
		for _, mode := range []string{"checksum", "merkle"} {
			for _, copies := range []int{1, 2} {
				for _, size := range []int{1000, 300 << 10} {
					t.Run(fmt.Sprintf("%s/%s/%d copies/%d", tr, mode, copies, size), func(t *testing.T) {
						eps, err := start()
						asComms(t, eps, err)
						hits := 0
						aim(eps[1], func(h Header, p []byte) ([]byte, bool) {
							if h.Kind == wire.KindVerdict && h.Flags == flagTriple && hits < 3 {
								hits++
								n := len(p) / 3
								for c := range copies {
									p = flipped(p, 8*n*c+hits)
								}
							}
							return p, false
						})
						comms := protectBoth(t, eps, mode)
						if s, r := transfer(t, comms, pattern(size, 2), 3*time.Second); s != nil || r != nil {
							t.Fatalf("send %v, receive %v", s, r)
						}
						if a := eps[1].e.tx.(*aimed); func() bool { a.mu.Lock(); defer a.mu.Unlock(); return hits == 0 }() {
							t.Fatal("no verdict was damaged: the test proves nothing")
						}
					})
				}
			}
		}
	}
}

// TestDamagedStamp: a datatype stamp that comes corrupted, or not at
// all, is asked for again; the typed receive then succeeds, and the send
// with it (before, the receive failed while the send returned nil).
func TestDamagedStamp(t *testing.T) {
	dt, err := sig.Contiguous(4, sig.Double)
	must(t, err)
	for tr, start := range transports {
		for _, mode := range []string{"checksum", "merkle"} {
			for _, fault := range []string{"flip", "drop"} {
				t.Run(fmt.Sprintf("%s/%s/%s", tr, mode, fault), func(t *testing.T) {
					eps, err := start()
					asComms(t, eps, err)
					hits := 0
					aim(eps[0], func(h Header, p []byte) ([]byte, bool) {
						if h.Kind == wire.KindStamp && hits == 0 {
							hits++
							if fault == "drop" {
								return nil, true
							}
							return flipped(p, 77), false
						}
						return p, false
					})
					comms := protectBoth(t, eps, mode)
					a, b := WithTypes(comms[0], nil), WithTypes(comms[1], nil)
					data := pattern(32*100, 4)
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					buf := make([]byte, len(data))
					r := make(chan error, 1)
					go func() {
						_, err := b.Recv(ctx, 0, 3, buf, dt, 100)
						r <- err
					}()
					serr := a.Send(ctx, 1, 3, data, dt, 100)
					if serr == nil {
						serr = Flush(ctx, comms[0])
					}
					if rerr := <-r; serr != nil || rerr != nil || !bytes.Equal(buf, data) {
						t.Fatalf("send %v, receive %v", serr, rerr)
					}
					if a := eps[0].e.tx.(*aimed); func() bool { a.mu.Lock(); defer a.mu.Unlock(); return hits != 1 }() {
						t.Fatal("no stamp was damaged: the test proves nothing")
					}
				})
			}
		}
	}
}
