package channel

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// engine matches messages to receives for one rank, whatever the
// transport: receives posted before their message get its bytes written
// straight into their buffer; messages that come first wait in their own
// buffer, in arrival order, for a receive. Messages on a protected
// context are checked as they arrive (guard.go) and handed to their
// receive only once whole and verified; their senders wait for the
// verdict (sender.go).
type engine struct {
	rank, size int
	tx         Transport
	started    chan struct{} // closed once the engine is set up (Frames.Deliver waits)
	nextID     atomic.Uint64
	nextCtx    atomic.Uint32
	eagerBytes atomic.Int64  // copies kept by eager protected sends
	limit      int64         // WithHeldLimit
	probe      time.Duration // WithProbe
	held       atomic.Int64  // bytes of unexpected messages' whole-length buffers, within limit
	stats      counters
	ctl        *ctlQueue   // control frames, sent off the transport's goroutines
	broken     atomic.Bool // closed, or a peer lost: ready looks under mu
	// settled holds the contexts registered with no frame of theirs
	// parked (register ends with it), copied on write: park lets their
	// frames through without taking mu.
	settled atomic.Pointer[map[uint32]bool]

	mu         sync.Mutex
	posted     []*recvReq          // receives waiting, in the order posted
	unexpected []*message          // messages no receive has taken yet, in arrival order
	inflight   inflightSet         // messages not yet whole (or not yet verified)
	sends      map[uint64]*pending // protected sends waiting for their verdict, by id (unique among this rank's messages; pending.dst says to whom)
	prot       map[uint32]*protection
	parked     map[uint32][]parkedFrame // frames of contexts not created yet (park)
	parkedN    int64                    // their payload bytes, within limit
	stamps     map[msgKey]stamp         // datatype stamps of messages about to open
	recent     []recentVerdict          // final verdicts of protected messages, to send again if asked: a ring
	recentNext uint64                   // the next slot of recent to fill
	forgotten  []uint64                 // per peer, the newest id of its messages gone from recent
	watching   bool                     // watchEager runs
	ids        []*idWindow              // per peer, the message ids it opened (duplicates)
	eagerN     int                      // eager sends returned to their callers, not yet verified
	eagerIdle  []chan struct{}          // Flush calls waiting for eagerN to be 0
	eagerErrs  []error                  // eager sends that failed since the last Flush (a few)
	lost       []error                  // per peer, once it is gone
	freeMsgs   []*message               // messages done with, for the next ones (recycle.go)
	freeReqs   []*recvReq               // receives done with (recycle.go)
	retired    atomic.Pointer[recvReq]  // a receive that has returned, with its message, to recycle (recycle.go)
	colls      map[uint32]uint32        // per context, the number of the next collective call (coll.go)
	seqOut     map[peerCtx]uint32       // per destination and protected context, the Seq of the next message (order.go)
	sendq      []sendQueue              // per destination, the order of the sends (sendorder.go)
	orders     map[peerCtx]*order       // per source and protected context, the order of its messages (order.go)
	anyLost    bool
	closed     bool
	// The message whose last frame arriveSync's caller delivers, while it
	// is checked; syncOK once final has left its OK verdict to that caller.
	syncMsg *message
	syncOK  bool
}

// inflightSet holds the messages not yet whole (or not yet verified) by
// source and id: a map per source, keyed by the id alone. Keyed by the
// pair (msgKey), every lookup hashed 16 bytes (memhash128), two or three
// per message; with 64-bit keys the maps take their fast path, which
// shows in a 1-byte round trip in process (BenchmarkLatency/
// transport=local/size=1B/protect=none). A source's map is made with its
// first message.
type inflightSet []map[uint64]*message

func (s inflightSet) get(src int, id uint64) *message { return s[src][id] }

func (s inflightSet) put(src int, id uint64, m *message) {
	if s[src] == nil {
		s[src] = map[uint64]*message{}
	}
	s[src][id] = m
}

func (s inflightSet) del(src int, id uint64) { delete(s[src], id) }

// all yields every message of every source.
func (s inflightSet) all() iter.Seq[*message] {
	return func(yield func(*message) bool) {
		for _, ms := range s {
			for _, m := range ms {
				if !yield(m) {
					return
				}
			}
		}
	}
}

type msgKey struct {
	rank int
	id   uint64
}

