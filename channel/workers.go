package channel

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Isend's background sends run on workers kept from one send to the
// next, not on a new goroutine each. A new goroutine starts on a small
// stack, and a protected send's way through the engine — in process it
// runs the receiving engine's arrival and verification too — is deep
// enough to grow it, a copy of every frame on the stack each time it
// doubles, on every message: most of a window of small protected
// Isends' time in process (BenchmarkBandwidth/transport=local/size=1KiB).
// A worker grows its stack once. Idle workers wait workerIdle for the
// next send, then end; at most maxIdleWorkers wait at a time.
const (
	workerIdle     = time.Second
	maxIdleWorkers = 64
)

// testHookWorkerIdle, if not 0 (tests), replaces workerIdle (ns).
var testHookWorkerIdle atomic.Int64

var workers struct {
	mu   sync.Mutex
	idle []*worker
}

type worker struct {
	work chan func()
}

// goSend runs f on an idle worker, or on a new one.
func goSend(f func()) {
	workers.mu.Lock()
	if n := len(workers.idle); n > 0 {
		w := workers.idle[n-1]
		workers.idle[n-1] = nil
		workers.idle = workers.idle[:n-1]
		workers.mu.Unlock()
		w.work <- f // buffered: a worker taken from idle always reads it
		return
	}
	workers.mu.Unlock()
	go (&worker{work: make(chan func(), 1)}).run(f)
}

func (w *worker) run(f func()) {
	var t *time.Timer
	for {
		f()
		f = nil // the send's closure is not the worker's to keep
		workers.mu.Lock()
		if len(workers.idle) >= maxIdleWorkers {
			workers.mu.Unlock()
			return
		}
		workers.idle = append(workers.idle, w)
		workers.mu.Unlock()
		idle := workerIdle
		if d := testHookWorkerIdle.Load(); d != 0 {
			idle = time.Duration(d)
		}
		if t == nil {
			t = time.NewTimer(idle)
		} else {
			t.Reset(idle)
		}
		select {
		case f = <-w.work:
			continue
		case <-t.C:
		}
		workers.mu.Lock()
		if i := slices.Index(workers.idle, w); i >= 0 {
			workers.idle = slices.Delete(workers.idle, i, i+1)
			workers.mu.Unlock()
			return
		}
		workers.mu.Unlock()
		f = <-w.work // taken meanwhile: its send is on its way
	}
}
