package channel

import (
	"slices"
	"time"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// The order of protected messages. MPI promises that two messages from
// one rank to another on one communicator with the same tag are matched
// in the order they were sent. A transport keeps its frames in order, but
// a protected message whose opening frame was lost comes again, after
// the probe that finds it missing (verdictUnknown), behind the messages
// sent after it: matched on arrival, a later message would take the
// receive meant for it, and each receive would return the other's bytes.
//
// So a sender numbers its protected messages to each rank on each
// context (Header.Seq, on the opener, the abort and the probes), and the
// receiver binds them to receives in that order: a message that opens
// ahead of a gap is held (its bytes come in and are checked meanwhile,
// into its own buffer), and the gap is filled by the opener that comes
// again, or passed over by the sender's abort when the sender gives up on
// it. Should neither come (both lost, or the sender gone silent), the
// receiver passes over the gap after gapWait — longer than a sender
// probes before it gives up — and a late opener is then matched when it
// comes, out of its place: the one case where order is not kept.
//
// Unprotected messages are matched as they open: nothing would send a
// lost one again, and holding the messages behind it would turn one lost
// frame into a stalled link.

// peerCtx is a peer (the destination of sends, or the source of
// receives) on one context: the rank in the high half, the context in
// the low one. One word, not a struct of two: maps keyed by a word take
// their fast path, and these are looked up several times for every small
// protected message.
type peerCtx uint64

func peerCtxOf(rank int, ctx uint32) peerCtx { return peerCtx(uint64(rank)<<32 | uint64(ctx)) }

func (k peerCtx) rank() int { return int(k >> 32) }

// order is the order of one source's protected messages on one context.
type order struct {
	next  uint32              // the Seq of the next message to bind
	held  map[uint32]*message // opened ahead of a gap, by Seq; nil: passed over (abandoned before it opened)
	timer *time.Timer         // passes over the gap at next, after gapWait
}

// gapWait is how long a receiver waits for a lost opener before it binds
// the messages behind it: longer than the sender probes before it
// abandons the message (about 31 probe waits; see sender.await).
func gapWait(probe time.Duration) time.Duration { return 40 * probe }

// nextSeq numbers a protected message to dst on context ctx. Under e.mu.
func (e *engine) nextSeq(dst int, ctx uint32) uint32 {
	k := peerCtxOf(dst, ctx)
	s := e.seqOut[k]
	e.seqOut[k] = s + 1
	return s
}

func (e *engine) orderOf(src int, ctx uint32) *order {
	k := peerCtxOf(src, ctx)
	o := e.orders[k]
	if o == nil {
		o = &order{held: map[uint32]*message{}}
		e.orders[k] = o
	}
	return o
}

// ahead says whether seq is at or after o.next (in wrapping order).
func (o *order) ahead(seq uint32) bool { return seq-o.next < 1<<31 }

// takeTurn binds a protected message that has just opened, if it is next
// from its source (then the messages held behind it follow), or holds it
// until it is. A message whose turn was passed over already is bound at
// once. Under e.mu.
func (e *engine) takeTurn(src int, m *message, seq uint32) {
	o := e.orderOf(src, m.ctx)
	if seq != o.next && o.ahead(seq) {
		o.held[seq] = m
		e.armGap(src, m.ctx, o)
		return
	}
	if seq == o.next {
		o.next++
	}
	e.bind(m)
	m.g.startTree(m)
	e.releaseTurns(o)
}

// releaseTurns binds the held messages that are now next, in order.
// Under e.mu.
func (e *engine) releaseTurns(o *order) {
	for {
		m, ok := o.held[o.next]
		if !ok {
			break
		}
		delete(o.held, o.next)
		o.next++
		if m != nil {
			e.bindLate(m)
		}
	}
	if len(o.held) == 0 && o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
}

// bindLate gives a message that was held, and whose bytes may have come
// meanwhile, to the first posted receive it matches — as postLocked does
// for a receive posted after its message came — or queues it. Under
// e.mu.
func (e *engine) bindLate(m *message) {
	for i, r := range e.posted {
		if !m.matches(r.ctx, r.src, r.tag) {
			continue
		}
		e.posted = slices.Delete(e.posted, i, i+1)
		m.recv = r
		switch {
		case m.done:
			r.finish(m, nil)
		case m.g != nil && m.total > int64(len(r.buf)):
			m.discard = true
			r.finish(m, nil)
			m.g.discard(e, m, discardTruncated) // its frames go out from the caller (ctl)
		default:
			e.unexpected = append(e.unexpected, m) // its receive has it when it is whole (complete)
		}
		return
	}
	e.unexpected = append(e.unexpected, m)
}

// passOver skips the message of h in its source's order: its sender
// abandoned it before its opener came here. Under e.mu.
func (e *engine) passOver(src int, h wire.Header) {
	if e.prot[h.Ctx] == nil {
		return
	}
	o := e.orderOf(src, h.Ctx)
	if !o.ahead(h.Seq) {
		return
	}
	if _, ok := o.held[h.Seq]; !ok {
		o.held[h.Seq] = nil
	}
	e.releaseTurns(o)
}

// awaited says whether the protected message of h (a probe's header) has
// not had its turn yet: sent again, it will be matched in its place.
// Under e.mu.
func (e *engine) awaited(src int, h wire.Header) bool {
	if e.prot[h.Ctx] == nil {
		return false
	}
	o := e.orderOf(src, h.Ctx)
	_, held := o.held[h.Seq]
	return o.ahead(h.Seq) && !held
}

// armGap starts the wait for the opener at o.next, if none runs. Under
// e.mu.
func (e *engine) armGap(src int, ctx uint32, o *order) {
	if o.timer != nil {
		return
	}
	next := o.next
	o.timer = time.AfterFunc(gapWait(e.probe), func() {
		e.mu.Lock()
		if e.closed || e.orders[peerCtxOf(src, ctx)] != o {
			e.mu.Unlock()
			return
		}
		o.timer = nil
		if o.next == next && len(o.held) > 0 {
			// Still the same gap: pass over it, to the first held.
			first, best := o.next, uint32(1<<32-1)
			for s := range o.held {
				if d := s - o.next; d < best {
					first, best = s, d
				}
			}
			o.next = first
			e.releaseTurns(o)
		}
		if len(o.held) > 0 {
			e.armGap(src, ctx, o)
		}
		e.mu.Unlock()
		e.ctl.flush() // what a truncating receive told the sender (inline queues)
	})
}

// dropOrders forgets the order of a lost peer's messages, and the held
// ones that had come whole (the others fail with the peer). Under e.mu.
func (e *engine) dropOrders(peer int) {
	for k, o := range e.orders {
		if k.rank() != peer {
			continue
		}
		if o.timer != nil {
			o.timer.Stop()
		}
		for _, m := range o.held {
			if m != nil && !m.filling { // else the goroutine writing it releases it (arriveData)
				e.release(m)
			}
		}
		delete(e.orders, k)
	}
}
