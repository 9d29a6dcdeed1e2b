package channel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// transport moves frames to other ranks. Frames arriving from peers are
// handed to the engine's arrive, from the transport's own goroutines.
type transport interface {
	// send delivers one frame to dst; payload is only read during the call.
	send(ctx context.Context, dst int, h *wire.Header, payload []byte) error
	// abort breaks the link with a peer, which becomes lost: the way to
	// interrupt a transport stalled while writing into a receive buffer.
	abort(peer int, err error)
	close() error
}

// engine matches messages to receives for one rank, whatever the
// transport: receives posted before their message get its bytes written
// straight into their buffer; messages that come first wait in their own
// buffer, in arrival order, for a receive.
type engine struct {
	rank, size int
	tx         transport
	nextID     atomic.Uint64
	nextCtx    atomic.Uint32

	mu         sync.Mutex
	posted     []*recvReq          // receives waiting, in the order posted
	unexpected []*message          // messages no receive has taken yet, in arrival order
	inflight   map[msgKey]*message // messages whose frames are still coming
	lost       []error             // per peer, once it is gone
	anyLost    bool
	closed     bool
}

type msgKey struct {
	src int
	id  uint64
}

type message struct {
	src   int
	ctx   uint32
	tag   int64
	id    uint64
	total int64
	got   int64

	own     []byte     // the message's bytes, when it came before its receive
	recv    *recvReq   // the receive that took it, if any
	direct  bool       // its bytes go straight into recv.buf
	discard bool       // its bytes are thrown away (truncated or abandoned)
	writing sync.Mutex // held while a transport writes into recv.buf
	done    bool
}

type recvReq struct {
	ctx      uint32
	src      int
	tag      int64
	buf      []byte
	ready    chan struct{}
	finished bool
	msg      *message
	err      error
}

func newEngine(rank, size int) *engine {
	e := &engine{rank: rank, size: size, inflight: map[msgKey]*message{}, lost: make([]error, size)}
	return e
}

func (m *message) matches(ctx uint32, src int, tag int64) bool {
	return m.ctx == ctx && (src == AnySource || src == m.src) &&
		(tag == AnyTag && m.tag < ReservedTag || tag == m.tag)
}

// finish completes a receive, once. Called with e.mu held.
func (r *recvReq) finish(m *message, err error) {
	if r.finished {
		return
	}
	r.finished, r.msg, r.err = true, m, err
	close(r.ready)
}

