package channel

import (
	"errors"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel/transport"
)

// caps are the optional capabilities of the engine's transport
// (package transport), asserted once when the endpoint is made. A
// wrapper between the engine and the transport (an Injector,
// WithTransportWrapper) hides them unless it offers them itself: the
// engine then does without.
type caps struct {
	progress transport.Progresser  // a waiting receive reads its link
	batch    transport.BatchSender // several frames in one call
	try      transport.TrySender   // control frames and small Isends sent without waiting
	post     transport.Poster      // a send's turn passes before its payload is read
	call     transport.Caller      // delivery within the sender's call (in process)
	piece    int                   // transport.Piecer's, or 0
}

func capsOf(t Transport) caps {
	var c caps
	c.progress, _ = t.(transport.Progresser)
	c.batch, _ = t.(transport.BatchSender)
	c.try, _ = t.(transport.TrySender)
	c.post, _ = t.(transport.Poster)
	c.call, _ = t.(transport.Caller)
	if p, ok := t.(transport.Piecer); ok {
		c.piece = max(0, p.Piece())
	}
	return c
}

// engine matches messages to receives for one rank, whatever the
// transport: receives posted before their message get its bytes written
// straight into their buffer; messages that come first wait in their own
// buffer, in arrival order, for a receive. Messages on a protected
// context are checked as they arrive (guard.go) and handed to their
// receive only once whole and verified; their senders wait for the
// verdict (sender.go).
//
// Here: its state and lifecycle (a peer lost, shutdown). Its work is in
// files by concern: match.go, arrive.go, send.go.
type engine struct {
	rank, size int
	tx         Transport
	caps       caps                     // what tx can do beyond Transport, found once
	started    chan struct{}            // closed once the engine is set up (Frames.Deliver waits)
	up         atomic.Bool              // started is closed: Deliver's fast path
	watch      atomic.Pointer[ctxWatch] // the context of the last lazy Irecv (watch.go)
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
	// w gets its token when the receive is finished (finish); the
	// goroutine waiting for the receive takes it, and a transport that
	// reads for it only looks (transport.Wait). Made once, it serves
	// every receive the recvReq is recycled for (recycle.go).
	w        *transport.Wait
	finished bool
	msg      *message
	err      error
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

// sent counts a message of n bytes out.
func (c *counters) sent(n int) {
	c.msgsOut.Add(1)
	c.bytesOut.Add(uint64(n))
}
