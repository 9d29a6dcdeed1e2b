package chaos

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/sigcheck/sigcheck/channel"
)

// TestReportCodec: a report comes out of its encoding as it went in,
// every field and every message's outcome, and a report of the wrong
// size or with a code no encoder writes is refused.
func TestReportCodec(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		s := DrawMPI(seed, 4)
		rep := &rankReport{ops: 1 << 20, failed: 7, wrongColl: 3, flushErrs: 2, lost: seed%2 == 0, silent: seed%3 == 0,
			detected: 1<<40 + seed, repaired: 1 << 33, heap: 1<<50 + 5, heapMoved: 1<<45 + 9, msgs: make([][]msgResult, len(s.Ops))}
		for k := range rep.injected {
			rep.injected[k] = k*1000 + int(seed)
		}
		n := 0
		for i, op := range s.Ops {
			rep.msgs[i] = make([]msgResult, len(op.Msgs))
			for j := range op.Msgs {
				rep.msgs[i][j] = msgResult{sent: n&1 != 0, received: n&2 != 0, ok: n&4 != 0,
					send: outcome(n % 3), recv: outcome(n / 3 % 3)}
				n++
			}
		}
		b := rep.encode(s)
		if len(b) != reportSize(s) {
			t.Fatalf("seed %d: %d bytes encoded, reportSize says %d", seed, len(b), reportSize(s))
		}
		got, err := decodeReport(s, b)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(got, rep) {
			t.Fatalf("seed %d: decoded\n%+v\nencoded\n%+v", seed, got, rep)
		}
		if _, err := decodeReport(s, b[:len(b)-1]); err == nil {
			t.Fatalf("seed %d: a short report decoded", seed)
		}
		if n > 0 {
			b[len(b)-1] = 3 << 3 // a send outcome no encoder writes
			if _, err := decodeReport(s, b); err == nil {
				t.Fatalf("seed %d: a report with a bad code decoded", seed)
			}
		}
	}
}

// TestFaultWrapper: the wrapper that carries the faults over transports
// the campaign cannot stand between (Open MPI) shapes the frames a rank
// sends as the in-process links do: schedules run over it keep every
// promise. The job is in process, its links perfect; the faults come
// from the wrapper alone. Its schedules run -chaos.par at once, as the
// campaign's do: each mostly waits (a deadline, a probe), and one after
// the other the thirty took ten seconds.
func TestFaultWrapper(t *testing.T) {
	t.Parallel() // beside the campaign: both mostly wait
	n := 30
	if testing.Short() {
		n = 10
	}
	type ran struct {
		s   Schedule
		r   Result
		err error
	}
	runs := make([]ran, n)
	slots := make(chan struct{}, max(1, *parFlag))
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			s := DrawMPI(uint64(i+1), 3)
			r, err := runWrapped(s)
			runs[i] = ran{s, r, err}
		})
	}
	wg.Wait()
	hit := 0
	for _, x := range runs {
		switch {
		case x.err != nil:
			t.Error(x.err)
			continue
		case x.r.Bad():
			t.Errorf("%s\n%+v", x.s, x.r)
		}
		for _, k := range x.r.Injected {
			hit += k
		}
	}
	if hit == 0 {
		t.Fatal("no fault hit a frame: the wrapper is not in the way")
	}
}

// runWrapped runs s as RunProcess runs it under mpirun, with a goroutine
// for each process: each connects through a perfect in-process network
// (the faults come from the wrapper RunProcess puts on it) and talks to
// the others through a control job of its own. Every process must judge
// the job alike.
func runWrapped(s Schedule) (Result, error) {
	ctl, err := channel.NewLocal(s.P)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		for _, ep := range ctl {
			ep.Close()
		}
	}()
	net := &inNet{in: newInjector(nil), frames: make([]channel.Frames, s.P), links: map[[2]int]*link{}}
	var formed sync.WaitGroup
	formed.Add(s.P)
	results := make([]Result, s.P)
	errs := make([]error, s.P)
	var wg sync.WaitGroup
	for r := range s.P {
		p := Process{Ctl: ctl[r], Connect: func(ctx context.Context, opts ...channel.TransportOption) (*channel.Endpoint, error) {
			ep, err := channel.NewEndpoint(r, s.P, func(f channel.Frames) (channel.Transport, error) {
				net.frames[r] = f
				return &inTx{net: net, rank: r}, nil
			}, opts...)
			formed.Done()
			formed.Wait() // no rank sends before every rank can take frames
			return ep, err
		}}
		wg.Go(func() { results[r], errs[r] = RunProcess(s, true, p) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Result{}, fmt.Errorf("%s: %v", s, err)
	}
	for r := range results {
		results[r].Errors = nil // each process's own
	}
	for r := range results {
		if !reflect.DeepEqual(results[r], results[0]) {
			return Result{}, fmt.Errorf("%s: rank %d judged %+v, rank 0 %+v", s, r, results[r], results[0])
		}
	}
	return results[0], nil
}
