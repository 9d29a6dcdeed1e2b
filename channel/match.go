package channel

import (
	"context"
	"fmt"
	"slices"
)

// Matching: a receive is posted (post) and takes the first message that
// came already and matches it, or waits in line (posted) for one; a
// message that opens binds to the first posted receive it matches, or
// waits (unexpected) for one (bind); a receive waits for its message
// (wait, block), or is withdrawn (cancel).

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
	r.w.Signal()
	r.w.Cut() // finished from elsewhere (a peer lost, a held message bound late)
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
// receive can read itself (transport.Progresser), it reads its source's; else it
// says it waits, so that the links' own goroutines read for it.
func (e *engine) block(ctx context.Context, r *recvReq) error {
	e.ctl.release() // this rank waits: its held verdicts go now
	p := e.caps.progress
	if p != nil && r.src != AnySource && r.src != e.rank && p.Progress(ctx, r.src, r.w) {
		p = nil // it read for itself, and is done
	}
	if p != nil {
		p.Waiting(r.src, 1)
		defer p.Waiting(r.src, -1)
	}
	select {
	case <-r.w.C():
	case <-ctx.Done():
		if e.cancel(r) {
			return ctx.Err()
		}
		<-r.w.C() // finished meanwhile
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
