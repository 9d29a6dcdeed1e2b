package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"strconv"
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
	// Silent: a protected send ended with channel.ErrSilent, its
	// receiver having said nothing through all its probes (a process
	// starved of processor time): the sender cannot know what the
	// receiver got, and agreement is not asked either.
	Silent  bool
	Ops     int    // operations run, on all ranks
	Failed  int    // operations that ended in an error (cleanly, within the deadline)
	Damaged int    // unprotected receives that delivered damaged bytes (expected under faults)
	Memory  string // the heap past its bound, if it went there
	// Errors are those the operations returned (up to 20 a rank, each
	// after its rank): in process all ranks', from RunProcess this
	// process's rank's. They explain a bad schedule without a replay.
	Errors []string

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

// outcome is how a send or a receive ended, as the judge needs it.
type outcome uint8

const (
	succeeded outcome = iota
	discarded         // channel.ErrDiscarded: the receiver threw the message away
	errored           // any other error
)

func outcomeOf(err error) outcome {
	switch {
	case err == nil:
		return succeeded
	case errors.Is(err, channel.ErrDiscarded):
		return discarded
	}
	return errored
}

// msgResult is a message of a point-to-point step as one rank saw it:
// the sender fills the send's half, the receiver the receive's.
type msgResult struct {
	sent, received bool // the send, the receive ran (a killed rank runs neither)
	send, recv     outcome
	ok             bool // the receive delivered the bytes sent
}

// rankReport is what one rank saw of a schedule. The judge reads the
// reports of all ranks together; over Open MPI they travel between the
// processes (encode, decodeReport).
type rankReport struct {
	ops, failed int  // operations run, and those that ended in an error
	wrongColl   int  // collectives (protected) that delivered other bytes than were sent
	flushErrs   int  // Flush's errors, a discarded message's left out (judged with it)
	lost        bool // an operation failed because a link broke
	silent      bool // a send ended with channel.ErrSilent
	detected    uint64
	repaired    uint64
	injected    [kinds]int // faults that hit a frame this rank sent
	heap        uint64     // how far the heap grew (in process: one report carries the job's)
	heapMoved   int64      // the bytes moved meanwhile by the jobs in flight in its process, its job's among them: heap's bound
	msgs        [][]msgResult
	errs        []string // what the operations returned (Result.Errors); not encoded
}

// runRank runs rank r's part of schedule s on comm (t, its Typed layer,
// on the "typed" layer), then its Flush. current follows the op it is
// in, for a hang's report (-1 once done). A rank that the schedule kills
// closes ep before its op and stops.
func runRank(ctx context.Context, s Schedule, r int, ep *channel.Endpoint, comm channel.Comm, t *channel.Typed, current *atomic.Int64) *rankReport {
	rep := &rankReport{msgs: make([][]msgResult, len(s.Ops))}
	for i, op := range s.Ops {
		rep.msgs[i] = make([]msgResult, len(op.Msgs))
	}
	var lost, silent atomic.Bool
	var errMu sync.Mutex
	note := func(err error) {
		if err == nil {
			return
		}
		if Trace != nil {
			fmt.Fprintf(Trace, "chaos: seed %d: rank %d: %v\n", s.Seed, r, err)
		}
		errMu.Lock()
		if len(rep.errs) < 20 {
			rep.errs = append(rep.errs, fmt.Sprintf("rank %d: %v", r, err))
		}
		errMu.Unlock()
		if errors.Is(err, channel.ErrPeerLost) || errors.Is(err, channel.ErrClosed) {
			lost.Store(true)
		}
		if errors.Is(err, channel.ErrSilent) {
			silent.Store(true)
		}
	}
	defer func() {
		rep.lost = rep.lost || lost.Load()
		rep.silent = silent.Load()
		current.Store(-1)
	}()
	for i, op := range s.Ops {
		current.Store(int64(i))
		if s.Kill == r && s.KillAt == i {
			ep.Close()
			rep.lost = true
			return rep
		}
		octx, ocancel := context.WithTimeout(ctx, opTimeout)
		n, f, w := runOp(octx, s, i, op, r, comm, t, rep.msgs[i], note)
		ocancel()
		rep.ops += n
		rep.failed += f
		rep.wrongColl += w
	}
	current.Store(int64(len(s.Ops))) // in Flush
	fctx, fcancel := context.WithTimeout(ctx, opTimeout)
	defer fcancel()
	if err := channel.Flush(fctx, comm); err != nil {
		note(err)
		errs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		for _, e := range errs {
			if !errors.Is(e, channel.ErrDiscarded) { // a Short message's, judged with it
				rep.flushErrs++
			}
		}
	}
	return rep
}

