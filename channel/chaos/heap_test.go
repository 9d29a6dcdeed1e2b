package chaos

import (
	"runtime"
	"strings"
	"testing"
)

// TestHeapMeter: jobs side by side each see the heap that grows during
// them, and are measured against the bytes of every job in flight
// meanwhile; the sampler stops with the last job.
func TestHeapMeter(t *testing.T) {
	var m heapMeter
	runtime.GC() // the heap at A's start is live, not garbage a collection may take back during A
	closeA := m.watch(100)
	closeB := m.watch(50)
	big := make([]byte, 32<<20)
	for i := range big {
		big[i] = byte(i)
	}
	growthB, movedB := closeB()
	closeC := m.watch(7) // after B: beside A only
	growthC, movedC := closeC()
	growthA, movedA := closeA()
	runtime.KeepAlive(big)
	if growthA < 24<<20 || growthB < 24<<20 {
		t.Errorf("the heap grew by %d and %d bytes in jobs that held 32 MiB", growthA, growthB)
	}
	if growthC > 8<<20 {
		t.Errorf("the heap grew by %d bytes in a job that allocated nothing", growthC)
	}
	if movedA != 157 || movedB != 150 || movedC != 107 {
		t.Errorf("bytes moved in flight: %d, %d, %d; want 157, 150, 107", movedA, movedB, movedC)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stop != nil || len(m.open) != 0 {
		t.Error("the sampler still runs after the last job")
	}
}

// TestHeapBound: a rank whose heap grew past the bound of what its
// process moved breaks the promise; what jobs run beside it moved
// counts in the bound.
func TestHeapBound(t *testing.T) {
	s := DrawMPI(1, 2)
	reps := func(heap uint64, inFlight int64) []*rankReport {
		var out []*rankReport
		for range s.P {
			rep := &rankReport{msgs: make([][]msgResult, len(s.Ops))}
			for i, op := range s.Ops {
				rep.msgs[i] = make([]msgResult, len(op.Msgs))
			}
			out = append(out, rep)
		}
		out[1].heap, out[1].heapMoved = heap, inFlight
		return out
	}
	over := heapBound(moved(s)) + 1
	if r := judge(s, reps(over, moved(s))); !r.Bad() || !strings.HasPrefix(r.Memory, "rank 1: ") {
		t.Errorf("a heap past its bound passed: %+v", r)
	}
	if r := judge(s, reps(over, moved(s)+1<<20)); r.Memory != "" {
		t.Errorf("the bytes of the jobs run beside it are not in the bound: %s", r.Memory)
	}
	if r := judge(s, reps(heapBound(moved(s)), 0)); r.Memory != "" {
		t.Errorf("a heap at its bound failed: %s", r.Memory)
	}
}
