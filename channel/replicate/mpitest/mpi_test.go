//go:build mpi

package mpitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/mpi"
	"github.com/sigcheck/sigcheck/channel/mpi/mpitest"
	"github.com/sigcheck/sigcheck/channel/replicate"
)

func TestMain(m *testing.M) {
	mpitest.Main(m, "go test -c -tags mpi -o replicate-mpi.test ./channel/replicate/mpitest && mpirun -np 6 ./replicate-mpi.test")
}

// world connects this process and makes its replicated Comm of r
// replicas; all processes agree, case by case, through ok.
type world struct {
	ep  *channel.Endpoint
	c   *replicate.Comm
	all channel.Comm // a context of its own, for agreeing on outcomes
	ctx context.Context
}

func connect(t *testing.T, r int, opts ...replicate.Option) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	ep, err := mpi.Connect(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if ep.Size()%r != 0 {
		t.Skipf("%d processes are not a multiple of %d", ep.Size(), r)
	}
	all := channel.Dup(ep)
	c, err := replicate.New(ep, r, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		channel.DisseminationBarrier(ctx, all)
		c.Close()
		ep.Close()
		cancel()
	})
	return &world{ep: ep, c: c, all: all, ctx: ctx}
}

// agree returns whether every process's ok is true (an all-gather of
// one byte each), so that every process's property sees the same verdict
// and they run the same cases.
func (w *world) agree(t *testing.T, ok bool) bool {
	b := []byte{0}
	if ok {
		b[0] = 1
	}
	out := make([]byte, w.ep.Size())
	if err := channel.Allgather(w.ctx, w.all, b, out); err != nil {
		t.Fatal(err)
	}
	return !bytes.Contains(out, []byte{0})
}

func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// exchange: virtual rank 0 sends msg to rank 1, replica k flipping bit
// bits[i] if k = bad[i]; it returns this process's verdict for the
// receive (nil on the senders and other ranks).
func (w *world) exchange(msg []byte, bad, bits []int, tag int) (got []byte, err error) {
	c := w.c
	switch c.Rank() {
	case 0:
		data := bytes.Clone(msg)
		for i, k := range bad {
			if k == c.Replica() {
				data[bits[i]/8] ^= 1 << (bits[i] % 8)
			}
		}
		return nil, c.Send(w.ctx, 1, tag, data)
	case 1:
		buf := make([]byte, len(msg))
		_, err := c.Recv(w.ctx, 0, tag, buf)
		return buf, err
	}
	return nil, nil
}

func props() *gopter.Properties {
	params := gopter.DefaultTestParametersWithSeed(1) // the same cases on every process
	params.MinSuccessfulTests = 40
	return gopter.NewProperties(params)
}

var protocols = []replicate.Protocol{replicate.MsgPlusHash, replicate.AllToAll}

func TestMPISingleFaultCorrected(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			w := connect(t, 3, replicate.WithProtocol(p))
			pr := props()
			tag := 0
			pr.Property("one bad replica is voted out", prop.ForAll(
				func(size, bad int, bit uint32) bool {
					msg := pattern(size, uint64(size))
					tag++
					got, err := w.exchange(msg, []int{bad}, []int{int(bit % uint32(size*8))}, tag)
					ok := err == nil && (got == nil || bytes.Equal(got, msg))
					if !ok {
						t.Logf("rank %d replica %d: %v", w.c.Rank(), w.c.Replica(), err)
					}
					return w.agree(t, ok)
				},
				gen.IntRange(1, 5000), gen.IntRange(0, 2), gen.UInt32(),
			))
			pr.TestingRun(t)
		})
	}
}

func TestMPIDoubleFaultNeverWrong(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			w := connect(t, 3, replicate.WithProtocol(p))
			pr := props()
			tag := 0
			pr.Property("error or the right data", prop.ForAll(
				func(size, skip int, b1, b2 uint32) bool {
					msg := pattern(size, uint64(size)+1)
					bits := []int{int(b1 % uint32(size*8)), int(b2 % uint32(size*8))}
					tag++
					got, err := w.exchange(msg, []int{(skip + 1) % 3, (skip + 2) % 3}, bits, tag)
					ok := (err == nil && (got == nil || bytes.Equal(got, msg))) || errors.Is(err, replicate.ErrNoMajority)
					if !ok {
						t.Logf("rank %d replica %d: %v", w.c.Rank(), w.c.Replica(), err)
					}
					return w.agree(t, ok)
				},
				gen.IntRange(1, 3000), gen.IntRange(0, 2), gen.UInt32(), gen.UInt32(),
			))
			pr.TestingRun(t)
		})
	}
}

// Every replica of rank 0 receives from AnySource/AnyTag; each hashes
// what it saw, and all replicas' hashes must agree.
func TestMPIWildcardSameEverywhere(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			w := connect(t, 2, replicate.WithProtocol(p))
			n := w.c.Size()
			pr := props()
			pr.Property("same envelope and data on every replica", prop.ForAll(
				func(tags []int) bool {
					var seen bytes.Buffer
					if w.c.Rank() != 0 {
						for i, tg := range tags {
							if err := w.c.Send(w.ctx, 0, tg, []byte(fmt.Sprint(w.c.Rank(), i, tg))); err != nil {
								t.Fatal(err)
							}
						}
					} else {
						for range (n - 1) * len(tags) {
							buf := make([]byte, 64)
							st, err := w.c.Recv(w.ctx, channel.AnySource, channel.AnyTag, buf)
							if err != nil {
								t.Fatal(err)
							}
							fmt.Fprintf(&seen, "%d/%d/%s;", st.Source, st.Tag, buf[:st.Len])
						}
					}
					// Rank 0's replicas compare what they saw: replica k
					// sends its record to replica 0 of rank 0 on the Comm
					// underneath's duplicate.
					rec := seen.Bytes()
					ok := true
					if w.c.Rank() == 0 {
						m := w.c.Map()
						if w.c.Replica() != 0 {
							if err := w.all.Send(w.ctx, m.Native(0, 0), 1, rec); err != nil {
								t.Fatal(err)
							}
						} else {
							for k := 1; k < w.c.Degree(); k++ {
								other := make([]byte, 1<<16)
								st, err := w.all.Recv(w.ctx, m.Native(0, k), 1, other)
								if err != nil {
									t.Fatal(err)
								}
								if !bytes.Equal(other[:st.Len], rec) {
									t.Logf("replica %d saw %q, replica 0 %q", k, other[:st.Len], rec)
									ok = false
								}
							}
						}
					}
					return w.agree(t, ok)
				},
				gen.SliceOfN(4, gen.IntRange(0, 3)),
			))
			pr.TestingRun(t)
		})
	}
}