// layer puts the schedule's protection layer on ep.
func layer(s Schedule, ep *channel.Endpoint) (channel.Comm, *channel.Typed) {
	var c channel.Comm = ep
	var err error
	switch s.Layer {
	case "none":
		return ep, nil
	case "checksum":
		c, err = channel.WithChecksum(ep, channel.Chunk(16<<10))
	default:
		c, err = channel.WithMerkle(ep, channel.Segment(2048))
	}
	if err != nil {
		panic(err) // the options are this package's: a bug
	}
	if s.Layer == "typed" {
		return c, channel.WithTypes(c, nil)
	}
	return c, nil
}

// moved returns the bytes a schedule moves, for the memory bound.
func moved(s Schedule) int64 {
	var n int64
	for _, op := range s.Ops {
		for _, m := range op.Msgs {
			n += int64(m.Size)
		}
		n += int64(op.Size * s.P * s.P)
	}
	return n
}

// heapBound is how far the heap of a process may grow while the jobs in
// it move this many bytes: a job's, one of its processes', or several
// jobs' run side by side (heap.go).
func heapBound(moved int64) uint64 { return uint64(64<<20 + 8*moved) }

// judge checks every rank's report of schedule s against the channel's
// promises and counts what happened.
func judge(s Schedule, reps []*rankReport) Result {
	var res Result
	res.LinkLost = s.Kill >= 0
	sendFail, recvFail := 0, 0
	for r, rep := range reps {
		res.Ops += rep.ops
		res.Failed += rep.failed
		res.Wrong += rep.wrongColl
		res.LinkLost = res.LinkLost || rep.lost
		res.Silent = res.Silent || rep.silent
		res.Detected += rep.detected
		res.Repaired += rep.repaired
		for k := range kinds {
			res.Injected[k] += rep.injected[k]
		}
		sendFail += rep.flushErrs
		if n := max(rep.heapMoved, moved(s)); rep.heap > heapBound(n) && res.Memory == "" {
			res.Memory = fmt.Sprintf("rank %d: heap grew by %d bytes for %d bytes moved", r, rep.heap, n)
			if n > moved(s) {
				res.Memory += fmt.Sprintf(" (%d of them by jobs run beside it)", n-moved(s))
			}
		}
	}
	for i, op := range s.Ops {
		for j, m := range op.Msgs {
			// The send's half from its sender, the receive's from its
			// receiver.
			snd, rcv := reps[m.Src].msgs[i][j], reps[m.Dst].msgs[i][j]
			if !snd.sent || !rcv.received {
				continue // a side died first
			}
			switch {
			case m.Short:
				// Thrown away by the receiver: its receive fails, the
				// send fails with a DiscardError or (verified before the
				// receive came) succeeds.
				if rcv.recv == succeeded {
					res.Wrong++
				}
				if snd.send == errored {
					sendFail++
					recvFail++ // the pair is counted as failed on both sides
				}
				continue
			case rcv.recv == succeeded && !rcv.ok:
				if s.Layer == "none" {
					res.Damaged++
				} else {
					res.Wrong++
				}
			}
			if snd.send != succeeded {
				sendFail++
			}
			if rcv.recv != succeeded {
				recvFail++
			}
		}
	}
	if s.Layer != "none" && !res.LinkLost && !res.Silent && sendFail != recvFail {
		res.Disagree = 1
	}
	return res
}

// Run runs a schedule with all its ranks in this process, and checks it.
// openers lets drops and reorders hit the first frame of a message (see
// injector). Schedules may run side by side, each in its own call.
func Run(s Schedule, openers bool) (res Result) {
	labeled(s, func() { res = run(s, openers) })
	return res
}

// labeled runs f with the label chaos.seed on its goroutines, those it
// starts and theirs (the channel's own among them), so that a hang's
// report picks the stacks of its schedule out of those of the schedules
// run beside it (stacks).
func labeled(s Schedule, f func()) {
	pprof.Do(context.Background(), pprof.Labels("chaos.seed", strconv.FormatUint(s.Seed, 10)), func(context.Context) { f() })
}