type message struct {
	src   int
	ctx   uint32
	tag   int64
	id    uint64
	total int64
	got   int64

	own     []byte     // the message's bytes, when it came before its receive
	held    int64      // own's length, counted in engine.held (0 if own grew as bytes came)
	recv    *recvReq   // the receive that took it, if any
	direct  bool       // its bytes go straight into recv.buf
	discard bool       // its bytes are thrown away (truncated or abandoned)
	writing sync.Mutex // held while a transport writes into recv.buf
	g       *guard     // the protection protocol's state, on a protected context: &gs
	gs      guard      // g's storage: one object for both
	stamp   stamp      // its datatype stamp, if the sender gave one (Typed)
	done    bool       // whole, and verified if protected
	err     error      // why it could not be delivered
	filling bool       // a transport writes a frame into own: who drops the message leaves own to it (arriveData)

	repairing int // goroutines writing a resent part into it (arriveRepair): it is not recycled meanwhile
}

// stamp is a message's datatype stamp as it arrived (Typed).
type stamp struct {
	b  []byte
	ok bool // its payload check held
}

type recvReq struct {
	ctx uint32
	src int
	tag int64
	buf []byte
	// ready gets one token when the receive is finished (finish). It has
	// room for it, so finish never blocks; the goroutine waiting for the
	// receive takes it, and puts it back if it only looked (progress).
	// A token rather than a close, so that the channel is made once and
	// serves every receive the recvReq is recycled for (recycle.go).
	ready    chan struct{}
	finished bool
	msg      *message
	err      error
	wake     atomic.Pointer[func()] // cuts short the wait of the goroutine reading for it (progresser)
}

// initState makes the engine's tables: before its transport is opened,
// so that a transport may report a peer lost (Frames.Lost) from the
// start.
func (e *engine) initState() {
	e.inflight, e.sends = make(inflightSet, e.size), map[uint64]*pending{}
	e.prot, e.parked, e.lost = map[uint32]*protection{}, map[uint32][]parkedFrame{}, make([]error, e.size)
	e.forgotten = make([]uint64, e.size)
	e.colls = map[uint32]uint32{}
	e.seqOut, e.orders = map[peerCtx]uint32{}, map[peerCtx]*order{}
	e.sendq = make([]sendQueue, e.size)
	e.settled.Store(&map[uint32]bool{})
}

// nextColl numbers the next collective call on context ctx (coll.go), and
// drops the messages of earlier calls that came whole with no receive
// for them: left over from a call that failed, they would be kept until
// the endpoint closes.
func (e *engine) nextColl(ctx uint32) uint32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	seq := e.colls[ctx]
	e.colls[ctx] = seq + 1
	e.unexpected = slices.DeleteFunc(e.unexpected, func(m *message) bool {
		old, _, ok := collSeq(m.tag)
		stale := ok && m.ctx == ctx && m.done && m.recv == nil &&
			(seq-old)&(1<<collSeqBits-1)-1 < 1<<(collSeqBits-1)
		if stale {
			e.release(m)
		}
		return stale
	})
	return seq
}

func (m *message) matches(ctx uint32, src int, tag int64) bool {
	return m.ctx == ctx && (src == AnySource || src == m.src) &&
		(tag == AnyTag && m.tag < ReservedTag || tag == m.tag)
}

// buf is where the message's bytes are: the receive's buffer or its own.
func (m *message) buf() []byte {
	if m.direct {
		return m.recv.buf[:m.total]
	}
	return m.own
}

// finish completes a receive, once. Called with e.mu held.
func (r *recvReq) finish(m *message, err error) {
	if r.finished {
		return
	}
	r.finished, r.msg, r.err = true, m, err
	r.ready <- struct{}{} // never blocks: see ready
	if w := r.wake.Load(); w != nil {
		(*w)() // finished from elsewhere (a peer lost, a held message bound late)
	}
}

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

