package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// A protected send in the engine: its pending state, which the control
// frames about its message reach (arriveControl routes them, and the
// datatype stamps that go ahead of messages), and its waits for them
// (next, waitTimer). Eager sends, which return before their verdict, are
// served from here after their Send has returned, from a kept copy of
// their data, and forgotten once verified or failed (eagerEnd, failSend).

// pending is a protected send waiting for the receiver: the control
// frames about its message, queued by the transport for the sending
// goroutine, which alone writes back.
type pending struct {
	dst   int // the receiver, whose control frames alone are the send's
	mu    sync.Mutex
	q     []ctlEvent
	first [2]ctlEvent // q's array until more are queued: most sends hear one verdict
	err   error
	wake  *transport.Wait // next's, made on the first wait and reused
	tick  *waitTimer      // next's wait, made on the first and reused (kept when the sender is recycled)

	// An eager send (see sendProtected) has returned to its caller: its
	// sender is served from here, by arriveControl, under the engine's
	// lock — an OK verdict at once, anything else by a goroutine started
	// on the first such event.
	eager   *sender
	started bool
	since   time.Time // when its Send returned (watchEager)

	// verified: the receiver's OK was the first word about the message,
	// and arriveControl took the send out of e.sends on it — before the
	// send returned (eager) or while its goroutine awaits it. An eager
	// send that finds it set ends without e.mu. Under mu.
	verified bool
}

// watchEager makes sure the engine watches its eager sends: one that has
// heard nothing for the probe's wait gets its goroutine, which probes
// the receiver as a waiting send does — its only frame may have been
// lost, and nothing else would ever ask. The watcher runs while eager
// sends are out. Under e.mu.
func (e *engine) watchEager() {
	if e.watching {
		return
	}
	e.watching = true
	go func() {
		t := time.NewTicker(e.probe)
		defer t.Stop()
		for range t.C {
			e.mu.Lock()
			if e.eagerN == 0 || e.closed {
				e.watching = false
				e.mu.Unlock()
				return
			}
			for _, ps := range e.sends {
				if ps.eager != nil && !ps.started && time.Since(ps.since) >= e.probe {
					ps.started = true
					go ps.eager.background(ps)
				}
			}
			e.mu.Unlock()
		}
	}()
}

type ctlEvent struct {
	kind    byte
	payload []byte
	ok      bool  // its payload check held
	off     int64 // its header's Offset: for a question, its number
}

// isOK says whether ev is the receiver's "all good".
func (ev ctlEvent) isOK() bool {
	return ev.ok && ev.kind == wire.KindVerdict && len(ev.payload) == 1 && ev.payload[0] == verdictOK
}

func (p *pending) init(dst int) { p.dst, p.q = dst, p.first[:0] }

// signal wakes the goroutine waiting in next, if any. Under p.mu.
func (p *pending) signal() {
	if p.wake == nil {
		return // nobody has waited yet: next looks at q and err first
	}
	p.wake.Signal()
}

func (p *pending) push(ev ctlEvent) {
	p.mu.Lock()
	p.q = append(p.q, ev)
	p.signal()
	p.mu.Unlock()
}

// pushOK queues the receiver's OK, and reports whether it is the first
// word about the message (the send is then verified).
func (p *pending) pushOK(ev ctlEvent) bool {
	p.mu.Lock()
	p.verified = len(p.q) == 0 && p.err == nil
	p.q = append(p.q, ev)
	p.signal()
	verified := p.verified
	p.mu.Unlock()
	return verified
}

func (p *pending) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.signal()
	tick := p.tick
	p.mu.Unlock()
	if tick != nil { // the send's goroutine may be reading its link (next)
		tick.cutWait()
	}
}

// errNoWord: nothing came within the wait given to next.
var errNoWord = errors.New("channel: no word yet from the receiver")

