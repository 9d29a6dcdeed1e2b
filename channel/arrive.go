package channel

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// Arrival: the frames a transport delivers (arrive) go to the message
// they belong to, their payload straight into a posted receive's buffer
// or into the message's own (arriveData, fillPayload); control frames go
// to the protection protocol (arriveControl, pending.go); frames of a
// context this rank has not created yet wait for it (park, register).

// arrive takes one frame from src. fill reads the frame's payload: called
// with consecutive slices whose lengths add up to h.Plen. An error means
// the peer broke the protocol; the transport then drops the link.
func (e *engine) arrive(src int, h wire.Header, fill func([]byte) error) error {
	return e.arriveFrom(src, h, fill, nil)
}

// arriveSync is arrive for a sender whose call delivers the frame (in
// process, localTx.Send): it reports whether the frame ended a protected
// message that this rank has verified, in which case the OK verdict is
// not sent — it is the caller's to hand to the sender (localTx.Send), or
// to end the send with (localTx.sendSync, sender.frameOne) — and inHand
// has been raised before this rank's lock was let go: the caller lowers
// it once the OK is in. (This rank's Close, which takes the lock first,
// waits for it: its Recv may have returned meanwhile.) The verdict's way
// through the control queue and back into the sender's engine (push,
// flush, the frame's check) was a noticeable share of a 1-byte
// checksummed round trip in process (BenchmarkProtectionOverhead/
// transport=local/size=1B).
func (e *engine) arriveSync(src int, h wire.Header, fill func([]byte) error, inHand *atomic.Int32) (verified bool, err error) {
	sc := syncCall{inHand: inHand}
	err = e.arriveFrom(src, h, fill, &sc)
	return sc.verified, err
}

// syncCall is arriveSync's, through arriveData: whether the frame ended
// a message verified then, and the caller's count of OKs in its hand.
type syncCall struct {
	verified bool
	inHand   *atomic.Int32
}

func (e *engine) arriveFrom(src int, h wire.Header, fill func([]byte) error, sc *syncCall) error {
	if h.Ctx != 0 {
		parked, f, err := e.park(src, h, fill)
		if parked || err != nil {
			return err
		}
		fill = f
	}
	e.ctl.handling()
	err := e.arriveNow(src, h, fill, sc)
	e.ctl.handled() // the control frames it made, sent from here where they can be
	return err
}

// maxParkedContexts bounds the contexts a peer can open ahead of this
// rank: a few layers are normal, thousands are an attack.
const maxParkedContexts = 1024