// arrive takes one frame from src. fill reads the frame's payload: called
// with consecutive slices whose lengths add up to h.Plen. An error means
// the peer broke the protocol; the transport then drops the link.
func (e *engine) arrive(src int, h wire.Header, fill func([]byte) error) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	k := msgKey{src, h.ID}
	m := e.inflight[k]
	switch h.Kind {
	case wire.KindMsg:
		if m != nil {
			e.mu.Unlock()
			return fmt.Errorf("%w: rank %d reopened message %d", ErrProtocol, src, h.ID)
		}
		m = &message{src: src, ctx: h.Ctx, tag: h.Tag, id: h.ID, total: h.Total}
		e.bind(m)
		e.inflight[k] = m
	case wire.KindData:
		if m == nil || h.Offset != m.got || h.Total != m.total {
			e.mu.Unlock()
			return fmt.Errorf("%w: rank %d: frame at %d of %d for message %d, which is not expecting it", ErrProtocol, src, h.Offset, h.Total, h.ID)
		}
	}
	direct, discard := m.direct, m.discard
	var dst []byte
	if direct {
		dst = m.recv.buf[h.Offset : h.Offset+int64(h.Plen)]
		m.writing.Lock()
	}
	e.mu.Unlock()

	err := e.fillPayload(m, h, dst, direct, discard, fill)
	if direct {
		m.writing.Unlock()
	}
	if err != nil {
		return err
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	m.got += int64(h.Plen)
	if m.got == m.total {
		m.done = true
		delete(e.inflight, k)
		if r := m.recv; r != nil {
			e.dropUnexpected(m)
			r.finish(m, nil) // a no-op if it was finished at once (truncated) or canceled
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
	for left := h.Plen; left > 0; {
		n := min(left, piece)
		at := len(m.own)
		m.own = slices.Grow(m.own, n)[:at+n]
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

// recv receives one message on context ctxID.
func (e *engine) recv(ctx context.Context, ctxID uint32, src int, tag int64, buf []byte) (Status, error) {
	if err := ctx.Err(); err != nil {
		return Status{}, err
	}
	r := &recvReq{ctx: ctxID, src: src, tag: tag, buf: buf, ready: make(chan struct{})}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return Status{}, ErrClosed
	}
	claimed := false
	for _, m := range e.unexpected {
		if m.recv == nil && !m.discard && m.matches(ctxID, src, tag) {
			m.recv = r
			claimed = true
			if m.done {
				e.dropUnexpected(m)
				r.finish(m, nil)
			}
			break
		}
	}
	if !claimed {
		if err := e.lostFor(src); err != nil {
			e.mu.Unlock()
			return Status{}, err
		}
		e.posted = append(e.posted, r)
	}
	e.mu.Unlock()

	select {
	case <-r.ready:
	case <-ctx.Done():
		if e.cancel(r) {
			return Status{}, ctx.Err()
		}
		<-r.ready // finished meanwhile
	}
	if r.err != nil {
		return Status{}, r.err
	}
	m := r.msg
	st := Status{Source: m.src, Tag: int(m.tag), Len: int(m.total)}
	if m.total > int64(len(buf)) {
		return st, fmt.Errorf("%w: %d bytes from rank %d (tag %d) into a buffer of %d", ErrTruncated, m.total, m.src, m.tag, len(buf))
	}
	if !m.direct {
		copy(buf, m.own)
	}
	return st, nil
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
	for _, x := range e.inflight {
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
	e.mu.Unlock()
	if !m.writing.TryLock() {
		e.tx.abort(m.src, fmt.Errorf("a receive was canceled while rank %d's message %d was being written into it", m.src, m.id))
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
// AnySource) fail, its unfinished messages are dropped; its finished ones
// can still be received.
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
	pe := &PeerError{Rank: peer, Err: err}
	e.posted = slices.DeleteFunc(e.posted, func(r *recvReq) bool {
		if r.src == peer || r.src == AnySource {
			r.finish(nil, pe)
			return true
		}
		return false
	})
	for k, m := range e.inflight {
		if k.src != peer {
			continue
		}
		delete(e.inflight, k)
		e.dropUnexpected(m)
		if m.recv != nil {
			m.recv.finish(nil, pe)
		}
	}
}

// send cuts a message into frames and hands them to the transport (or,
// to itself, straight to its own engine).
func (e *engine) send(ctx context.Context, ctxID uint32, dst int, tag int64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
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
	h := wire.Header{Kind: wire.KindMsg, Ctx: ctxID, Tag: tag, ID: e.nextID.Add(1), Total: int64(len(data))}
	for off := 0; ; {
		n := min(MaxFrame, len(data)-off)
		h.Plen, h.Offset = n, int64(off)
		var err error
		if dst == e.rank {
			p := data[off : off+n]
			err = e.arrive(e.rank, h, func(b []byte) error { k := copy(b, p); p = p[k:]; return nil })
		} else {
			err = e.tx.send(ctx, dst, &h, data[off:off+n])
		}
		if err != nil {
			return err
		}
		off += n
		h.Kind = wire.KindData
		if off >= len(data) {
			return nil
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
	for _, r := range e.posted {
		r.finish(nil, ErrClosed)
	}
	e.posted = nil
	for _, m := range e.inflight {
		if m.recv != nil {
			m.recv.finish(nil, ErrClosed)
		}
	}
}