// next returns the next control event, waiting for it at most wait
// (errNoWord) or until ctx is done.
//
// Over a transport whose links a goroutine can read itself
// (progresser), the send's goroutine reads its receiver's link while it
// waits, as a receive does: the verdict is then handled where it is
// read, and Send returns without a hop between goroutines. Left to the
// link's goroutine, a 1 MiB protected ping-pong over TCP lost up to a
// millisecond a message: that goroutine had to be woken for the verdict,
// the send's goroutine then had to be woken in turn, on a machine whose
// two cores were busy with the peer's next message — which the link's
// goroutine went on to read into a buffer of its own while the send's
// goroutine waited for a core.
func (p *pending) next(ctx context.Context, pr transport.Progresser, ctl *ctlQueue, wait time.Duration) (ctlEvent, error) {
	p.mu.Lock()
	if p.wake == nil {
		// Made on the first wait only: an eager send verified in
		// process never waits.
		p.wake = transport.NewWait()
	}
	if p.tick == nil {
		p.tick = newWaitTimer(p.wake)
	}
	wake, tick := p.wake, p.tick
	p.mu.Unlock()
	tick.arm(wait)
	defer tick.disarm()
	for {
		p.mu.Lock()
		if len(p.q) > 0 {
			ev := p.q[0]
			p.q = p.q[:copy(p.q, p.q[1:])]
			p.mu.Unlock()
			return ev, nil
		}
		err := p.err
		p.mu.Unlock()
		switch {
		case err != nil:
			return ctlEvent{}, err
		case ctx.Err() != nil:
			return ctlEvent{}, ctx.Err()
		case tick.expired():
			return ctlEvent{}, errNoWord
		}
		ctl.release() // this rank waits: its held verdicts go now
		if pr != nil && pr.Progress(ctx, p.dst, wake) {
			// It read until wake held a token (an event, the timer) or
			// ctx was done; the token is ours.
			select {
			case <-wake.C():
			default:
			}
			continue
		}
		// Another goroutine reads the link (a receive of this rank):
		// it delivers the receiver's word too, or, once it stops, the
		// link's goroutine does.
		if pr != nil {
			pr.Waiting(p.dst, 1)
		}
		select {
		case <-wake.C():
		case <-ctx.Done():
		}
		if pr != nil {
			pr.Waiting(p.dst, -1)
		}
	}
}

// waitTimer bounds a send's waits in next: one for all of them, made on
// the first and kept while its sender is recycled. It touches nothing of
// the pending state but the wake channel they share — a tick that comes
// late, after the wait it was for, finds the timer disarmed or its next
// deadline ahead, and is ignored — so that recycling a sender never races
// with its timer.
type waitTimer struct {
	t        *time.Timer
	wake     *transport.Wait // the pending state's; its cut cuts short the wait of the goroutine reading for the send
	mu       sync.Mutex
	armed    bool
	deadline time.Time
	fired    bool
}

func newWaitTimer(wake *transport.Wait) *waitTimer {
	w := &waitTimer{wake: wake}
	w.t = time.AfterFunc(time.Hour, w.fire)
	w.t.Stop()
	return w
}

func (w *waitTimer) arm(d time.Duration) {
	w.mu.Lock()
	w.armed, w.fired, w.deadline = true, false, time.Now().Add(d)
	w.mu.Unlock()
	w.t.Reset(d)
}

func (w *waitTimer) disarm() {
	w.t.Stop()
	w.mu.Lock()
	w.armed = false
	w.mu.Unlock()
}

func (w *waitTimer) expired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

func (w *waitTimer) fire() {
	w.mu.Lock()
	if !w.armed || time.Now().Before(w.deadline) {
		w.mu.Unlock()
		return // a tick of a wait that is over
	}
	w.fired = true
	w.wake.Signal()
	w.mu.Unlock()
	w.cutWait()
}

// cutWait cuts short the wait of the goroutine reading the link for the
// send, if one is.
func (w *waitTimer) cutWait() { w.wake.Cut() }