// complete hands a message to its receive (now, or when one comes).
// Called with e.mu held.
func (e *engine) complete(m *message, err error) {
	if m.done {
		return
	}
	m.done, m.err = true, err
	e.inflight.del(m.src, m.id)
	if err == nil {
		e.stats.msgsIn.Add(1)
		e.stats.bytesIn.Add(uint64(m.total))
	}
	if r := m.recv; r != nil {
		e.dropUnexpected(m)
		r.finish(m, nil) // a no-op if it was finished at once (truncated) or canceled
	}
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

// bind gives a new message to the first posted receive it matches, or
// queues it. Called with e.mu held.
func (e *engine) bind(m *message) {
	for i, r := range e.posted {
		if !m.matches(r.ctx, r.src, r.tag) {
			continue
		}
		e.posted = slices.Delete(e.posted, i, i+1)
		m.recv = r
		if m.total > int64(len(r.buf)) {
			m.discard = true
			r.finish(m, nil) // Recv reports the truncation
			if m.g != nil {  // and the sender hears of it (bind runs before the guard's first look)
				m.g.discard(e, m, discardTruncated)
			}
		} else {
			m.direct = true
		}
		return
	}
	e.unexpected = append(e.unexpected, m)
}

func (e *engine) dropUnexpected(m *message) {
	if i := slices.Index(e.unexpected, m); i >= 0 {
		e.unexpected = slices.Delete(e.unexpected, i, i+1)
	}
}

// release gives back what an unexpected message's buffer held of the
// limit, once its bytes have gone to their receive (or nowhere).
func (e *engine) release(m *message) {
	if n := m.held; n > 0 {
		m.held = 0
		e.held.Add(-n)
	}
	m.own = nil
}

// recv receives one message on context ctxID.
func (e *engine) recv(ctx context.Context, ctxID uint32, src int, tag int64, buf []byte) (Status, error) {
	st, _, err := e.recvStamped(ctx, ctxID, src, tag, buf)
	return st, err
}

// recvStamped receives one message and its datatype stamp.
func (e *engine) recvStamped(ctx context.Context, ctxID uint32, src int, tag int64, buf []byte) (Status, stamp, error) {
	if err := ctx.Err(); err != nil {
		return Status{}, stamp{}, err
	}
	r, err := e.post(ctxID, src, tag, buf)
	if err != nil {
		return Status{}, stamp{}, err
	}
	return e.wait(ctx, r)
}

// post posts a receive: it takes the first matching message that came
// already, or waits in line for one. Irecv posts at once, as MPI_Irecv
// does, so that a message sent after it lands straight in its buffer.
func (e *engine) post(ctxID uint32, src int, tag int64, buf []byte) (*recvReq, error) {
	r, told, err := e.postLocked(ctxID, src, tag, buf)
	if told {
		e.ctl.flush() // the sender of a message discarded here is told
	}
	return r, err
}

func (e *engine) postLocked(ctxID uint32, src int, tag int64, buf []byte) (r *recvReq, told bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, false, ErrClosed
	}
	r = e.newRecvReq(ctxID, src, tag, buf)
	for _, m := range e.unexpected {
		if m.recv == nil && !m.discard && m.matches(ctxID, src, tag) {
			m.recv = r
			switch {
			case m.done:
				e.dropUnexpected(m)
				r.finish(m, nil)
			case m.g != nil && m.total > int64(len(buf)):
				// Truncated, and not yet verified: thrown away, and its
				// sender told, as when the receive came first.
				m.discard = true
				e.dropUnexpected(m)
				r.finish(m, nil)
				m.g.discard(e, m, discardTruncated)
				told = true
			}
			return r, told, nil
		}
	}
	if err := e.lostFor(src); err != nil {
		return nil, false, err
	}
	e.posted = append(e.posted, r)
	return r, false, nil
}

// wait waits for a posted receive and returns what it got.
func (e *engine) wait(ctx context.Context, r *recvReq) (Status, stamp, error) {
	buf := r.buf
	if err := e.block(ctx, r); err != nil {
		return Status{}, stamp{}, err
	}
	if r.err != nil {
		return Status{}, stamp{}, r.err
	}
	m := r.msg
	st := Status{Source: m.src, Tag: int(m.tag), Len: int(m.total)}
	if m.total > int64(len(buf)) {
		return st, m.stamp, fmt.Errorf("%w: %d bytes from rank %d (tag %d) into a buffer of %d", ErrTruncated, m.total, m.src, m.tag, len(buf))
	}
	if m.err != nil {
		return st, m.stamp, m.err
	}
	if !m.direct {
		copy(buf, m.own)
		e.release(m)
	}
	sp := m.stamp
	e.retire(r) // for the next receive and message, if nothing refers to them
	return st, sp, nil
}

