package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/sig"
)

// Result is what one schedule did.
type Result struct {
	Injected [kinds]int // faults that hit a frame, by kind
	Hang     string     // an operation still blocked past its deadline, if any
	Wrong    int        // receives on a protected layer that delivered other bytes than were sent
	Disagree int        // protected transfers whose sides disagree with no link lost
	LinkLost bool       // a link broke (a frame refused, a peer killed): agreement is not asked then
	Ops      int        // operations run, on all ranks
	Failed   int        // operations that ended in an error (cleanly, within the deadline)
	Damaged  int        // unprotected receives that delivered damaged bytes (expected under faults)
	Memory   string     // the heap past its bound, if it went there

	Detected, Repaired uint64 // the endpoints' counters
}

// Bad says whether the result breaks a promise.
func (r Result) Bad() bool {
	return r.Hang != "" || r.Wrong > 0 || r.Disagree > 0 || r.Memory != ""
}

// Timing of a run: the wait before a protected send probes, and the
// deadline of each operation.
const (
	probe     = 10 * time.Millisecond
	opTimeout = 3 * time.Second
)

func data(seed uint64, id, n int) []byte {
	b := make([]byte, n)
	x := seed ^ uint64(id)*0x9e3779b97f4a7c15
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

type msgResult struct {
	sendErr, recvErr error
	sent, received   bool // the send, the receive ran (a killed rank runs neither)
	ok               bool // the receive delivered the bytes sent
}

// Run runs a schedule and checks it. openers lets drops and reorders hit
// the first frame of a message (see injector).
func Run(s Schedule, openers bool) (res Result) {
	in := newInjector(s.Faults)
	in.openers = openers
	opts := []channel.TransportOption{channel.WithProbe(probe)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var eps []*channel.Endpoint
	var err error
	var px *proxy
	if s.Transport == "tcp" {
		eps, px, err = newTCP(ctx, s.P, s.Strangers, in, channel.WithProbe(2*probe))
	} else {
		eps, _, err = newInProcess(s.P, in, opts...)
	}
	if err != nil {
		res.Hang = fmt.Sprintf("the job did not form: %v", err)
		return res
	}
	defer func() {
		closeAll := func() {
			for _, ep := range eps {
				ep.Close()
			}
			if px != nil {
				px.close()
			}
		}
		if res.Hang != "" {
			// The goroutines that hung may hold what Close needs: waiting
			// for it would turn a reported hang into a test timeout that
			// names no seed.
			go closeAll()
			return
		}
		closeAll()
	}()

	comms := make([]channel.Comm, s.P)
	typed := make([]*channel.Typed, s.P)
	for r, ep := range eps {
		switch s.Layer {
		case "none":
			comms[r] = ep
		case "checksum":
			comms[r], err = channel.WithChecksum(ep, channel.Chunk(16<<10))
		default:
			comms[r], err = channel.WithMerkle(ep, channel.Segment(2048))
		}
		if err != nil {
			panic(err) // the options are this package's: a bug
		}
		if s.Layer == "typed" {
			typed[r] = channel.WithTypes(comms[r], nil)
		}
	}

	// Message results, by op and message.
	msgs := make([][]msgResult, len(s.Ops))
	for i, op := range s.Ops {
		msgs[i] = make([]msgResult, len(op.Msgs))
	}
	var mu sync.Mutex
	flushErrs := 0
	var wrongColl, failed, ops int
	var lost atomic.Bool
	note := func(err error) {
		if err != nil && Trace != nil {
			fmt.Fprintf(Trace, "chaos: seed %d: %v\n", s.Seed, err)
		}
		if errors.Is(err, channel.ErrPeerLost) || errors.Is(err, channel.ErrClosed) {
			lost.Store(true)
		}
	}
	current := make([]atomic.Int64, s.P) // the op each rank is in, for a hang's report
	var moved int64
	for _, op := range s.Ops {
		for _, m := range op.Msgs {
			moved += int64(m.Size)
		}
		moved += int64(op.Size * s.P * s.P)
	}

	peak := watchHeap()
	var wg sync.WaitGroup
	done := make(chan struct{})
	for r := range s.P {
		wg.Go(func() {
			for i, op := range s.Ops {
				current[r].Store(int64(i))
				if s.Kill == r && s.KillAt == i {
					eps[r].Close()
					lost.Store(true)
					return
				}
				octx, ocancel := context.WithTimeout(ctx, opTimeout)
				n, f, w := runOp(octx, s, i, op, r, comms[r], typed[r], msgs[i], &mu, note)
				ocancel()
				mu.Lock()
				ops += n
				failed += f
				wrongColl += w
				mu.Unlock()
			}
			current[r].Store(-1)
			fctx, fcancel := context.WithTimeout(ctx, opTimeout)
			defer fcancel()
			if err := channel.Flush(fctx, comms[r]); err != nil {
				note(err)
				errs := []error{err}
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					errs = j.Unwrap()
				}
				n := 0
				for _, e := range errs {
					if !errors.Is(e, channel.ErrDiscarded) { // a Short message's, judged with it
						n++
					}
				}
				mu.Lock()
				flushErrs += n
				mu.Unlock()
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	limit := time.Duration(len(s.Ops)+2)*opTimeout + 5*time.Second
	select {
	case <-done:
	case <-time.After(limit):
		for r := range s.P {
			if i := current[r].Load(); i >= 0 {
				res.Hang = fmt.Sprintf("rank %d still in op %d after %v", r, i, limit)
				break
			}
		}
		if res.Hang == "" {
			res.Hang = fmt.Sprintf("a rank still in its Flush after %v", limit)
		}
		res.Hang += "\n" + stacks()
		return res
	}
	if p := peak(); p > uint64(64<<20+8*moved) {
		res.Memory = fmt.Sprintf("heap grew by %d bytes for %d bytes moved", p, moved)
	}

	res.Injected = in.injected()
	res.LinkLost = lost.Load() || s.Kill >= 0
	res.Ops, res.Failed, res.Wrong = ops, failed, wrongColl
	for _, ep := range eps {
		st := ep.Stats()
		res.Detected += st.Detected
		res.Repaired += st.Repaired
	}
	sendFail, recvFail := flushErrs, 0
	for i, op := range s.Ops {
		for j, m := range op.Msgs {
			mr := msgs[i][j]
			if !mr.sent || !mr.received {
				continue // a side died first
			}
			switch {
			case m.Short:
				// Thrown away by the receiver: its receive fails, the
				// send fails with a DiscardError or (verified before the
				// receive came) succeeds.
				if mr.recvErr == nil {
					res.Wrong++
				}
				if mr.sendErr != nil && !errors.Is(mr.sendErr, channel.ErrDiscarded) {
					sendFail++
					recvFail++ // the pair is counted as failed on both sides
				}
				continue
			case mr.recvErr == nil && !mr.ok:
				if s.Layer == "none" {
					res.Damaged++
				} else {
					res.Wrong++
				}
			}
			if mr.sendErr != nil {
				sendFail++
			}
			if mr.recvErr != nil {
				recvFail++
			}
		}
	}
	if s.Layer != "none" && !res.LinkLost && sendFail != recvFail {
		res.Disagree = 1
	}
	return res
}

// runOp runs op i on rank r: it returns the operations it ran, how many
// failed, and how many delivered wrong bytes (collectives; messages are
// judged from msgs).
func runOp(ctx context.Context, s Schedule, i int, op Op, r int, c channel.Comm, t *channel.Typed,
	msgs []msgResult, mu *sync.Mutex, note func(error)) (n, failed, wrong int) {
	switch op.Coll {
	case "bcast":
		want := data(s.Seed, 1000+i, op.Size)
		buf := make([]byte, op.Size)
		if r == op.Root {
			copy(buf, want)
		}
		err := channel.Bcast(ctx, c, op.Root, buf)
		note(err)
		if err != nil {
			return 1, 1, 0
		}
		if !bytes.Equal(buf, want) && s.Layer != "none" {
			return 1, 0, 1
		}
		return 1, 0, 0
	case "allgather":
		recv := make([]byte, op.Size*s.P)
		err := channel.Allgather(ctx, c, data(s.Seed, 2000+i*64+r, op.Size), recv)
		note(err)
		if err != nil {
			return 1, 1, 0
		}
		for k := range s.P {
			if !bytes.Equal(recv[k*op.Size:(k+1)*op.Size], data(s.Seed, 2000+i*64+k, op.Size)) && s.Layer != "none" {
				return 1, 0, 1
			}
		}
		return 1, 0, 0
	}
	var wg sync.WaitGroup
	bytesT, _ := sig.Contiguous(1, sig.Byte)
	for j, m := range op.Msgs {
		tag := i*100 + j
		if m.Src == r {
			n++
			wg.Go(func() {
				b := data(s.Seed, tag, m.Size)
				var err error
				if t != nil {
					err = t.Send(ctx, m.Dst, tag, b, bytesT, uint64(len(b)))
				} else {
					err = c.Send(ctx, m.Dst, tag, b)
				}
				note(err)
				mu.Lock()
				msgs[j].sendErr, msgs[j].sent = err, true
				mu.Unlock()
			})
		}
	}
	for j, m := range op.Msgs {
		if m.Dst != r {
			continue
		}
		n++
		tag := i*100 + j
		src := m.Src
		if m.Any {
			src = channel.AnySource
		}
		size := m.Size
		if m.Short {
			size /= 2
		}
		buf := make([]byte, size)
		var st channel.Status
		var err error
		if t != nil {
			st, err = t.Recv(ctx, src, tag, buf, bytesT, uint64(size))
		} else {
			st, err = c.Recv(ctx, src, tag, buf)
		}
		note(err)
		ok := err == nil && st.Len == m.Size && st.Source == m.Src && bytes.Equal(buf[:st.Len], data(s.Seed, tag, m.Size))
		mu.Lock()
		msgs[j].recvErr, msgs[j].ok, msgs[j].received = err, ok, true
		mu.Unlock()
	}
	wg.Wait()
	mu.Lock()
	for j, m := range op.Msgs {
		if m.Src == r && msgs[j].sendErr != nil || m.Dst == r && msgs[j].recvErr != nil {
			failed++
		}
	}
	mu.Unlock()
	return n, failed, 0
}

// watchHeap samples the heap until the returned function is called, which
// returns how far it grew.
func watchHeap() func() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak.Load()
	}
}

// Trace, if set, receives every error an operation returns (the
// campaign's -chaos.v).
var Trace io.Writer

// stacks returns the stacks of the goroutines that are in package
// channel or in this one, for a hang's report: the goroutine that is
// stuck, and the one holding what it waits for, are among them.
func stacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "sigcheck/channel") && !strings.Contains(g, "chaos.stacks(") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