// arriveControl routes a control frame to the send or the message it is
// about; one about nothing known (late, or after a failure) is dropped.
// The payload is lent for the call (arriveNow's buffer): what is kept of
// it is copied (keep).
func (e *engine) arriveControl(src int, h wire.Header, payload []byte, ok bool) error {
	k := msgKey{src, h.ID}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !ok {
		// Counted here, on arrival, even when the frame turns out to be
		// about nothing any more (a verdict asked for twice, a send that
		// has finished): every damaged frame is caught, wherever it goes.
		e.stats.detected.Add(1)
	}
	if h.Kind == wire.KindStamp {
		if len(payload) > maxStampSize {
			return fmt.Errorf("%w: rank %d sent a datatype stamp of %d bytes, the limit is %d", ErrProtocol, src, len(payload), maxStampSize)
		}
		if m := e.inflight.get(src, h.ID); m != nil { // asked again
			if m.g != nil && !m.g.discarded {
				m.g.onStamp(e, m, stamp{keep(payload), ok})
			}
			return nil
		}
		if e.stamps == nil {
			e.stamps = map[msgKey]stamp{}
		}
		if len(e.stamps) >= maxStamps {
			return fmt.Errorf("%w: rank %d sent %d stamps without their messages", ErrProtocol, src, len(e.stamps))
		}
		if len(payload) > maxStampSize {
			return fmt.Errorf("%w: rank %d sent a datatype stamp of %d bytes, the limit is %d", ErrProtocol, src, len(payload), maxStampSize)
		}
		e.stamps[k] = stamp{keep(payload), ok}
		return nil
	}
	toSender := h.Kind == wire.KindAsk || h.Kind == wire.KindVerdict || h.Kind == wire.KindAgain && h.Offset == againToSender
	if toSender {
		if ps := e.sends[h.ID]; ps != nil && ps.dst == src {
			ev := ctlEvent{h.Kind, payload, ok, h.Offset}
			if h.Kind == wire.KindVerdict && h.Flags == flagTriple {
				ev.payload, ev.ok = untriple(payload, h.Sum, ok)
			}
			if ps.eager != nil && !ps.started && ev.isOK() {
				e.eagerEnd(h.ID, ps, nil) // the usual end of an eager send: no goroutine
				keepEagerCopy(ps.eager.own)
				recycleSender(ps.eager) // out of e.sends, its Send returned, no goroutine
				return nil
			}
			if !ev.isOK() {
				ev.payload = keep(ev.payload)
				ps.push(ev)
			} else {
				ev.payload = okVerdict    // what the lent payload says, shared
				served := ps.eager != nil // read first: once pushed, the send may end and be recycled
				verified := ps.pushOK(ev)
				if !served {
					// Its own goroutine serves it. Verified, nothing more
					// about it matters: it leaves e.sends, and its
					// goroutine ends it without e.mu (leave) — ps is not
					// to be read here any more.
					if verified {
						delete(e.sends, h.ID)
					}
					return nil
				}
			}
			if ps.eager != nil && !ps.started {
				ps.started = true
				go ps.eager.background(ps)
			}
		}
		return nil
	}
	m := e.inflight.get(src, h.ID)
	if m == nil && h.Kind == wire.KindAbort {
		if w := e.opened(src); h.ID > e.forgotten[src] && h.ID >= w.base && !w.seen(h.ID) {
			e.passOver(src, h) // abandoned before its opener came: the next ones go on
		}
		return nil
	}
	if m == nil {
		if h.Kind == wire.KindAgain {
			if v, ok := e.recentVerdict(k); ok { // the verdict came corrupted after all
				e.ctl.push(v.dst, v.h, v.payload)
			} else if w := e.opened(src); h.ID > e.forgotten[src] && h.ID >= w.base && !w.seen(h.ID) && e.awaited(src, h) {
				// A probe about a message whose opener was lost, and
				// which later ones wait for (order): sent again, it is
				// matched in its place.
				e.ctl.push(src, wire.Header{Kind: wire.KindVerdict, Ctx: h.Ctx, Tag: h.Tag, ID: h.ID, Total: h.Total}, unknownVerdict)
			} else if h.ID > e.forgotten[src] && h.ID >= w.base && h.ID > w.max {
				// A probe about a message this rank never opened (it
				// would remember it: no later one of src's has been
				// forgotten) and after the last it opened: its first
				// frame was lost. The sender sends it again, and it is
				// matched in its place.
				e.ctl.push(src, wire.Header{Kind: wire.KindVerdict, Ctx: h.Ctx, Tag: h.Tag, ID: h.ID, Total: h.Total}, unknownVerdict)
			} else if h.ID > e.forgotten[src] && h.ID >= w.base && !w.seen(h.ID) {
				// Lost while later messages came: sent again now it
				// would be matched out of order, so the send fails.
				e.ctl.push(src, wire.Header{Kind: wire.KindVerdict, Ctx: h.Ctx, Tag: h.Tag, ID: h.ID, Total: h.Total, Flags: flagTriple}, failTriple)
			}
		}
		return nil
	}
	if h.Kind == wire.KindAbort {
		e.complete(m, fmt.Errorf("%w: rank %d abandoned message %d", ErrCorrupted, src, h.ID))
		return nil
	}
	if m.g == nil || m.discard {
		return nil
	}
	switch h.Kind {
	case wire.KindTrailer:
		m.g.onTrailer(e, m, payload, ok)
	case wire.KindAnswer:
		m.g.onAnswer(e, m, payload, ok, h.Offset)
	case wire.KindParity:
		m.g.onParity(e, m, h, payload, ok)
	case wire.KindAgain:
		m.g.resendLast(e, m)
	}
	return nil
}

