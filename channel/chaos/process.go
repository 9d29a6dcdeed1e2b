package chaos

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// Process is this process's place in a job whose ranks are processes of
// their own (Open MPI's, under mpirun): the campaign runs one rank here
// and learns what the others saw through Ctl.
type Process struct {
	// Connect makes this rank's endpoint of a new job with opts (the
	// faults go in as a transport wrapper); every process calls it once
	// per schedule, in the same order, as mpi.Connect requires.
	Connect func(ctx context.Context, opts ...channel.TransportOption) (*channel.Endpoint, error)
	// Ctl carries the campaign's own traffic (a barrier, the reports)
	// between the same processes, untouched by the faults: an endpoint
	// of the job made without them.
	Ctl channel.Comm
}

// RunProcess runs this process's rank of schedule s (DrawMPI, with the
// job's size), gathers every rank's report and judges the job as Run
// does: every process returns the same Result. The faults are made by a
// wrapper of each rank's transport, on the frames that rank sends; the
// rank a schedule kills closes its endpoint (a process that exits ends an
// Open MPI 4 job, which the MPI suite checks apart). A rank that hangs
// returns at once with Hang set and without the others', which then
// wait for it: the caller must end the job.
func RunProcess(s Schedule, openers bool, p Process) (res Result, err error) {
	labeled(s, func() { res, err = runProcess(s, openers, p) })
	return res, err
}

func runProcess(s Schedule, openers bool, p Process) (Result, error) {
	in := newInjector(s.Faults)
	in.openers = openers
	ctx, cancel := context.WithTimeout(context.Background(), hangAfter(s)+20*time.Second) // room for the job to form and the reports
	defer cancel()
	ep, err := p.Connect(ctx, channel.WithProbe(2*probe), wrapFaults(in))
	if err != nil {
		return Result{}, fmt.Errorf("chaos: seed %d: the job did not form: %w", s.Seed, err)
	}
	r := ep.Rank()
	if ep.Size() != s.P {
		ep.Close()
		return Result{}, fmt.Errorf("chaos: seed %d drawn for %d ranks, run on %d", s.Seed, s.P, ep.Size())
	}
	comm, typed := layer(s, ep)
	heapGrowth := heapWatch.watch(moved(s))
	current := make([]atomic.Int64, s.P)
	for i := range current {
		current[i].Store(-1) // the other ranks are not this process's to report
	}
	var rep *rankReport
	var wg sync.WaitGroup
	wg.Go(func() { rep = runRank(ctx, s, r, ep, comm, typed, &current[r]) })
	if hang := await(&wg, s, current); hang != "" {
		go ep.Close()                  // a hung goroutine may hold what Close needs
		return Result{Hang: hang}, nil // (rep is the hung goroutine's)
	}
	defer ep.Close()
	// Every rank's operations are over: the counters are whole.
	if err := channel.Barrier(ctx, p.Ctl); err != nil {
		return Result{}, fmt.Errorf("chaos: seed %d: the closing barrier: %w", s.Seed, err)
	}
	rep.heap, rep.heapMoved = heapGrowth()
	st := ep.Stats()
	rep.detected, rep.repaired = st.Detected, st.Repaired
	rep.injected = in.injected(r)
	all := make([]byte, s.P*reportSize(s))
	if err := channel.Allgather(ctx, p.Ctl, rep.encode(s), all); err != nil {
		return Result{}, fmt.Errorf("chaos: seed %d: gathering the reports: %w", s.Seed, err)
	}
	reps := make([]*rankReport, s.P)
	for k := range reps {
		if reps[k], err = decodeReport(s, all[k*reportSize(s):(k+1)*reportSize(s)]); err != nil {
			return Result{}, fmt.Errorf("chaos: seed %d: rank %d's report: %w", s.Seed, k, err)
		}
	}
	res := judge(s, reps)
	res.Errors = rep.errs
	return res, nil
}

// A report on the wire, little-endian: ops, failed, wrongColl and
// flushErrs (4 bytes each), lost and silent (1: bits 0 and 1), detected,
// repaired, heap and heapMoved (8 each), the faults injected by kind (4
// each), then a byte per message of the schedule, op by op: bit 0 sent,
// 1 received, 2 ok, 3–4 the send's outcome, 5–6 the receive's.
const reportHead = 4*4 + 1 + 4*8 + 4*int(kinds)

func reportSize(s Schedule) int {
	n := reportHead
	for _, op := range s.Ops {
		n += len(op.Msgs)
	}
	return n
}

func (rep *rankReport) encode(s Schedule) []byte {
	b := make([]byte, 0, reportSize(s))
	for _, v := range []int{rep.ops, rep.failed, rep.wrongColl, rep.flushErrs} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	var flags byte
	if rep.lost {
		flags |= 1
	}
	if rep.silent {
		flags |= 2
	}
	b = append(b, flags)
	for _, v := range []uint64{rep.detected, rep.repaired, rep.heap, uint64(rep.heapMoved)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	for _, v := range rep.injected {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	for i := range s.Ops {
		for _, m := range rep.msgs[i] {
			var c byte
			if m.sent {
				c |= 1
			}
			if m.received {
				c |= 2
			}
			if m.ok {
				c |= 4
			}
			c |= byte(m.send)<<3 | byte(m.recv)<<5
			b = append(b, c)
		}
	}
	return b
}

// decodeReport reads a report of schedule s that encode wrote.
func decodeReport(s Schedule, b []byte) (*rankReport, error) {
	if len(b) != reportSize(s) {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), reportSize(s))
	}
	u32 := func() int { v := binary.LittleEndian.Uint32(b); b = b[4:]; return int(v) }
	u64 := func() uint64 { v := binary.LittleEndian.Uint64(b); b = b[8:]; return v }
	rep := &rankReport{ops: u32(), failed: u32(), wrongColl: u32(), flushErrs: u32()}
	if b[0] > 3 {
		return nil, fmt.Errorf("flags %#x", b[0])
	}
	rep.lost, rep.silent, b = b[0]&1 != 0, b[0]&2 != 0, b[1:]
	rep.detected, rep.repaired, rep.heap, rep.heapMoved = u64(), u64(), u64(), int64(u64())
	for k := range rep.injected {
		rep.injected[k] = u32()
	}
	rep.msgs = make([][]msgResult, len(s.Ops))
	for i, op := range s.Ops {
		rep.msgs[i] = make([]msgResult, len(op.Msgs))
		for j := range op.Msgs {
			c := b[0]
			b = b[1:]
			send, recv := outcome(c>>3&3), outcome(c>>5&3)
			if c>>7 != 0 || send > errored || recv > errored {
				return nil, fmt.Errorf("op %d message %d: bad code %#x", i, j, c)
			}
			rep.msgs[i][j] = msgResult{sent: c&1 != 0, received: c&2 != 0, ok: c&4 != 0, send: send, recv: recv}
		}
	}
	return rep, nil
}
