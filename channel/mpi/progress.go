//go:build mpi

package mpi

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/transport"
)

// Who drives MPI. MPI cannot wake a thread when a message comes: a rank
// that waits for one must look, again and again, as MPI_Recv does inside.
// A receive that waits for a frame looks itself (Progress): it holds the
// delivery token, polls the ring, delivers every frame that comes, its
// own or another's, and returns once its own is in. Handed over from a
// goroutine of the transport's instead, every message would cost a
// goroutine switch and, with a spare processor, a thread woken to take
// it: several times a small message's whole trip.
//
// The transport's own goroutine (run) delivers what no receive waits for
// itself: frames for goroutines that wait without reading (Waiting: a
// receive from any source, a receive behind another that holds the
// token, the engine's own waits), and, once no receive has held the
// token for takeover, whatever comes — eager messages whose receives
// come later, a peer's last word. It spins while anyone waits on it and
// no receive reads, else naps, longer each time up to maxNap (never
// spinning then: a rank bound to a core has one processor, and a spin
// would take it from the goroutine that reads); a Waiting or a Close
// wakes it at once. A goroutine that waits for MPI otherwise (a large
// payload's send, a native collective) delivers a frame between its
// looks if no one holds the token (deliverIfFree). A receive that finds it
// holding the token asks for it (yield) and gets it at the next frame.
// A receive that finds another receive holding it leaves the frames to
// that one (Progress reports false, and the engine calls Waiting), and
// the holder, when done, wakes the transport's goroutine if anyone still
// waits.

// takeover is how long the frames are left to receives after one last
// read them: a rank in a ping-pong keeps reading for itself from one
// receive to the next, and what nobody waits for is taken soon after
// they stop.
const takeover = time.Millisecond

// driver holds the delivery token and the count of those who wait.
type driver struct {
	tok     atomic.Int32 // tokFree, tokLoop or tokCaller
	yield   atomic.Int32 // receives asking the loop for the token
	waiters atomic.Int32 // goroutines waiting for frames without reading them
	uses    atomic.Int64 // receives that gave the token back, ever (run reads the clock, they do not)
	kick    chan struct{}
}

const (
	tokFree = iota
	tokLoop
	tokCaller
)

func (d *driver) init() { d.kick = make(chan struct{}, 1) }

// wake ends the transport goroutine's nap.
func (d *driver) wake() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Waiting is transport.Progresser's: n goroutines more (or fewer) wait
// for frames that the transport's goroutine must deliver.
func (t *tx) Waiting(src, n int) { t.drv.Waiting(src, n) }

func (d *driver) Waiting(_, n int) {
	// Only the first waiter wakes the transport's goroutine: with one or
	// more it does not nap, except while a receive holds the token, which
	// wakes it when it gives the token back.
	if d.waiters.Add(int32(n)) == 1 && n > 0 {
		d.wake()
	}
}

// Progress is transport.Progresser's: the calling goroutine delivers
// frames, any peer's, until w is over or ctx is done.
func (t *tx) Progress(ctx context.Context, src int, w *transport.Wait) bool {
	if t.isGone(src) {
		return false
	}
	switch t.drv.acquire(ctx, w) {
	case acquireNo:
		return false
	case acquireOver:
		return true
	}
	var sp waiter
	for {
		if t.deliverOne() {
			sp = waiter{timer: sp.timer}
			if w.Over() {
				break
			}
			if t.drv.waiters.Load() > 0 {
				runtime.Gosched() // the goroutine it may have woken runs now, here
			}
			continue
		}
		// What ends the wait from elsewhere (a peer lost, the context) is
		// looked at every few looks: a look costs less.
		if sp.spins%yieldEvery == 0 && (w.Over() || ctx.Err() != nil || t.isGone(src)) {
			break
		}
		if t.drv.waiters.Load() > 0 || t.drv.yield.Load() > 0 {
			sp.spinOnly()
		} else {
			sp.pauseFor(w)
		}
	}
	t.drv.release()
	return true
}

type acquired int

const (
	acquireYes  acquired = iota
	acquireNo            // another receive holds the token
	acquireOver          // the wait ended while the transport's goroutine gave the token up
)

// acquire takes the token for a receive: at once if it is free, from the
// transport's goroutine at its next frame if it holds it.
func (d *driver) acquire(ctx context.Context, w *transport.Wait) acquired {
	if d.tok.CompareAndSwap(tokFree, tokCaller) {
		return acquireYes
	}
	d.yield.Add(1)
	defer d.yield.Add(-1)
	for {
		switch d.tok.Load() {
		case tokFree:
			if d.tok.CompareAndSwap(tokFree, tokCaller) {
				return acquireYes
			}
		case tokCaller:
			return acquireNo
		}
		if w.Over() || ctx.Err() != nil {
			return acquireOver
		}
		runtime.Gosched()
	}
}

// release gives a receive's token back, and wakes the transport's
// goroutine if anyone still waits for frames.
func (d *driver) release() {
	d.tok.Store(tokFree)
	d.uses.Add(1)
	if d.waiters.Load() > 0 {
		d.wake()
	}
}

// deliverIfFree delivers one frame, if one has come and nobody holds the
// token: what a goroutine that waits for MPI does meanwhile.
func (t *tx) deliverIfFree() bool {
	d := &t.drv
	if d.yield.Load() != 0 || !d.tok.CompareAndSwap(tokFree, tokCaller) {
		return false
	}
	got := t.deliverOne()
	d.tok.Store(tokFree)
	if d.waiters.Load() > 0 {
		d.wake()
	}
	return got
}

