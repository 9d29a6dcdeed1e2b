package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// layers returns the protected views of eps the hardening tests run on.
func layers(t testing.TB, eps []Comm) map[string][]Comm {
	out := map[string][]Comm{}
	for _, name := range []string{"checksum", "merkle"} {
		ls := make([]Comm, len(eps))
		for i, ep := range eps {
			var err error
			if name == "checksum" {
				ls[i], err = WithChecksum(ep, Chunk(4096))
			} else {
				ls[i], err = WithMerkle(ep, Segment(1024))
			}
			must(t, err)
		}
		out[name] = ls
	}
	return out
}

// TestDiscardEndsTheSend: a protected message its receiver throws away —
// into a short buffer posted before it came or after, or a collective
// whose sizes disagree — ends its send at once, with a *DiscardError
// that says why, on both transports and layers; before, the sender
// waited for a verdict that never came.
func TestDiscardEndsTheSend(t *testing.T) {
	for tr, ranks := range map[string]func(testing.TB, int) []Comm{"local": local, "tcp": tcpRanks} {
		for name, comms := range layers(t, ranks(t, 3)) {
			for _, size := range []int{1000, 300 << 10} { // eager and not
				for _, posted := range []bool{true, false} {
					t.Run(fmt.Sprintf("%s/%s/%d/posted=%v", tr, name, size, posted), func(t *testing.T) {
						ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						defer cancel()
						data := pattern(size, 3)
						ready := make(chan struct{})
						recvErr := make(chan error, 1)
						go func() {
							if !posted {
								<-ready
								time.Sleep(20 * time.Millisecond) // the message is in, unexpected
							} else {
								close(ready)
							}
							_, err := Irecv(ctx, comms[1], 0, 9, make([]byte, size/2)).Wait()
							recvErr <- err
						}()
						if posted {
							<-ready
							time.Sleep(20 * time.Millisecond) // the receive is posted
						} else {
							close(ready)
						}
						err := comms[0].Send(ctx, 1, 9, data)
						if err == nil {
							err = Flush(ctx, comms[0])
						}
						// A message verified before its receive came
						// was delivered as far as the sender can know:
						// its Send may succeed.
						var de *DiscardError
						if (posted || err != nil) && (!errors.As(err, &de) || !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrDiscarded) || de.Rank != 1) {
							t.Errorf("sender: %v, want a *DiscardError for a truncation", err)
						}
						if err := <-recvErr; !errors.Is(err, ErrTruncated) {
							t.Errorf("receiver: %v, want ErrTruncated", err)
						}
					})
				}
			}
			t.Run(tr+"/"+name+"/bcast sizes disagree", func(t *testing.T) {
				err := spmd(t, comms, func(ctx context.Context, c Comm) error {
					buf := make([]byte, 100000+1000*c.Rank())
					err := Bcast(ctx, c, 0, buf)
					if errors.Is(err, context.DeadlineExceeded) {
						return err // a hang, not a disagreement found
					}
					if err == nil && c.Rank() != 0 {
						return errors.New("a broadcast of the wrong size succeeded")
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestCanceledReceiveEndsTheSend: a receive canceled while its large
// message comes ends its sender's Send too (with a *DiscardError for the
// cancel, or nil if the message was verified before), never a hang.
func TestCanceledReceiveEndsTheSend(t *testing.T) {
	for name, comms := range layers(t, tcpRanks(t, 2)) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			data := pattern(64<<20, 1)
			rctx, rcancel := context.WithCancel(ctx)
			r := Irecv(rctx, comms[1], 0, 4, make([]byte, len(data)))
			time.AfterFunc(5*time.Millisecond, rcancel)
			err := comms[0].Send(ctx, 1, 4, data)
			// Over TCP a receive canceled while its bytes are being
			// read from the socket breaks the link (see cancel): the
			// sender then sees the peer lost.
			if err != nil && !errors.Is(err, ErrCanceled) && !errors.Is(err, ErrPeerLost) {
				t.Errorf("sender: %v", err)
			}
			if _, rerr := r.Wait(); rerr == nil && err != nil {
				t.Errorf("the receive succeeded, the send failed: %v", err)
			}
		})
	}
}

// flipData damages the first byte of every data frame of a message as
// it first goes out (not its repairs): every chunk or segment arrives
// corrupted once.
type flipData struct{ Transport }

func (f flipData) Send(ctx context.Context, dst int, h Header, p []byte) error {
	if (h.Kind == wire.KindMsg || h.Kind == wire.KindData) && len(p) > 0 {
		c := bytes.Clone(p)
		for i := 0; i < len(c); i += 64 {
			c[i] ^= 1
		}
		p = c
	}
	return f.Transport.Send(ctx, dst, h, p)
}

// TestEverySegmentDamaged: a message whose every chunk or segment comes
// corrupted is repaired, although its verdicts and the descent's
// answers list more parts than a frame holds (before, the control frames
// passed MaxFrame: TCP dropped the link and in process nothing checked).
func TestEverySegmentDamaged(t *testing.T) {
	for tr, start := range map[string]func() ([]*Endpoint, error){
		"local": func() ([]*Endpoint, error) { return NewLocal(2) },
		"tcp":   func() ([]*Endpoint, error) { return startTCP(2, []byte("s")) },
	} {
		for _, mode := range []string{"checksum", "merkle"} {
			t.Run(tr+"/"+mode, func(t *testing.T) {
				eps, err := start()
				comms := asComms(t, eps, err)
				for _, ep := range eps {
					setTx(ep, flipData{ep.e.tx})
				}
				var a, b Comm
				if mode == "checksum" {
					a, _ = WithChecksum(comms[0], Chunk(64))
					b, _ = WithChecksum(comms[1], Chunk(64))
				} else {
					a, _ = WithMerkle(comms[0], Segment(64))
					b, _ = WithMerkle(comms[1], Segment(64))
				}
				data := pattern(3<<20, 5) // 49152 parts of 64 bytes: more than maxListed
				err = spmd(t, []Comm{a, b}, func(ctx context.Context, c Comm) error {
					if c.Rank() == 0 {
						return c.Send(ctx, 1, 1, data)
					}
					buf := make([]byte, len(data))
					if _, err := c.Recv(ctx, 0, 1, buf); err != nil {
						return err
					}
					if !bytes.Equal(buf, data) {
						return errors.New("delivered bytes differ from those sent")
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if st := eps[1].Stats(); st.Repaired < uint64(len(data)/64) {
					t.Fatalf("%d parts repaired, want %d", st.Repaired, len(data)/64)
				}
			})
		}
	}
}

// BenchmarkRepairAllDamaged: repairing d damaged chunks is linear in d
// (it was quadratic: each repair was looked up and deleted in a list).
func BenchmarkRepairAllDamaged(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			eps, err := NewLocal(2)
			comms := asComms(b, eps, err)
			for _, ep := range eps {
				setTx(ep, flipData{ep.e.tx})
			}
			x, _ := WithChecksum(comms[0], Chunk(64))
			y, _ := WithChecksum(comms[1], Chunk(64))
			data, buf := pattern(size, 1), make([]byte, size)
			ctx := context.Background()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				r := Irecv(ctx, y, 0, 1, buf)
				if err := x.Send(ctx, 1, 1, data); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