func run(s Schedule, openers bool) (res Result) {
	in := newInjector(s.Faults)
	in.openers = openers
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var eps []*channel.Endpoint
	var err error
	var px *proxy
	if s.Transport == "tcp" {
		eps, px, err = newTCP(ctx, s.P, s.Strangers, in, channel.WithProbe(2*probe))
	} else {
		eps, _, err = newInProcess(s.P, in, channel.WithProbe(probe))
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

	heapGrowth := heapWatch.watch(moved(s))
	reps := make([]*rankReport, s.P)
	current := make([]atomic.Int64, s.P) // the op each rank is in, for a hang's report
	var wg sync.WaitGroup
	for r := range s.P {
		comm, typed := layer(s, eps[r])
		wg.Go(func() { reps[r] = runRank(ctx, s, r, eps[r], comm, typed, &current[r]) })
	}
	if res.Hang = await(&wg, s, current); res.Hang != "" {
		return res
	}
	reps[0].heap, reps[0].heapMoved = heapGrowth()
	var errs []string
	for r, ep := range eps {
		st := ep.Stats()
		reps[r].detected, reps[r].repaired = st.Detected, st.Repaired
		reps[r].injected = in.injected(r)
		errs = append(errs, reps[r].errs...) // not encoded
		// Judged as RunProcess judges them, after their encoding, so
		// that every schedule checks the codec the MPI campaign needs.
		if reps[r], err = decodeReport(s, reps[r].encode(s)); err != nil {
			panic(fmt.Sprintf("chaos: rank %d's report: %v", r, err)) // a bug of this package
		}
	}
	res = judge(s, reps)
	res.Errors = errs
	return res
}

// hangAfter is how long the ranks of s may take for their part, each
// operation and the Flush within its deadline, before they are taken to
// hang.
func hangAfter(s Schedule) time.Duration {
	return time.Duration(len(s.Ops)+2)*opTimeout + 5*time.Second
}

// await waits for the ranks of wg to finish their part of s within the
// time its operations may take, and else describes the hang.
func await(wg *sync.WaitGroup, s Schedule, current []atomic.Int64) string {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	limit := hangAfter(s)
	select {
	case <-done:
		return ""
	case <-time.After(limit):
	}
	hang := ""
	for r := range current {
		if i := current[r].Load(); i >= 0 {
			where := fmt.Sprintf("op %d", i)
			if int(i) == len(s.Ops) {
				where = "its Flush"
			}
			hang = fmt.Sprintf("rank %d still in %s after %v", r, where, limit)
			break
		}
	}
	return hang + "\n" + stacks(s.Seed)
}

// runOp runs op i on rank r: it returns the operations it ran, how many
// failed, and how many delivered wrong bytes (collectives; messages are
// judged from msgs).
func runOp(ctx context.Context, s Schedule, i int, op Op, r int, c channel.Comm, t *channel.Typed,
	msgs []msgResult, note func(error)) (n, failed, wrong int) {
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
				msgs[j].send, msgs[j].sent = outcomeOf(err), true
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
		msgs[j].recv, msgs[j].ok, msgs[j].received = outcomeOf(err), ok, true
	}
	wg.Wait()
	for j, m := range op.Msgs {
		if m.Src == r && msgs[j].send != succeeded || m.Dst == r && msgs[j].recv != succeeded {
			failed++
		}
	}
	return n, failed, 0
}

// Trace, if set, receives every error an operation returns (the
// campaign's -chaos.v).
var Trace io.Writer

// stacks returns the stacks of the goroutines of schedule seed that are
// in package channel or in this one, for a hang's report: the goroutine
// that is stuck, and the one holding what it waits for, are among them.
// Their schedule is told by their label (labeled) where tracebacks show
// labels (GODEBUG=tracebacklabels=1, as the campaign's tests set it);
// elsewhere, and for the goroutines that carry no label (those a timer
// starts), all those in package channel are given, whichever schedule
// they are of.
func stacks(seed uint64) string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	mine := fmt.Sprintf(`"chaos.seed": "%d"`, seed)
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if strings.Contains(head, `"chaos.seed": `) && !strings.Contains(head, mine) {
			continue // another schedule's
		}
		if strings.Contains(g, "sigcheck/channel") && !strings.Contains(g, "chaos.stacks(") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