// park keeps a frame of a context (a protection layer) this rank has not
// created yet: the sender made its layer first, as it may, since making
// one is not collective. The frames wait, in arrival order, for
// register to replay them — handled before as unprotected, they would
// leave their sender waiting for a verdict that never comes. A frame
// that is not parked is to be handled now, its payload read with the
// fill park returns.
func (e *engine) park(src int, h wire.Header, fill func([]byte) error) (bool, func([]byte) error, error) {
	if e.settledCtx(h.Ctx) {
		return false, fill, nil // known, and nothing parked: as below, without the lock
	}
	e.mu.Lock()
	_, known := e.prot[h.Ctx]
	_, replaying := e.parked[h.Ctx]
	e.mu.Unlock()
	if known && !replaying {
		return false, fill, nil
	}
	payload, err := readSmall(h.Plen, fill)
	if err != nil {
		return true, nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, known = e.prot[h.Ctx]
	q, replaying := e.parked[h.Ctx]
	switch {
	case known && !replaying:
		// Registered and replayed while the payload came: the frames
		// parked before this one are all handled, so it goes now.
		return false, bytesFill(payload), nil
	case !replaying && len(e.parked) >= maxParkedContexts:
		return true, nil, fmt.Errorf("%w: rank %d: frames for %d contexts this rank has not created", ErrProtocol, src, len(e.parked))
	case e.parkedN+int64(len(payload)) > e.limit:
		return true, nil, fmt.Errorf("%w: rank %d sent more than %d bytes for protection layers rank %d has not created (WithHeldLimit)", ErrProtocol, src, e.limit, e.rank)
	}
	e.parkedN += int64(len(payload))
	e.parked[h.Ctx] = append(q, parkedFrame{src, h, payload})
	return true, nil, nil
}

// settledCtx says whether frames of context ctx are handled as they
// come, none parked before them: the unprotected context, or one
// registered with nothing left to replay (settled).
func (e *engine) settledCtx(ctx uint32) bool {
	return ctx == 0 || (*e.settled.Load())[ctx]
}

type parkedFrame struct {
	src     int
	h       wire.Header
	payload []byte
}

func bytesFill(b []byte) func([]byte) error {
	return func(dst []byte) error {
		b = b[copy(dst, b):]
		return nil
	}
}

// register makes a context known and replays the frames parked for it,
// in order; frames of the context that come meanwhile join the queue, so
// that no frame overtakes another.
func (e *engine) register(id uint32, p *protection) {
	e.mu.Lock()
	e.prot[id] = p
	e.mu.Unlock()
	for {
		e.mu.Lock()
		q, ok := e.parked[id]
		if !ok || len(q) == 0 {
			delete(e.parked, id)
			e.settle(id)
			e.mu.Unlock()
			return
		}
		e.parked[id] = []parkedFrame{} // still replaying
		for _, f := range q {
			e.parkedN -= int64(len(f.payload))
		}
		lost := slices.Clone(e.lost)
		e.mu.Unlock()
		for _, f := range q {
			if lost[f.src] != nil {
				continue
			}
			if err := e.arriveNow(f.src, f.h, bytesFill(f.payload), nil); err != nil {
				e.tx.Abort(f.src, err) // the peer broke the protocol, as a transport would find
				lost[f.src] = err
			}
			e.ctl.flush()
		}
	}
}

// settle adds id to the settled contexts: registered, and none of its
// frames parked or being replayed — which stays so, since frames are
// parked only for contexts unknown or replaying. Under e.mu (which
// orders the writers of settled).
func (e *engine) settle(id uint32) {
	m := maps.Clone(*e.settled.Load())
	m[id] = true
	e.settled.Store(&m)
}

func (e *engine) arriveNow(src int, h wire.Header, fill func([]byte) error, sc *syncCall) error {
	switch h.Kind {
	case wire.KindMsg, wire.KindData:
		return e.arriveData(src, h, fill, sc)
	case wire.KindRepair:
		return e.arriveRepair(src, h, fill)
	}
	var payload []byte
	var err error
	if h.Plen <= ctlBufSize {
		// Read into a lent buffer (a verdict, a probe, a small ask): most
		// control frames, one or more per protected message, would
		// otherwise each allocate its payload.
		b := ctlBufs.Get().(*[ctlBufSize]byte)
		defer ctlBufs.Put(b)
		payload = b[:h.Plen]
		err = fill(payload)
	} else {
		payload, err = readSmall(h.Plen, fill)
	}
	if err != nil {
		return err
	}
	return e.arriveControl(src, h, payload, xxh3.Hash(payload) == h.Sum)
}

// readSmall reads a control frame's payload, grown as its bytes come.
func readSmall(n int, fill func([]byte) error) ([]byte, error) {
	const piece = 16 << 10
	var b []byte
	for len(b) < n {
		k := min(n-len(b), piece)
		b = slices.Grow(b, k)[:len(b)+k]
		if err := fill(b[len(b)-k:]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// hashPiece is how much of a Merkle message written in place is written
// before its segments are hashed (guard.onData): small enough to be
// hashed from the cache the write left it in (16 to 256 KiB measured
// alike in process).
const hashPiece = 256 << 10

// arriveData takes a data frame. With sc (arriveSync), a final OK
// verdict that the frame's arrival makes is not sent but reported there.
func (e *engine) arriveData(src int, h wire.Header, fill func([]byte) error, sc *syncCall) error {
	var switched bool // to the receive's buffer, from this frame on
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	m := e.inflight.get(src, h.ID)
	switch h.Kind {
	case wire.KindMsg:
		if m != nil {
			e.mu.Unlock()
			return fmt.Errorf("%w: rank %d reopened message %d", ErrProtocol, src, h.ID)
		}
		if !e.opened(src).open(h.ID) {
			// Its opening frame came twice: the message is had already.
			e.mu.Unlock()
			_, err := readSmall(h.Plen, fill)
			return err
		}
		m = e.newMessage(src, h)
		if st, ok := e.stamps[msgKey{src, h.ID}]; ok {
			m.stamp = st
			delete(e.stamps, msgKey{src, h.ID})
		}
		stamped := h.Flags&flagStamped != 0
		if p := e.prot[h.Ctx]; p != nil && src != e.rank {
			if err := m.gs.open(p, h); err != nil {
				e.mu.Unlock()
				return err
			}
			m.gs.needStamp = stamped && !m.stamp.ok
			m.g = &m.gs
		}
		if m.g == nil {
			e.bind(m)
		} else {
			e.takeTurn(src, m, h.Seq) // bound in its sender's order (order.go)
		}
		e.inflight.put(src, h.ID, m)
	case wire.KindData:
		if m != nil && m.g != nil && m.g.probed {
			// Taken as lost at the sender's probe, and asked again: a
			// frame that was only late is dropped.
			e.mu.Unlock()
			_, err := readSmall(h.Plen, fill)
			return err
		}
		if m == nil || h.Offset != m.got || h.Total != m.total || m.g != nil && m.g.dataDone {
			e.mu.Unlock()
			return fmt.Errorf("%w: rank %d: frame at %d of %d for message %d, which is not expecting it", ErrProtocol, src, h.Offset, h.Total, h.ID)
		}
		// A receive posted while the message was coming: the rest goes
		// straight into its buffer, after the bytes that came before it
		// (moved below), rather than all of it into the message's own
		// buffer and then copied — the reply of a large ping-pong, whose
		// sender's receive comes just after its first frames.
		switched = !m.direct && !m.discard && m.recv != nil && !m.recv.finished &&
			int64(len(m.recv.buf)) >= m.total && int64(len(m.own)) == m.got
		m.direct = m.direct || switched
	}
	direct, discard := m.direct, m.discard
	var dst []byte
	if direct {
		dst = m.recv.buf[h.Offset : h.Offset+int64(h.Plen)]
		m.writing.Lock()
	}
	m.filling = true
	e.mu.Unlock()
	if switched {
		copy(m.recv.buf, m.own) // under m.writing, as any write into the receive's buffer
	}

	var err error
	if direct && m.g != nil && m.g.hashesLeaves() {
		// A Merkle message written in place is hashed piece by piece, each
		// piece while it is still in cache from the write; over TCP each
		// piece is a read.
		for off := 0; off < len(dst) && err == nil; off += hashPiece {
			end := min(off+hashPiece, len(dst))
			if err = fill(dst[off:end]); err == nil {
				m.g.onData(e, m.recv.buf[:h.Offset+int64(end)], h)
			}
		}
	} else if err = e.fillPayload(m, h, dst, direct, discard, fill); err == nil && m.g != nil && !discard {
		// Checked as it comes, while the next frame is on the wire.
		if direct {
			m.g.onData(e, m.recv.buf[:h.Offset+int64(h.Plen)], h)
		} else {
			m.g.onData(e, m.own, h)
		}
	}
	if direct {
		m.writing.Unlock()
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	m.filling = false
	if switched {
		e.release(m) // its own buffer is done with
	}
	if e.inflight.get(src, h.ID) != m {
		// Dropped while the frame came (its peer lost, or abandoned): its
		// buffer was left to this goroutine, which was writing it.
		e.release(m)
		return err
	}
	if err != nil {
		return err
	}
	m.got += int64(h.Plen)
	if m.got == m.total {
		if m.g == nil || m.discard {
			e.complete(m, nil)
		} else {
			m.g.dataDone = true
			if sc != nil {
				e.syncMsg = m // final leaves its OK to the caller
			}
			m.g.step(e, m)
			if sc != nil {
				if e.syncOK {
					sc.verified = true
					sc.inHand.Add(1) // before e.mu goes (arriveSync)
				}
				e.syncMsg, e.syncOK = nil, false
			}
		}
	}
	return nil
}

// fillPayload reads a frame's payload into the receive buffer, the
// message's own buffer (grown only as bytes come: never by what a header
// claims), or nowhere.
func (e *engine) fillPayload(m *message, h wire.Header, dst []byte, direct, discard bool, fill func([]byte) error) error {
	const piece = 64 << 10
	switch {
	case direct:
		return fill(dst)
	case discard:
		var scratch [4096]byte
		for left := h.Plen; left > 0; {
			n := min(left, len(scratch))
			if err := fill(scratch[:n]); err != nil {
				return err
			}
			left -= n
		}
		return nil
	}
	if len(m.own) > 0 && cap(m.own) < int(m.total) && m.held == 0 {
		// Its whole length at once from its second frame on, if the
		// limit allows: the buffer is then the message's size, not up
		// to twice as doubling gives. Not at its first: the receive is
		// often posted before the second comes (the reply of a
		// ping-pong), which then goes straight into its buffer, and the
		// whole length is never allocated.
		if e.held.Add(m.total) <= e.limit {
			m.held = m.total
			m.own = append(make([]byte, 0, m.total), m.own...)
		} else {
			e.held.Add(-m.total)
		}
	} else if m.own == nil {
		m.own = make([]byte, 0, h.Plen) // a frame: at most MaxFrame
	}
	for left := h.Plen; left > 0; {
		n := min(left, piece)
		at := len(m.own)
		if need := at + n; need > cap(m.own) {
			// Double what has come, up to the message's length: a few
			// copies in all, and never more memory than twice the bytes
			// received (the header's length alone allocates nothing).
			c := int(min(m.total, int64(max(2*cap(m.own), need, piece))))
			grown := make([]byte, at, max(c, need))
			copy(grown, m.own)
			m.own = grown
		}
		m.own = m.own[:at+n]
		if err := fill(m.own[at:]); err != nil {
			return err
		}
		left -= n
	}
	return nil
}