// block waits until r is finished, or withdraws it when ctx is done
// first (then it returns ctx's error). Over a transport whose links a
// receive can read itself (progresser), it reads its source's; else it
// says it waits, so that the links' own goroutines read for it.
func (e *engine) block(ctx context.Context, r *recvReq) error {
	e.ctl.release() // this rank waits: its held verdicts go now
	p, _ := e.tx.(progresser)
	if p != nil && r.src != AnySource && r.src != e.rank && p.progress(ctx, r.src, r.ready, &r.wake) {
		p = nil // it read for itself, and is done
	}
	if p != nil {
		p.waiting(r.src, 1)
		defer p.waiting(r.src, -1)
	}
	select {
	case <-r.ready:
	case <-ctx.Done():
		if e.cancel(r) {
			return ctx.Err()
		}
		<-r.ready // finished meanwhile
	}
	return nil
}

// cancel withdraws a receive whose context is done. It reports false if
// the receive finished first. A receive whose message is being written
// into its buffer waits for the write to stop — breaking the link if the
// transport is stalled inside it — so that no byte lands in the buffer
// after Recv has returned.
func (e *engine) cancel(r *recvReq) bool {
	e.mu.Lock()
	if r.finished {
		e.mu.Unlock()
		return false
	}
	r.finished = true // nothing will finish it now
	if i := slices.Index(e.posted, r); i >= 0 {
		e.posted = slices.Delete(e.posted, i, i+1)
		e.mu.Unlock()
		return true
	}
	var m *message
	for x := range e.inflight.all() {
		if x.recv == r {
			m = x
			break
		}
	}
	if m == nil {
		for _, x := range e.unexpected {
			if x.recv == r {
				m = x
			}
		}
	}
	if m == nil {
		e.mu.Unlock()
		return true
	}
	if !m.direct {
		m.recv = nil // back in the queue for another receive
		e.mu.Unlock()
		return true
	}
	m.direct, m.discard = false, true // the rest of it is thrown away
	if m.g != nil {
		m.g.discard(e, m, discardCanceled)
	}
	e.mu.Unlock()
	e.ctl.flush()
	if !m.writing.TryLock() {
		e.tx.Abort(m.src, fmt.Errorf("a receive was canceled while rank %d's message %d was being written into it", m.src, m.id))
		m.writing.Lock()
	}
	m.writing.Unlock()
	return true
}

// lostFor returns the error for a receive from src when src (or, for
// AnySource, any peer) is gone. Called with e.mu held.
func (e *engine) lostFor(src int) error {
	if src == AnySource {
		if e.anyLost {
			for p, err := range e.lost {
				if err != nil {
					return &PeerError{Rank: p, Err: err}
				}
			}
		}
		return nil
	}
	if err := e.lost[src]; err != nil {
		return &PeerError{Rank: src, Err: err}
	}
	return nil
}

