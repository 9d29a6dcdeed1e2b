package channel

import (
	"context"
	"sync"
	"sync/atomic"
)

// The order of a rank's sends to one peer. MPI's non-overtaking rule:
// two messages from one rank to another that a receive could both match
// are matched in the order their sends were posted. Isend posts a send
// and returns before the goroutine that makes it runs (unless it sent
// the message at once: trySend, only when no send is outstanding), so
// the order of posting is kept here: every send takes a ticket when it
// is posted (an Isend in its caller's goroutine, a Send as it starts),
// and writes its message only in its ticket's turn. The turn passes once
// the message's data frames are out, or over a transport.Poster once
// they are posted — not when a protected send's verdict comes, which may
// be long after — so a send never waits for another's receiver.
//
// It is also what keeps a window of protected Isends fast. Their
// receiver matches them in their send order (order.go); one that came
// ahead of its turn waited in a buffer of its own, allocated for it,
// and was copied into its receive later. With 16 Isends of 1 MiB in
// flight most were, and the allocations and copies took a good part of
// the window's bandwidth (BenchmarkBandwidth's size=1MiB/protect=checksum
// runs such a window).
//
// A blocking send with no send posted before it still to write — the
// usual case — takes no ticket at all (turnFor): two atomic loads. The
// sends posted after it began are another goroutine's, which MPI does not
// order against it.
type sendQueue struct {
	posted  atomic.Uint64 // tickets handed out
	turn    atomic.Uint64 // the ticket whose send may write now
	waiting atomic.Int32  // len(wake): a passing send must look
	gaveUp  atomic.Int32  // len(skip): a passing send must look

	mu   sync.Mutex
	wake map[uint64]chan struct{} // the waiting sends, by ticket
	skip map[uint64]bool          // tickets whose sends gave up waiting
}

// ticket is a send's place in its queue; the zero ticket is no place
// (its wait and done do nothing).
type ticket struct {
	q *sendQueue
	n uint64
}

// ticket posts a send to dst (a valid rank): Isend's.
func (e *engine) ticket(dst int) ticket {
	q := &e.sendq[dst]
	return ticket{q, q.posted.Add(1) - 1}
}

// turnFor is the ticket of a blocking send to dst: none if every send
// posted before it has had its turn. (turn ≤ posted at every instant and
// both only grow, so equal loads, turn first, mean that at the first load
// nothing was outstanding.)
func (e *engine) turnFor(dst int) ticket {
	q := &e.sendq[dst]
	if q.turn.Load() == q.posted.Load() {
		return ticket{}
	}
	return e.ticket(dst)
}

// wait returns when the send's turn has come, or ctx's error after giving
// the turn up: a send that waits must then either end its turn (done) or
// have given it up.
func (t ticket) wait(ctx context.Context) error {
	q := t.q
	if q == nil || q.turn.Load() == t.n {
		return nil
	}
	q.mu.Lock()
	q.waiting.Add(1) // before the turn is read again: see done
	if q.turn.Load() == t.n {
		q.waiting.Add(-1)
		q.mu.Unlock()
		return nil
	}
	if q.wake == nil {
		q.wake = map[uint64]chan struct{}{}
	}
	ch := make(chan struct{})
	q.wake[t.n] = ch
	q.mu.Unlock()
	select {
	case <-ch:
		return nil // skipFrom took it out of wake
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-ch:
		// Its turn came as it gave up: it passes it on.
		q.turn.Store(t.n + 1)
		q.skipFrom(t.n + 1)
	default:
		delete(q.wake, t.n)
		q.waiting.Add(-1)
		if q.skip == nil {
			q.skip = map[uint64]bool{}
		}
		q.skip[t.n] = true
		q.gaveUp.Add(1) // before the turn is read: see done
		if q.turn.Load() == t.n {
			q.skipFrom(t.n) // it came meanwhile, and nobody saw the mark
		}
	}
	return ctx.Err()
}

// done ends the send's turn: the next ticket's send may write.
func (t ticket) done() {
	q := t.q
	if q == nil {
		return
	}
	q.turn.Store(t.n + 1)
	// A waiter or a ticket given up counts itself before it reads the
	// turn, and this reads the counts after setting it: either it sees
	// them, or they see the new turn.
	if q.waiting.Load() == 0 && q.gaveUp.Load() == 0 {
		return
	}
	q.mu.Lock()
	// From the turn as it is now: the sends after this one may have had
	// theirs already.
	q.skipFrom(q.turn.Load())
	q.mu.Unlock()
}

// skipFrom passes the turn n over the tickets given up from there, and
// wakes the send whose turn it then is. Under mu. It sets the turn only
// when it passes over a ticket: the turn of a send that gave up is
// nobody else's to move, while a send that has its turn moves it on
// without the lock — setting it here too would set it back.
func (q *sendQueue) skipFrom(n uint64) {
	if q.skip[n] {
		for q.skip[n] {
			delete(q.skip, n)
			q.gaveUp.Add(-1)
			n++
		}
		q.turn.Store(n)
	}
	if ch, ok := q.wake[n]; ok { // asleep: its turn cannot have passed
		delete(q.wake, n)
		q.waiting.Add(-1)
		close(ch)
	}
}