// keep returns a copy of a lent payload, to keep (nil if empty, as an
// empty payload was read before payloads were lent).
func keep(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

// eagerCopies keeps the copies of eager sends that ended verified for
// the next eager sends: over TCP the verdict comes after Send has
// returned, so every eager send copies its data, and a fresh copy each
// time was most of what a protected send allocated (at 64 KiB, 137 KB a
// round trip). Only a copy whose send ended without a goroutine of its
// own goes back: nothing else holds it then.
//
// A copy travels in the pointer that the pool holds (sender.own), so
// that giving it back allocates nothing: putting the address of a slice
// made anew allocated its header, two objects a round trip over TCP.
var eagerCopies sync.Pool // *[]byte

// eagerCopy returns a copy of data, in a kept buffer if one is big enough.
func eagerCopy(data []byte) *[]byte {
	p, ok := eagerCopies.Get().(*[]byte)
	switch {
	case !ok:
		b := bytes.Clone(data)
		return &b
	case cap(*p) >= len(data):
		*p = append((*p)[:0], data...)
	default:
		*p = bytes.Clone(data)
	}
	return p
}

// keepEagerCopy gives a finished eager send's copy back (nil: none). The
// sender is forgotten, or recycled, after it: nothing else holds the copy.
func keepEagerCopy(p *[]byte) {
	if p != nil && cap(*p) > 0 {
		eagerCopies.Put(p)
	}
}

// failSend fails a protected send; one that has returned to its caller
// (eager) and has no goroutine serving it is forgotten here. Called with
// e.mu held.
func (e *engine) failSend(id uint64, p *pending, err error) {
	p.fail(err)
	if p.eager != nil && !p.started {
		e.eagerEnd(id, p, err)
	}
}

// eagerEnd forgets an eager send (one that has returned to its caller)
// once its receiver has verified it, or it failed. Under e.mu.
func (e *engine) eagerEnd(id uint64, ps *pending, err error) {
	if e.sends[id] == ps {
		delete(e.sends, id)
	}
	e.eagerBytes.Add(-int64(len(ps.eager.data)))
	if err != nil {
		e.stats.bad.Add(1)
		if len(e.eagerErrs) < 16 {
			e.eagerErrs = append(e.eagerErrs, err)
		}
	}
	if e.eagerN--; e.eagerN == 0 {
		for _, ch := range e.eagerIdle {
			close(ch)
		}
		e.eagerIdle = nil
	}
}
