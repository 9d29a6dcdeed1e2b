//go:build unix

package tcp

import (
	"sync"
	"sync/atomic"
	"time"
)

// A polling reader that finds a gap of more than preemptGap between two
// of its polls (each a system call and a yield, far shorter than that)
// has had its thread taken away by the kernel: the machine has more
// runnable threads than cores, and the core this reader spins on is one
// another task — the peer rank, perhaps — wants. Readers of this process
// then do not poll for a while (busy): holdMin, doubled each time it
// happens again within a hold of the last, up to holdMax.
//
// On an idle machine a 2-process ping-pong's polls were never that far
// apart, though a few came close, which is why the gap is not shorter.
// Beside busy processes polling still costs at times, since a reader can
// spin its pollMax while the peer waits for a core without being
// preempted itself: scripts/tcp-latency.sh with LOAD=2 measures it (its
// sigcheck and block rows), and has shown polling behind in some runs
// and within the noise in others. Such a machine is better served with
// SIGCHECK_POLL=0, as Open MPI is with mpi_yield_when_idle. (Neither the
// machine's count of runnable threads, /proc/loadavg, nor the process's
// count of involuntary context switches told an idle machine from a
// loaded one clearly: the ranks' own threads add to both.)
const (
	preemptGap = 250 * time.Microsecond
	holdMin    = 10 * time.Millisecond
	holdMax    = time.Second
)

// testHookPollShared, if set (tests), lets readers poll in a process of
// several TCP ranks (pollAlone).
var testHookPollShared bool

// pollAlone reports whether readers may poll, as far as this process's
// ranks go. Readers poll only while this process has one TCP rank
// (ranksHere): ranks that share a process share its processors
// (GOMAXPROCS), and a rank's poll takes the processor the other rank's
// goroutine needs to answer it: in one process, two ranks over loopback
// that polled took several times as long a 1 B one-way as two asleep
// (BenchmarkLatency/transport=tcp runs two in one process, asleep). MPI's
// model — one rank a process, a core each — is where polling pays.
func pollAlone() bool { return testHookPollShared || ranksHere.Load() <= 1 }

var pollHold struct {
	until atomic.Int64 // no polling until then (UnixNano)
	mu    sync.Mutex   // what follows
	hold  time.Duration
}

// busy reports whether readers are not to poll now.
func busy(now time.Time) bool { return now.UnixNano() < pollHold.until.Load() }

// preempted says that a reader found its thread preempted while it
// polled: no polling for the hold, which doubles if the last hold ended
// less than a hold ago.
func preempted(now time.Time) {
	h := &pollHold
	h.mu.Lock()
	defer h.mu.Unlock()
	n := now.UnixNano()
	if end := h.until.Load(); end != 0 && n-end < int64(h.hold) {
		h.hold = min(2*h.hold, holdMax)
	} else {
		h.hold = holdMin
	}
	h.until.Store(n + int64(h.hold))
}
