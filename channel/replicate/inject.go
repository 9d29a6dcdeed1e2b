package replicate

import (
	"math/rand/v2"
	"sync"
)

// Every, in an Injector's aim, means no restriction.
const Every = -1

// Injector is the paper's fault injector (§IV): with probability Rate
// (1/x) per message, it flips one random bit of the message in the
// application's send buffer before it is sent. That is the application's
// memory, not the wire: if the application reads the buffer again, the
// damage propagates, as a fault in memory or in the ALU would. Its random
// numbers are its own (seeded by Seed and the native rank), so the
// application's are untouched. It can be aimed (§IV-A): Replica, Rank
// (virtual) and Step restrict it, Every lifts a restriction; Max > 0
// stops it after Max flips on a native rank.
type Injector struct {
	Rate                float64
	Seed                uint64
	Replica, Rank, Step int
	Max                 int
}

type injector struct {
	Injector
	mu   sync.Mutex
	rng  *rand.Rand
	done int
}

func newInjector(i Injector, native int) *injector {
	return &injector{Injector: i, rng: rand.New(rand.NewPCG(i.Seed, uint64(native)))}
}

func (in *injector) maybeFlip(data []byte, me Place, step int, st *stats) {
	if (in.Replica != Every && in.Replica != me.Replica) || (in.Rank != Every && in.Rank != me.Virtual) ||
		(in.Step != Every && in.Step != step) {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if (in.Max > 0 && in.done >= in.Max) || in.rng.Float64() >= in.Rate || len(data) == 0 {
		return
	}
	bit := in.rng.IntN(len(data) * 8)
	data[bit/8] ^= 1 << (bit % 8)
	in.done++
	st.injected(step)
}
