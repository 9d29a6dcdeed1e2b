package channel

import (
	"sync"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// Recycling. Every message costs a receive (recvReq), the receiving
// side's state (message, with its guard when protected) and, when
// protected, the sending side's (sender, with its pending state). Made
// afresh each time they were most of what a small message allocated,
// and their garbage a good part of its time; so the engine keeps those
// it is done with, in free lists of its own under e.mu, and the next
// message takes them.
//
// An object goes back only when nothing can refer to it any more, and
// the test for that is made under e.mu, which every goroutine that finds
// one of them (in e.posted, e.inflight, e.unexpected, an order's held
// messages, e.sends) holds while it uses it:
//
//   - a receive and its message, once the receive has returned the
//     message's bytes (retire; the test is made by the next receive or
//     message to take e.mu): the message was completed without error
//     (so it is out of e.inflight and, bound to the receive, out of
//     e.unexpected and of its order), and no transport goroutine is
//     writing into it (filling, repairing). A receive that failed, was
//     truncated or was canceled keeps its objects: its message may
//     still be coming.
//   - a protected send, once it is out of e.sends with no goroutine
//     serving it in the background and no probe waiting: when its own
//     goroutine ends it (finish, under e.mu; or leave, which finds it
//     verified — arriveControl took it out of e.sends under e.mu, set
//     pending.verified under the send's own mutex, and reads it no
//     more; or, in process, takes itself out of e.sends under e.mu when
//     its only frame's delivery verified it: frameOne), or when
//     arriveControl ends an eager send on its verdict.
//     (Sends go to a sync.Pool, senders, not a free list: see there.)
//
// A few of each are kept (maxFree): enough for the messages a rank has
// in flight at once in steady state; beyond, the garbage collector takes
// them.
const maxFree = 16

// ctlBufSize bounds the control payloads read into a pooled buffer
// (ctlBufs) rather than one of their own: verdicts (3 bytes, one per
// protected message), probes, small asks and answers.
const ctlBufSize = 256

// ctlBufs lends buffers for small control payloads. arriveControl acts
// on the payload during the call and copies what it keeps (a stamp,
// parity, an event for a send), so the buffer goes back when it returns.
// A sync.Pool rather than a buffer per engine: transports deliver a
// rank's frames from several goroutines at once.
var ctlBufs = sync.Pool{New: func() any { return new([ctlBufSize]byte) }}

// retire hands over a receive that has returned its message's bytes,
// with its message, to be recycled by the next receive or message that
// takes e.mu: the test of recycleRecv needs the lock, and the receiving
// goroutine, woken as another goroutine ends its message, would mostly
// wait for it. One waits at a time; the one it replaces is left to the
// garbage collector.
func (e *engine) retire(r *recvReq) { e.retired.Store(r) }

// recycleRetired recycles the retired receive, if any. Under e.mu.
func (e *engine) recycleRetired() {
	if r := e.retired.Swap(nil); r != nil {
		e.recycleRecv(r, r.msg)
	}
}

// newMessage returns a message opened by h from src, recycled if the
// engine has one. Under e.mu.
func (e *engine) newMessage(src int, h wire.Header) *message {
	if len(e.freeMsgs) == 0 {
		e.recycleRetired()
	}
	m := pop(&e.freeMsgs)
	if m == nil {
		m = new(message)
	}
	m.src, m.ctx, m.tag, m.id, m.total = src, h.Ctx, h.Tag, h.ID, h.Total
	return m
}

// newRecvReq returns a receive, recycled if the engine has one. Its
// Wait is kept with it: empty, since the receive that last used it took
// its token. Under e.mu.
func (e *engine) newRecvReq(ctxID uint32, src int, tag int64, buf []byte) *recvReq {
	if len(e.freeReqs) == 0 {
		e.recycleRetired()
	}
	r := pop(&e.freeReqs)
	if r == nil {
		r = &recvReq{w: transport.NewWait()}
	}
	r.ctx, r.src, r.tag, r.buf = ctxID, src, tag, buf
	return r
}

// recycleRecv takes back a receive that has returned its message's
// bytes, and the message, if nothing refers to them any more (see the
// top of this file). Under e.mu.
func (e *engine) recycleRecv(r *recvReq, m *message) {
	if m == nil || !r.finished || r.err != nil || r.msg != m || m.recv != r || !m.done || m.err != nil ||
		m.discard || m.filling || m.repairing > 0 || r.w.Pending() || r.w.Cutting() {
		return
	}
	if g := m.g; g != nil {
		g.p.keepTree(g.t)
	}
	if len(e.freeReqs) < maxFree {
		w := r.w
		*r = recvReq{w: w}
		e.freeReqs = append(e.freeReqs, r)
	}
	if len(e.freeMsgs) < maxFree && m.held == 0 {
		*m = message{}
		e.freeMsgs = append(e.freeMsgs, m)
	}
}

// senders keeps protected sends' state for the next sends (recycle.go's
// rules): a sync.Pool rather than a free list under e.mu, so that a send
// verified while it was being made (in process, always) ends without
// taking e.mu again.
var senders = sync.Pool{New: func() any { return new(sender) }}

// newSender returns a protected send's state, recycled if one is kept.
// Its pending state's Wait and timer are kept with it, idle.
func newSender() *sender { return senders.Get().(*sender) }

// recycleSender takes back a protected send that is over and out of
// e.sends, with no goroutine serving it (see the top of this file).
func recycleSender(s *sender) {
	if s.p != nil {
		s.p.keepTree(s.t)
		if s.pre.t != s.t {
			s.p.keepTree(s.pre.t) // built, not sent
		}
	}
	ps := &s.ps
	wake, tick := ps.wake, ps.tick
	if wake != nil {
		select {
		case <-wake.C(): // a signal nobody waited for
		default:
		}
	}
	*s = sender{}
	s.ps.wake, s.ps.tick = wake, tick
	senders.Put(s)
}

// pop takes the last object of a free list, or returns nil if it is
// empty; the slot it leaves is cleared, so the list holds no stale
// pointer.
func pop[T any](free *[]*T) *T {
	n := len(*free)
	if n == 0 {
		return nil
	}
	x := (*free)[n-1]
	(*free)[n-1] = nil
	*free = (*free)[:n-1]
	return x
}
