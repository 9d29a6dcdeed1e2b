package replicate

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Stats are one replica's counters.
type Stats struct {
	// Messages checked against the sender's other replicas.
	Compared uint64
	// Mismatches: receives where the copies (or copy and hash) disagreed.
	Mismatches uint64
	// Corrected: receives whose own copy was corrupt and was replaced by
	// the verified one.
	Corrected uint64
	// Uncorrectable: receives that ended in ErrMismatch or ErrNoMajority.
	Uncorrectable uint64
	// Injected: bits the Injector flipped in this replica's send buffers.
	Injected uint64
	// Sent and BytesSent: the messages this replica handed to the Comm
	// underneath, and their payload bytes (copies, hashes, records).
	Sent, BytesSent uint64
	// Steps has the counters of each application step (Comm.Step) in
	// which something happened, in step order.
	Steps []StepStats
}

// StepStats are the events of one application step on one replica.
type StepStats struct {
	Step       int
	Injected   int // flips in this replica's send buffers
	Mismatches int // receives whose copies disagreed
	Corrected  int // receives whose own copy was replaced
	// Tainted counts receives that delivered (detect-only) or would have
	// delivered (corrected) a corrupt copy to this replica: the paper's
	// indirect taint.
	Tainted int
	// Blamed lists the sender replicas whose copies this replica found
	// corrupt in this step (by vote, or against the reference replica
	// with WithDetectOnly): which ranks sent corrupt data.
	Blamed []Place
}

type stats struct {
	nCompared, nMismatch, nCorrected, nUncorr, nInjected atomic.Uint64
	nSent, nBytes                                        atomic.Uint64
	mu                                                   sync.Mutex
	steps                                                map[int]*StepStats
}

func (s *stats) at(step int, f func(*StepStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steps == nil {
		s.steps = map[int]*StepStats{}
	}
	st := s.steps[step]
	if st == nil {
		st = &StepStats{Step: step}
		s.steps[step] = st
	}
	f(st)
}

func (s *stats) sent(n int) { s.nSent.Add(1); s.nBytes.Add(uint64(n)) }

func (s *stats) compared(int) { s.nCompared.Add(1) }

func (s *stats) mismatch(step int) {
	s.nCompared.Add(1)
	s.nMismatch.Add(1)
	s.at(step, func(t *StepStats) { t.Mismatches++ })
}

func (s *stats) uncorrectable(int) { s.nUncorr.Add(1) }

// observed: a detect-only receive delivered its own copy, corrupt or not.
func (s *stats) observed(step int, corrupt bool) {
	if corrupt {
		s.at(step, func(t *StepStats) { t.Tainted++ })
	}
}

func (s *stats) corrected(step int, _ bool) {
	s.nCorrected.Add(1)
	s.at(step, func(t *StepStats) { t.Corrected++; t.Tainted++ })
}

func (s *stats) blame(step int, p Place) {
	s.at(step, func(t *StepStats) {
		if !slices.Contains(t.Blamed, p) {
			t.Blamed = append(t.Blamed, p)
		}
	})
}

func (s *stats) injected(step int) {
	s.nInjected.Add(1)
	s.at(step, func(t *StepStats) { t.Injected++ })
}

// Stats returns this replica's counters so far.
func (c *Comm) Stats() Stats {
	s := &c.stats
	out := Stats{
		Compared: s.nCompared.Load(), Mismatches: s.nMismatch.Load(), Corrected: s.nCorrected.Load(),
		Uncorrectable: s.nUncorr.Load(), Injected: s.nInjected.Load(), Sent: s.nSent.Load(), BytesSent: s.nBytes.Load(),
	}
	s.mu.Lock()
	for _, k := range slices.Sorted(maps.Keys(s.steps)) {
		st := *s.steps[k]
		st.Blamed = slices.Clone(st.Blamed)
		out.Steps = append(out.Steps, st)
	}
	s.mu.Unlock()
	return out
}
