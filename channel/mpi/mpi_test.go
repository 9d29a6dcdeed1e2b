//go:build mpi

package mpi_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/mpi"
	"github.com/sigcheck/sigcheck/channel/mpi/mpitest"
)

// These tests run under mpirun, every rank the same tests in the same
// order (each Connect is collective):
//
//	go test -c -tags mpi -o mpi.test ./channel/mpi
//	mpirun -np 4 ./mpi.test
func TestMain(m *testing.M) {
	mpitest.Main(m, "go test -c -tags mpi -o mpi.test ./channel/mpi && mpirun -np 2 ./mpi.test")
}

// job connects this rank for one test; at its end, after a barrier (no
// rank leaves while another may still need it), the endpoint is closed.
func job(t *testing.T, opts ...channel.TransportOption) (*channel.Endpoint, context.Context) {
	t.Helper()
	ep, ctx := connect(t, opts...)
	t.Cleanup(func() { // before connect's: cleanups run last first
		bctx, bcancel := context.WithTimeout(context.Background(), time.Minute)
		defer bcancel()
		if err := channel.DisseminationBarrier(bctx, ep); err != nil && !t.Failed() {
			t.Errorf("the closing barrier: %v", err)
		}
	})
	return ep, ctx
}

// connect connects this rank for one test, and closes the endpoint at
// its end.
func connect(t *testing.T, opts ...channel.TransportOption) (*channel.Endpoint, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	ep, err := mpi.Connect(ctx, opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ep.Close()
		cancel()
	})
	return ep, ctx
}

// pattern is the data of message (seed): the same on every rank.
func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	for i := 0; i < n; i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], rng.Uint64())
		copy(b[i:], w[:])
	}
	return b
}

