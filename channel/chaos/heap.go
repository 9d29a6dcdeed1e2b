package chaos

import (
	"runtime"
	"sync"
	"time"
)

// The memory bound is checked on the process's heap, which every job
// running in the process shares: the campaign runs several schedules at
// once (-chaos.par), and a job's growth then holds the others'. So a
// job's bound is for the bytes moved by every job in flight during it,
// its own and those run beside it; a job run alone (-chaos.par 1, a
// replayed seed, an MPI process) is measured against its own bytes.
//
// One sampler reads the heap for all of them, every heapEvery while a
// job runs, and at each job's start and end.
const heapEvery = 20 * time.Millisecond

var heapWatch heapMeter

type heapMeter struct {
	mu   sync.Mutex
	open map[*heapWindow]struct{}
	stop chan struct{} // ends the sampler, once no window is open
	ms   runtime.MemStats
}

// heapWindow is a job's view of the heap: the heap at its start, how far
// the heap went past it, and the bytes moved by the jobs in flight
// meanwhile.
type heapWindow struct {
	base, peak uint64
	own, moved int64
}

// watch opens a window for a job that moves n bytes (moved). The
// returned function closes it and returns how far the heap grew over
// its start, and the bytes moved by every job in flight meanwhile, n
// among them.
func (m *heapMeter) watch(n int64) func() (growth uint64, inFlight int64) {
	w := &heapWindow{own: n, moved: n}
	m.mu.Lock()
	if m.open == nil {
		m.open = map[*heapWindow]struct{}{}
	}
	for o := range m.open {
		o.moved += n
		w.moved += o.own
	}
	w.base = m.sample()
	m.open[w] = struct{}{}
	if m.stop == nil {
		m.stop = make(chan struct{})
		go m.sampler(m.stop)
	}
	m.mu.Unlock()
	return func() (uint64, int64) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.sample()
		delete(m.open, w)
		if len(m.open) == 0 {
			close(m.stop)
			m.stop = nil
		}
		return w.peak, w.moved
	}
}

// sample reads the heap into every open window, and returns it. The
// caller holds m.mu, so that no window opens or closes between the
// reading and its use.
func (m *heapMeter) sample() uint64 {
	runtime.ReadMemStats(&m.ms)
	h := m.ms.HeapAlloc
	for w := range m.open {
		if h > w.base {
			w.peak = max(w.peak, h-w.base)
		}
	}
	return h
}

func (m *heapMeter) sampler(stop chan struct{}) {
	t := time.NewTicker(heapEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		select {
		case <-stop: // the last window closed while this one waited
		default:
			m.sample()
		}
		m.mu.Unlock()
	}
}