// lose records that a peer is gone: receives waiting on it (and on
// AnySource) fail, its unfinished messages are dropped (its finished ones
// can still be received), and sends waiting for its verdict fail.
func (e *engine) lose(peer int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lost[peer] != nil || peer == e.rank {
		return
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	e.lost[peer] = err
	e.anyLost = true
	e.broken.Store(true)
	e.dropOrders(peer)
	pe := &PeerError{Rank: peer, Err: err}
	e.posted = slices.DeleteFunc(e.posted, func(r *recvReq) bool {
		if r.src == peer || r.src == AnySource {
			r.finish(nil, pe)
			return true
		}
		return false
	})
	for id, m := range e.inflight[peer] {
		delete(e.inflight[peer], id)
		e.dropUnexpected(m)
		if !m.filling { // else the goroutine writing it releases it (arriveData)
			e.release(m)
		}
		if m.recv != nil {
			m.recv.finish(nil, pe)
		}
	}
	for id, p := range e.sends {
		if p.dst == peer {
			e.failSend(id, p, pe)
		}
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

// send cuts a message into frames and hands them to the transport (or,
// to itself, straight to its own engine).
func (e *engine) send(ctx context.Context, ctxID uint32, dst int, tag int64, data, stamp []byte) error {
	return e.sendIn(ctx, e.turnFor(dst), ctxID, dst, tag, data, stamp)
}

// sendIn is send in the turn of ticket t, which it ends (or gives up).
func (e *engine) sendIn(ctx context.Context, t ticket, ctxID uint32, dst int, tag int64, data, stamp []byte) error {
	if err := t.wait(ctx); err != nil {
		return err
	}
	err := e.sendNow(ctx, ctxID, dst, tag, data, stamp)
	t.done()
	return err
}

// sendNow is send's work, in its turn.
func (e *engine) sendNow(ctx context.Context, ctxID uint32, dst int, tag int64, data, stamp []byte) error {
	if err := e.ready(ctx, dst); err != nil {
		return err
	}
	h := wire.Header{Kind: wire.KindMsg, Ctx: ctxID, Tag: tag, ID: e.nextID.Add(1), Total: int64(len(data))}
	if err := e.sendStamp(ctx, dst, &h, stamp); err != nil {
		return err
	}
	if err := e.sendData(ctx, dst, h, data, MaxFrame, nil); err != nil {
		return err
	}
	e.stats.msgsOut.Add(1)
	e.stats.bytesOut.Add(uint64(len(data)))
	return nil
}

// sendStamp sends a message's datatype stamp ahead of it, if it has one.
func (e *engine) sendStamp(ctx context.Context, dst int, h *wire.Header, stamp []byte) error {
	if stamp == nil {
		return nil
	}
	sh := wire.Header{Kind: wire.KindStamp, Ctx: h.Ctx, Tag: h.Tag, ID: h.ID, Total: h.Total, Plen: len(stamp), Sum: xxh3.Hash(stamp)}
	return e.frame(ctx, dst, &sh, stamp)
}

// ready checks that a send to dst can start.
func (e *engine) ready(ctx context.Context, dst int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !e.broken.Load() {
		return nil // the usual case, without the lock
	}
	e.mu.Lock()
	closed, lost := e.closed, e.lost[dst]
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if lost != nil {
		return &PeerError{Rank: dst, Err: lost}
	}
	return nil
}

// sendData sends data as KindMsg and KindData frames of at most chunk
// bytes, with h's fields otherwise, calling each(offset, payload) on
// every frame before it goes (to checksum or hash it; what it returns is
// the frame's Sum). If a send fails after the first frame, the receiver
// is told the message is abandoned. The header is a value, and each
// never sees it, so that it stays off the heap.
func (e *engine) sendData(ctx context.Context, dst int, h wire.Header, data []byte, chunk int, each func(off int64, p []byte) uint64) error {
	if bs, ok := e.tx.(batchSender); ok && dst != e.rank && len(data) > chunk {
		return e.sendBatched(ctx, bs, dst, h, data, chunk, each)
	}
	for off := 0; ; {
		n := min(chunk, len(data)-off)
		h.Plen, h.Offset = n, int64(off)
		p := data[off : off+n]
		if each != nil {
			h.Sum = each(h.Offset, p)
		}
		if err := e.frame(ctx, dst, &h, p); err != nil {
			if off > 0 {
				e.abandon(dst, &h)
			}
			return err
		}
		off += n
		h.Kind = wire.KindData
		if off >= len(data) {
			return nil
		}
	}
}

// batchSender is a Transport that writes several frames to one peer in
// one call (tcpTx: one writev).
type batchSender interface {
	sendBatch(ctx context.Context, dst int, hs []wire.Header, ps [][]byte) error
}

// maxBatch bounds the bytes of the frames sendBatched hands the
// transport at once: one write's piece (writePiece), so that the sender
// hashes the next batch while the receiver copies out this one; in
// larger batches a 1 MiB message would be hashed whole before any of it
// was written (BenchmarkProtectionOverhead/transport=tcp/size=1MiB,
// checksum/none).
const maxBatch = writePiece

// sendBatched is sendData over a batchSender: the frames of a message go
// in batches of up to maxBatch bytes, each batch in one write (of small
// chunks, several frames in one system call).
func (e *engine) sendBatched(ctx context.Context, bs batchSender, dst int, h wire.Header, data []byte, chunk int, each func(off int64, p []byte) uint64) error {
	k := min((len(data)+chunk-1)/chunk, max(1, maxBatch/chunk))
	b := batches.Get().(*batch)
	defer b.release()
	hs, ps := b.hs[:0], b.ps[:0]
	defer func() { b.hs, b.ps = hs, ps }() // grown, for the next
	for off := 0; off < len(data); {
		hs, ps = hs[:0], ps[:0]
		start := off
		for ; off < len(data) && len(hs) < k; off += min(chunk, len(data)-off) {
			n := min(chunk, len(data)-off)
			h.Plen, h.Offset = n, int64(off)
			p := data[off : off+n]
			if each != nil {
				h.Sum = each(h.Offset, p)
			}
			hs, ps = append(hs, h), append(ps, p)
			h.Kind = wire.KindData
		}
		held := 0
		if start == 0 && e.ctl.heldN.Load() > 0 {
			// The verdicts held for dst go ahead of the first batch in
			// its write, as with frameWithHeld: taken now that the batch
			// is hashed, so that the hold's timer sends them meanwhile.
			b.fs = e.ctl.takeHeld(dst, b.fs[:0])
			for i, f := range b.fs {
				hs, ps = slices.Insert(hs, i, f.h), slices.Insert(ps, i, f.payload)
			}
			held = len(b.fs)
			e.ctl.rode.Add(uint64(held))
		}
		if err := bs.sendBatch(ctx, dst, hs, ps); err != nil {
			if start > 0 || len(hs)-held > 1 {
				e.abandon(dst, &h)
			}
			return err
		}
	}
	return nil
}

// frame sends one frame to dst (to itself: straight to its own engine).
func (e *engine) frame(ctx context.Context, dst int, h *wire.Header, p []byte) error {
	if dst == e.rank {
		return e.arrive(e.rank, *h, bytesFill(p))
	}
	if e.ctl.heldN.Load() > 0 {
		if bs, ok := e.tx.(batchSender); ok {
			return e.frameWithHeld(ctx, bs, dst, h, p)
		}
	}
	return e.tx.Send(ctx, dst, *h, p)
}

// frameWithHeld sends a frame to dst behind the verdicts held for dst
// (ctlQueue.hold), in one write.
func (e *engine) frameWithHeld(ctx context.Context, bs batchSender, dst int, h *wire.Header, p []byte) error {
	b := batches.Get().(*batch)
	defer b.release()
	b.fs = e.ctl.takeHeld(dst, b.fs[:0])
	if len(b.fs) == 0 {
		return e.tx.Send(ctx, dst, *h, p)
	}
	for _, f := range b.fs {
		b.hs, b.ps = append(b.hs, f.h), append(b.ps, f.payload)
	}
	b.hs, b.ps = append(b.hs, *h), append(b.ps, p)
	e.ctl.rode.Add(uint64(len(b.fs)))
	return bs.sendBatch(ctx, dst, b.hs, b.ps)
}

// batch is the scratch of frameWithHeld and sendBatched, pooled: a send
// allocates nothing.
type batch struct {
	fs []ctlFrame
	hs []wire.Header
	ps [][]byte
}

var batches = sync.Pool{New: func() any { return new(batch) }}

// release puts b back in batches, empty.
func (b *batch) release() {
	b.reset()
	batches.Put(b)
}

// reset empties b. The frames' and the callers' payloads are not the
// pool's to keep: cleared to their capacity, since a shorter batch after
// a longer one (sendBatched's last) leaves the longer one's pointers past
// its length.
func (b *batch) reset() {
	clear(b.fs[:cap(b.fs)])
	clear(b.ps[:cap(b.ps)])
	b.fs, b.hs, b.ps = b.fs[:0], b.hs[:0], b.ps[:0]
}

// abandon tells dst that the message of h will not be finished, so that a
// receive bound to it fails rather than waits.
func (e *engine) abandon(dst int, h *wire.Header) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	a := wire.Header{Kind: wire.KindAbort, Ctx: h.Ctx, Tag: h.Tag, ID: h.ID, Total: h.Total, Seq: h.Seq, Sum: xxh3.Hash(nil)}
	e.frame(ctx, dst, &a, nil)
}

// shutdown fails everything waiting and refuses what comes next.
func (e *engine) shutdown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	e.broken.Store(true)
	clear(e.parked)
	for _, r := range e.posted {
		r.finish(nil, ErrClosed)
	}
	e.posted = nil
	for m := range e.inflight.all() {
		if m.recv != nil {
			m.recv.finish(nil, ErrClosed)
		}
	}
	for id, p := range e.sends {
		e.failSend(id, p, ErrClosed)
	}
	e.ctl.stop()
}

// counters are an endpoint's statistics (Stats).
type counters struct {
	msgsOut, msgsIn, bytesOut, bytesIn                atomic.Uint64
	injected, detected, repaired, resent, rounds, bad atomic.Uint64
}