func protect(t *testing.T, ep *channel.Endpoint, how string) channel.Comm {
	t.Helper()
	var c channel.Comm = ep
	var err error
	switch how {
	case "checksum":
		c, err = channel.WithChecksum(ep)
	case "merkle":
		c, err = channel.WithMerkle(ep, channel.Segment(1024))
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var protections = []string{"none", "checksum", "merkle"}

// ring sends data(i) to the next rank and checks what comes from the
// previous one, for every i: with two ranks the sends cross.
func ring(ctx context.Context, c channel.Comm, sizes []int, seed uint64) error {
	r, p := c.Rank(), c.Size()
	next, prev := (r+1)%p, (r+p-1)%p
	for i, n := range sizes {
		if err := c.Send(ctx, next, 3, pattern(n, seed+uint64(i*1000+r))); err != nil {
			return fmt.Errorf("send %d (%d bytes): %w", i, n, err)
		}
		buf := make([]byte, n+1)
		st, err := c.Recv(ctx, prev, 3, buf)
		if err != nil {
			return fmt.Errorf("recv %d (%d bytes): %w", i, n, err)
		}
		if st.Len != n || st.Source != prev || !bytes.Equal(buf[:n], pattern(n, seed+uint64(i*1000+prev))) {
			return fmt.Errorf("message %d (%d bytes) from rank %d: %d bytes, not those sent", i, n, prev, st.Len)
		}
	}
	return channel.Flush(ctx, c)
}

// Sizes around the transport's edges: a frame in one message (≤ 16 KiB),
// a payload of its own, several frames (MaxFrame is 1 MiB).
var edgeSizes = []int{0, 1, 63, 64, 4096, 16 << 10, 16<<10 + 1, 1 << 20, 1<<20 + 1, 5<<20 + 3}

func TestPointToPoint(t *testing.T) {
	for _, how := range protections {
		t.Run(how, func(t *testing.T) {
			ep, ctx := job(t)
			if err := ring(ctx, protect(t, ep, how), edgeSizes, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCrossedSends: every rank sends every other large messages before
// receiving any; sends are eager, so none waits for the others.
func TestCrossedSends(t *testing.T) {
	for _, how := range protections {
		t.Run(how, func(t *testing.T) {
			ep, ctx := job(t)
			c := protect(t, ep, how)
			r, p := c.Rank(), c.Size()
			const n = 3<<20 + 5
			for d := range p {
				if d != r {
					if err := c.Send(ctx, d, 9, pattern(n, uint64(r*100+d))); err != nil {
						t.Fatal(err)
					}
				}
			}
			buf := make([]byte, n)
			for s := range p {
				if s == r {
					continue
				}
				if _, err := c.Recv(ctx, s, 9, buf); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf, pattern(n, uint64(s*100+r))) {
					t.Fatalf("from rank %d: not the bytes sent", s)
				}
			}
			if err := channel.Flush(ctx, c); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Sizes around the transport's ways of sending: in the frame's message,
// from the caller's memory, and several frames.
var waySizes = []int{0, 1, mpi.InlineMax, mpi.InlineMax + 1, 100 << 10, 256 << 10, 1 << 20, 1<<20 + 1, 3<<20 + 5}

// TestConcurrentSenders: several goroutines of every rank send to the
// next rank at once, each on its own tag, messages of every way's size;
// the next rank receives each goroutine's on a goroutine of its own.
// Every message comes whole and in its sender's order: a header and its
// payload pair up whatever the other goroutines send meanwhile.
func TestConcurrentSenders(t *testing.T) {
	for _, how := range protections {
		t.Run(how, func(t *testing.T) {
			ep, ctx := job(t)
			c := protect(t, ep, how)
			r, p := c.Rank(), c.Size()
			next, prev := (r+1)%p, (r+p-1)%p
			const senders, rounds = 4, 3
			errs := make(chan error, 2*senders)
			var wg sync.WaitGroup
			for g := range senders {
				wg.Go(func() {
					for k := range rounds {
						for i, n := range waySizes {
							if err := c.Send(ctx, next, 100+g, pattern(n, uint64(r<<20|g<<12|k<<8|i))); err != nil {
								errs <- fmt.Errorf("sender %d: %w", g, err)
								return
							}
						}
					}
				})
				wg.Go(func() {
					buf := make([]byte, 4<<20)
					for k := range rounds {
						for i, n := range waySizes {
							st, err := c.Recv(ctx, prev, 100+g, buf)
							if err != nil {
								errs <- fmt.Errorf("receiver %d: %w", g, err)
								return
							}
							if st.Len != n || !bytes.Equal(buf[:n], pattern(n, uint64(prev<<20|g<<12|k<<8|i))) {
								errs <- fmt.Errorf("receiver %d, round %d, message %d: %d bytes, not the %d sent", g, k, i, st.Len, n)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if err := channel.Flush(ctx, c); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestWindow: rank 0 sends rank 1 a window of non-blocking sends of
// every way's size, many in flight at once; rank 1 has posted receives
// for half of them and receives the rest only after they have come
// (they wait as unexpected messages), some of them from any source.
func TestWindow(t *testing.T) {
	ep, ctx := job(t)
	if ep.Rank() > 1 {
		return
	}
	const n = 64
	size := func(i int) int { return waySizes[i%len(waySizes)] }
	switch ep.Rank() {
	case 0:
		var reqs []*channel.Request
		for i := range n {
			reqs = append(reqs, channel.Isend(ctx, ep, 1, i, pattern(size(i), uint64(i))))
		}
		if err := channel.WaitAll(reqs...); err != nil {
			t.Fatal(err)
		}
	case 1:
		bufs := make([][]byte, n)
		var reqs []*channel.Request
		for i := 0; i < n; i += 2 {
			bufs[i] = make([]byte, size(i))
			reqs = append(reqs, channel.Irecv(ctx, ep, 0, i, bufs[i]))
		}
		time.Sleep(50 * time.Millisecond) // the rest come first
		for i := 1; i < n; i += 2 {
			bufs[i] = make([]byte, size(i))
			src := 0
			if i%4 == 1 {
				src = channel.AnySource
			}
			if _, err := ep.Recv(ctx, src, i, bufs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := channel.WaitAll(reqs...); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if !bytes.Equal(bufs[i], pattern(size(i), uint64(i))) {
				t.Fatalf("message %d (%d bytes): not the bytes sent", i, size(i))
			}
		}
	}
}

type collCase struct {
	Size, Root int
	Seed       uint64
}

func collGen(p int) gopter.Gen {
	return gopter.CombineGens(gen.IntRange(0, 3), gen.IntRange(0, 600<<10), gen.IntRange(0, p-1), gen.UInt64()).
		Map(func(v []any) collCase {
			size := []int{0, 1, 17, 1000}[v[0].(int)]
			if v[1].(int)%3 != 0 {
				size = v[1].(int)
			}
			return collCase{Size: size, Root: v[2].(int), Seed: v[3].(uint64)}
		})
}

// params are gopter's, the same on every rank (a fixed seed), and never
// shrinking: a rank that shrank alone would wait for the others forever.
func params(n int) *gopter.TestParameters {
	ps := gopter.DefaultTestParametersWithSeed(1)
	ps.MinSuccessfulTests = n
	ps.MaxShrinkCount = 0
	return ps
}

func blockOf(c collCase, r int) []byte { return pattern(c.Size, c.Seed+uint64(r)) }

// collectives runs Barrier, Bcast, Gather and Allgather for case c and
// checks every rank's bytes.
func collectives(ctx context.Context, cm channel.Comm, c collCase) error {
	r, p := cm.Rank(), cm.Size()
	if err := channel.Barrier(ctx, cm); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	buf := make([]byte, c.Size)
	if r == c.Root {
		copy(buf, blockOf(c, r))
	}
	if err := channel.Bcast(ctx, cm, c.Root, buf); err != nil {
		return fmt.Errorf("bcast: %w", err)
	}
	if !bytes.Equal(buf, blockOf(c, c.Root)) {
		return errors.New("bcast: wrong bytes")
	}
	want := make([]byte, 0, p*c.Size)
	for i := range p {
		want = append(want, blockOf(c, i)...)
	}
	all := make([]byte, p*c.Size)
	var recv []byte
	if r == c.Root {
		recv = all
	}
	if err := channel.Gather(ctx, cm, c.Root, blockOf(c, r), recv); err != nil {
		return fmt.Errorf("gather: %w", err)
	}
	if r == c.Root && !bytes.Equal(all, want) {
		return errors.New("gather: wrong bytes")
	}
	clear(all)
	if err := channel.Allgather(ctx, cm, blockOf(c, r), all); err != nil {
		return fmt.Errorf("allgather: %w", err)
	}
	if !bytes.Equal(all, want) {
		return errors.New("allgather: wrong bytes")
	}
	return nil
}

// TestCollectives: unprotected (MPI's own collectives) and under each
// layer, for random sizes and roots; the rank count is mpirun's -np.
func TestCollectives(t *testing.T) {
	for _, how := range protections {
		t.Run(how, func(t *testing.T) {
			ep, ctx := job(t)
			cm := protect(t, ep, how)
			props := gopter.NewProperties(params(20))
			props.Property("every rank gets exactly the right bytes", prop.ForAll(func(c collCase) string {
				if err := collectives(ctx, cm, c); err != nil {
					return fmt.Sprintf("rank %d, %+v: %v", ep.Rank(), c, err)
				}
				if err := channel.Flush(ctx, cm); err != nil {
					return err.Error()
				}
				return ""
			}, collGen(ep.Size())))
			props.TestingRun(t)
		})
	}
}

// TestCountZero: empty messages and collectives of empty blocks.
func TestCountZero(t *testing.T) {
	for _, how := range protections {
		t.Run(how, func(t *testing.T) {
			ep, ctx := job(t)
			cm := protect(t, ep, how)
			if err := ring(ctx, cm, []int{0, 0, 0}, 5); err != nil {
				t.Fatal(err)
			}
			for root := range cm.Size() {
				if err := collectives(ctx, cm, collCase{Size: 0, Root: root}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// stats sums every rank's injected and detected counts, through the
// protected comm (checked end to end, so the sums come whole), once every
// link is quiet: each rank's sends flushed, and an empty message each way
// on every link, twice, so that the control frames a rank sent before
// (a verdict asked for again, say) have been counted where they arrived.
// A barrier does not do it: on 4 ranks, a rank hears from two others.
func stats(ctx context.Context, cm channel.Comm, ep *channel.Endpoint) (injected, detected uint64, err error) {
	r, p := ep.Rank(), ep.Size()
	for range 2 {
		if err := channel.Flush(ctx, cm); err != nil {
			return 0, 0, err
		}
		for d := range p {
			if d != r {
				if err := ep.Send(ctx, d, 77, nil); err != nil {
					return 0, 0, err
				}
			}
		}
		for s := range p {
			if s != r {
				if _, err := ep.Recv(ctx, s, 77, nil); err != nil {
					return 0, 0, err
				}
			}
		}
	}
	st := ep.Stats()
	var mine [16]byte
	binary.LittleEndian.PutUint64(mine[:], st.Injected)
	binary.LittleEndian.PutUint64(mine[8:], st.Detected)
	all := make([]byte, 16*cm.Size())
	if err := channel.Allgather(ctx, cm, mine[:], all); err != nil {
		return 0, 0, err
	}
	for r := range cm.Size() {
		injected += binary.LittleEndian.Uint64(all[16*r:])
		detected += binary.LittleEndian.Uint64(all[16*r+8:])
	}
	return injected, detected, nil
}

type injCase struct {
	Sizes []int
	Seed  uint64
}

// TestInjection: with one frame in twenty corrupted on its way out of
// every rank, everything delivered is exactly what was sent, and every
// corrupted frame is caught.
func TestInjection(t *testing.T) {
	for _, how := range []string{"checksum", "merkle"} {
		t.Run(how, func(t *testing.T) {
			ep, ctx := job(t, channel.WithInjector(&channel.Injector{Rate: 0.05, Seed: 11}))
			cm := protect(t, ep, how)
			g := gopter.CombineGens(gen.SliceOfN(6, gen.IntRange(0, 3<<20)), gen.UInt64()).
				Map(func(v []any) injCase { return injCase{v[0].([]int), v[1].(uint64)} })
			props := gopter.NewProperties(params(8))
			props.Property("delivered = sent under faults", prop.ForAll(func(c injCase) string {
				if err := ring(ctx, cm, c.Sizes, c.Seed); err != nil {
					return err.Error()
				}
				if err := collectives(ctx, cm, collCase{Size: c.Sizes[0] / 4, Root: int(c.Seed % uint64(cm.Size())), Seed: c.Seed}); err != nil {
					return err.Error()
				}
				return ""
			}, g))
			props.TestingRun(t)
			if err := channel.Flush(ctx, cm); err != nil {
				t.Fatal(err)
			}
			if err := channel.Barrier(ctx, cm); err != nil {
				t.Fatal(err)
			}
			inj, det := settledStats(t, ctx, cm, ep)
			if inj == 0 || det != inj {
				t.Fatalf("%d frames corrupted, %d caught", inj, det)
			}
			t.Logf("%d frames corrupted, %d caught", inj, det)
		})
	}
}

// TestAnySourceRepair: rank 0 takes every other rank's messages as they
// come (AnySource), each repaired where the injector hit it.
func TestAnySourceRepair(t *testing.T) {
	ep, ctx := job(t, channel.WithInjector(&channel.Injector{Rate: 0.1, Seed: 3}))
	if inj, det := anySource(t, ctx, ep); inj == 0 || inj != det {
		t.Fatalf("%d frames corrupted, %d caught", inj, det)
	}
}

// TestAnySourceClean: the same with no injector: the transport damages
// nothing, so the Merkle layer catches nothing.
func TestAnySourceClean(t *testing.T) {
	ep, ctx := job(t)
	if inj, det := anySource(t, ctx, ep); inj != 0 || det != 0 {
		t.Fatalf("with no injector: %d frames corrupted, %d caught", inj, det)
	}
}

func anySource(t *testing.T, ctx context.Context, ep *channel.Endpoint) (injected, detected uint64) {
	t.Helper()
	cm := protect(t, ep, "merkle")
	r, p := cm.Rank(), cm.Size()
	const k = 12
	size := func(src, i int) int { return (src*7919 + i*104729) % (2 << 20) }
	if r != 0 {
		for i := range k {
			if err := cm.Send(ctx, 0, 4, pattern(size(r, i), uint64(r<<8|i))); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		next := make([]int, p) // per source, the next message: MPI keeps each source's order
		buf := make([]byte, 2<<20)
		for range k * (p - 1) {
			st, err := cm.Recv(ctx, channel.AnySource, 4, buf)
			if err != nil {
				t.Fatal(err)
			}
			i := next[st.Source]
			next[st.Source]++
			if st.Len != size(st.Source, i) || !bytes.Equal(buf[:st.Len], pattern(st.Len, uint64(st.Source<<8|i))) {
				t.Fatalf("message %d from rank %d: not the bytes sent", i, st.Source)
			}
		}
	}
	return settledStats(t, ctx, cm, ep)
}

// settledStats is stats once the counts agree, or after three tries: a
// control frame that its sender's control goroutine sends late (a
// verdict asked for again) can still be on its way after the links are
// flushed, and is counted where it arrives. Every rank sees the same sums,
// so all try as often.
func settledStats(t *testing.T, ctx context.Context, cm channel.Comm, ep *channel.Endpoint) (injected, detected uint64) {
	t.Helper()
	for try := range 3 {
		inj, det, err := stats(ctx, cm, ep)
		if err != nil {
			t.Fatal(err)
		}
		if inj == det || try == 2 {
			return inj, det
		}
		time.Sleep(50 * time.Millisecond)
	}
	panic("unreachable")
}

// TestTruncatedFrame: a frame shorter than its header says (small, or a
// large payload) breaks the link at both ends, as a malformed frame over
// TCP does: a *PeerError, never a hang or a wrong message.
func TestTruncatedFrame(t *testing.T) {
	for _, n := range []int{100, 2 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			job(t) // its closing barrier: the endpoint below breaks its link
			ep, ctx := connect(t, channel.WithInjector(&channel.Injector{Rate: 1, Fault: channel.Truncate, Ranks: []int{1}, Tags: []int{7}}))
			var pe *channel.PeerError
			switch ep.Rank() {
			case 1:
				if err := ep.Send(ctx, 0, 7, make([]byte, n)); err != nil && !errors.As(err, &pe) {
					t.Fatal(err)
				}
				// The link is gone once rank 0's word of it comes.
				for {
					err := ep.Send(ctx, 0, 8, []byte("more"))
					if errors.As(err, &pe) && pe.Rank == 0 {
						break
					}
					if err != nil {
						t.Fatalf("send after the link broke: %v", err)
					}
					time.Sleep(time.Millisecond)
				}
			case 0:
				_, err := ep.Recv(ctx, 1, 7, make([]byte, n))
				if !errors.As(err, &pe) || pe.Rank != 1 || !errors.Is(err, channel.ErrProtocol) {
					t.Fatalf("a truncated frame gave %v", err)
				}
			}
		})
	}
}

// TestPeerClosed: a rank that closes its endpoint is lost to the others.
func TestPeerClosed(t *testing.T) {
	job(t)
	ep, ctx := connect(t)
	if ep.Rank() == 1 {
		ep.Close()
		return
	}
	_, err := ep.Recv(ctx, 1, 0, nil)
	var pe *channel.PeerError
	if !errors.As(err, &pe) || pe.Rank != 1 || !errors.Is(err, mpi.ErrPeerClosed) {
		t.Fatalf("a receive from a closed rank gave %v", err)
	}
}

// TestProgressUnderLoad: small and large messages go back and forth
// while a goroutine spins without yielding (Go preempts it with SIGURG,
// which also lands in MPI calls) and another churns the heap with a GC
// every few milliseconds (more signals, and stops of the world): every
// message arrives whole, and the spinner gets its share of the
// processor.
func TestProgressUnderLoad(t *testing.T) {
	ep, ctx := job(t)
	r, p := ep.Rank(), ep.Size()
	var spins atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for n := int64(1); ; n++ {
			if n%(1<<16) == 0 {
				spins.Add(1 << 16)
				select {
				case <-stop:
					return
				default:
				}
			}
		}
	})
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var keep [][]byte
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for range 16 {
				keep = append(keep, make([]byte, 64<<10))
			}
			keep = keep[:0]
			runtime.GC()
		}
	})
	start := time.Now()
	err := ring(ctx, ep, append(make([]int, 100), 100, 20000, 2<<20, 1, 2<<20), 8)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if spins.Load() == 0 {
		t.Fatal("the busy goroutine never ran")
	}
	t.Logf("rank %d of %d: %v, the spinner counted %d", r, p, time.Since(start), spins.Load())
}

// TestNode: ranks on one host share a node number, others not.
func TestNode(t *testing.T) {
	ep, ctx := job(t)
	host, _ := os.Hostname()
	var mine [64]byte
	copy(mine[:], host)
	all := make([]byte, 64*ep.Size())
	if err := channel.Allgather(ctx, ep, mine[:], all); err != nil {
		t.Fatal(err)
	}
	for a := range ep.Size() {
		for b := range ep.Size() {
			same := bytes.Equal(all[64*a:64*a+64], all[64*b:64*b+64])
			if (mpi.Node(a) == mpi.Node(b)) != same {
				t.Fatalf("ranks %d and %d: nodes %d and %d, same host %v", a, b, mpi.Node(a), mpi.Node(b), same)
			}
		}
	}
	if mpi.Node(0) != 0 || mpi.Node(-1) != -1 || mpi.Node(ep.Size()) != -1 {
		t.Fatalf("Node(0) %d, Node(-1) %d, Node(size) %d", mpi.Node(0), mpi.Node(-1), mpi.Node(ep.Size()))
	}
}

var die = flag.Bool("mpi.die", false, "TestDeadRank: rank 1 exits in the middle of the job (run alone: mpirun then ends the job)")

// TestDeadRank, with -mpi.die, has rank 1 exit while rank 0 waits for
// its message: Open MPI 4.1 ends the whole job (mpirun reports the rank
// that exited); nothing is left hanging. CI checks that mpirun returns,
// non-zero, in time.
func TestDeadRank(t *testing.T) {
	if !*die {
		t.Skip("only with -mpi.die")
	}
	ep, ctx := connect(t)
	if ep.Rank() == 1 {
		os.Exit(3)
	}
	_, err := ep.Recv(ctx, 1, 0, nil)
	t.Fatalf("rank %d: a receive from the rank that died ended with %v", ep.Rank(), err)
}