// run is the transport's goroutine: it delivers what no receive reads
// (see the top of this file), keeps the orphaned collectives tidy, drains the payloads of dropped links, and, once the
// endpoint is closed and every peer has said its last, tears the
// transport down.
func (t *tx) run() {
	defer world.live.Done()
	d := &t.drv
	var w waiter
	var uses int64       // d.uses when last looked at
	var usedAt time.Time // when it was seen to change
	for looks := 0; ; looks++ {
		if looks%64 == 0 { // and after every nap (t.nap)
			t.housekeep()
		}
		closing := t.closing()
		if closing && t.finished() {
			t.teardown()
			return
		}
		waited := d.waiters.Load() > 0
		if !waited && !closing {
			if n := d.uses.Load(); n != uses {
				uses, usedAt = n, time.Now()
			}
			if time.Since(usedAt) < takeover {
				t.nap(&w, &looks) // receives read for themselves
				continue
			}
		}
		if d.yield.Load() == 0 && d.tok.CompareAndSwap(tokFree, tokLoop) {
			n := 0
			for d.yield.Load() == 0 && t.deliverOne() {
				n++
			}
			d.tok.Store(tokFree)
			if n > 0 {
				w = waiter{timer: w.timer}
				runtime.Gosched() // the goroutines it woke run now, here
				continue
			}
		}
		if waited && d.tok.Load() != tokCaller {
			w.spinOnly() // a goroutine waits for this one to deliver: look again
		} else {
			t.nap(&w, &looks) // nothing came, or a receive reads and wakes this when done
		}
	}
}

// nap is the transport goroutine's pause when no one waits for it: it
// never spins, since a spin would take the processor from the goroutine
// that does wait (a rank bound to a core has one), and its naps grow
// until a kick ends one.
func (t *tx) nap(w *waiter, looks *int) {
	if w.sleep(t.drv.kick) {
		*w = waiter{timer: w.timer}
	}
	*looks = -1 // the next look keeps house
}

// closing says whether Close was called.
func (t *tx) closing() bool {
	if !t.broken.Load() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// housekeep does what the transport's goroutine does beside delivering.
func (t *tx) housekeep() {
	lockMPI()
	if !t.torn {
		t.reapOrphans()
		t.drainGone()
	}
	mpiMu.Unlock()
}

// A waiter spins, then naps, longer each time up to maxNap. For
// spinFor it only looks, as MPI_Recv does; until yieldFor every look
// also gives the core to any other process that wants it (sched_yield,
// which returns at once when none does: a message is still seen within
// a microsecond or so, and a peer that has its own work to finish
// first, such as a receiver taking a window of messages before its
// acknowledgement, is answered at once rather than after a nap); then
// it naps. When mpirun put more ranks on the node than it has cores,
// every look yields the core: a rank that spins would otherwise keep
// the one it waits for from running. Every few looks yield to the other
// goroutines (runtime.Gosched): with one processor (a rank bound to a
// core) the goroutine a frame woke runs only then; a yield at every look
// costs each look a trip through the scheduler's global queue, more
// than the look itself.
type waiter struct {
	start     time.Time
	spins     int
	yieldCore bool // past spinFor: every look yields the core
	naps      int
	timer     *time.Timer
}

const (
	spinFor  = 200 * time.Microsecond
	yieldFor = 10 * time.Millisecond
	minNap   = 10 * time.Microsecond
	maxNap   = time.Millisecond
	// yieldEvery is how many looks of a spin go by between two yields
	// to the other goroutines.
	yieldEvery = 16
)

func (w *waiter) pause() {
	if w.spin() {
		return
	}
	time.Sleep(w.nap())
}

// spin looks once more if the wait is young, and reports whether it did.
func (w *waiter) spin() bool {
	// The clock is read at the yields only, from the first on: a look
	// costs less, and most waits end before.
	if w.spins%yieldEvery != yieldEvery-1 {
		w.spinOnly()
		return true
	}
	if w.start.IsZero() {
		w.start = time.Now()
	}
	switch age := time.Since(w.start); {
	case age < spinFor:
		w.spinOnly()
	case age < yieldFor:
		w.spinOnly()
		w.yieldCore = true
	default:
		return false
	}
	return true
}

// spinOnly is a look of spin, whatever the wait's age.
func (w *waiter) spinOnly() {
	w.spins++
	if world.oversub || w.yieldCore {
		C.sc_yield()
	}
	if w.spins%yieldEvery == 0 {
		runtime.Gosched()
	}
}

func (w *waiter) nap() time.Duration {
	d := min(maxNap, minNap<<min(w.naps, 8))
	w.naps++
	return d
}

// pauseFor is pause for a receive that reads: a nap ends early when its
// wait ends.
func (w *waiter) pauseFor(wt *transport.Wait) {
	if w.spin() {
		return
	}
	if w.sleep(wt.C()) {
		wt.Return() // the token is its owner's
	}
}

// sleep naps until the timer or c, and reports whether c ended it.
func (w *waiter) sleep(c <-chan struct{}) bool {
	d := w.nap()
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-c:
		w.timer.Stop()
		return true
	case <-w.timer.C:
		return false
	}
}

var _ interface {
	channel.Transport
	transport.Progresser
	transport.BatchSender
	transport.TrySender
	transport.Piecer
	channel.Barrierer
} = (*tx)(nil)
