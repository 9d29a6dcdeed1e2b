package channel

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// Sending: a message is cut into frames and handed to the transport, in
// batches where the transport writes several frames at once (sendData,
// sendBatched), with the verdicts held for the same peer riding ahead of
// them (frameWithHeld). A protected message goes through sender.go.

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
	if p := e.caps.post; p != nil && stamp == nil && dst != e.rank && len(data) <= MaxFrame {
		return e.postIn(ctx, t, p, ctxID, dst, tag, data)
	}
	err := e.sendNow(ctx, ctxID, dst, tag, data, stamp)
	t.done()
	return err
}

// postIn is sendIn's way for a message of one frame over a
// transport.Poster: the turn passes as soon as the frame has its place,
// and the send then waits for its payload to be read, while the sends
// behind it start.
func (e *engine) postIn(ctx context.Context, t ticket, p transport.Poster, ctxID uint32, dst int, tag int64, data []byte) error {
	if err := e.ready(ctx, dst); err != nil {
		t.done()
		return err
	}
	h := e.msgHeader(ctxID, tag, data)
	h.Plen = len(data)
	finish, err := e.postFrame(ctx, p, dst, &h, data)
	t.done()
	if err == nil {
		err = finish()
	}
	if err != nil {
		return err
	}
	e.stats.sent(len(data))
	return nil
}

// sendNow is send's work, in its turn.
func (e *engine) sendNow(ctx context.Context, ctxID uint32, dst int, tag int64, data, stamp []byte) error {
	if err := e.ready(ctx, dst); err != nil {
		return err
	}
	h := e.msgHeader(ctxID, tag, data)
	if err := e.sendStamp(ctx, dst, &h, stamp); err != nil {
		return err
	}
	if err := e.sendData(ctx, dst, h, data, MaxFrame, nil); err != nil {
		return err
	}
	e.stats.sent(len(data))
	return nil
}

// trySend sends a message of one frame at once if the transport can
// without waiting (transport.TrySender) and no send to dst posted before
// it still waits to write: Isend's way for a small unprotected message,
// which then needs no goroutine. It reports false if nothing was sent.
func (e *engine) trySend(ctxID uint32, dst int, tag int64, data []byte) bool {
	try := e.caps.try
	if try == nil || dst == e.rank || len(data) > MaxFrame || e.broken.Load() || e.ctl.heldN.Load() > 0 {
		return false
	}
	if q := &e.sendq[dst]; q.turn.Load() != q.posted.Load() {
		return false
	}
	h := e.msgHeader(ctxID, tag, data)
	h.Plen = len(data)
	if !try.TrySend(dst, h, data) {
		return false
	}
	e.stats.sent(len(data))
	return true
}

// msgHeader is the opening header of an unprotected message of data,
// numbered now.
func (e *engine) msgHeader(ctxID uint32, tag int64, data []byte) wire.Header {
	return wire.Header{Kind: wire.KindMsg, Ctx: ctxID, Tag: tag, ID: e.nextID.Add(1), Total: int64(len(data))}
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
	if p := e.caps.post; p != nil && dst != e.rank && len(data) > chunk {
		return e.sendPosted(ctx, p, dst, h, data, chunk, each)
	}
	if bs := e.caps.batch; bs != nil && dst != e.rank && len(data) > chunk {
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

// sendPosted is sendData over a transport.Poster: each frame is posted
// as soon as it is hashed, so that the receiver copies one out while the
// sender hashes the next, where a batch at a time (sendBatched) left the
// sender waiting for each batch to be read before it hashed the next.
// The frames' sends are waited for at the end: their payloads are the
// caller's.
func (e *engine) sendPosted(ctx context.Context, p transport.Poster, dst int, h wire.Header, data []byte, chunk int, each func(off int64, p []byte) uint64) error {
	var few [8]func() error
	finishes := few[:0]
	var err error
	for off := 0; off < len(data); {
		n := min(chunk, len(data)-off)
		h.Plen, h.Offset = n, int64(off)
		pl := data[off : off+n]
		if each != nil {
			h.Sum = each(h.Offset, pl)
		}
		var finish func() error
		if off == 0 {
			finish, err = e.postFrame(ctx, p, dst, &h, pl)
		} else {
			finish, err = p.Post(ctx, dst, h, pl)
		}
		if err != nil {
			if off > 0 {
				e.abandon(dst, &h)
			}
			break
		}
		finishes = append(finishes, finish)
		off += n
		h.Kind = wire.KindData
	}
	for _, f := range finishes {
		if ferr := f(); err == nil {
			err = ferr
		}
	}
	return err
}

// batchBytes bounds the bytes of the frames sendBatched hands the
// transport at once: the transport's piece (transport.Piecer), so that
// the sender hashes the next batch while the receiver copies out this
// one; in larger batches a 1 MiB message would be hashed whole before
// any of it was written (BenchmarkProtectionOverhead/transport=tcp/
// size=1MiB, checksum/none). Without a piece, a frame's worth.
func (e *engine) batchBytes() int {
	if e.caps.piece > 0 {
		return e.caps.piece
	}
	return MaxFrame
}

// sendBatched is sendData over a transport.BatchSender: the frames of a
// message go in batches of up to batchBytes, each batch in one call (of
// small chunks, several frames in one system call over TCP).
func (e *engine) sendBatched(ctx context.Context, bs transport.BatchSender, dst int, h wire.Header, data []byte, chunk int, each func(off int64, p []byte) uint64) error {
	k := min((len(data)+chunk-1)/chunk, max(1, e.batchBytes()/chunk))
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
		if err := bs.SendBatch(ctx, dst, hs, ps); err != nil {
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
		if bs := e.caps.batch; bs != nil {
			return e.frameWithHeld(ctx, bs, dst, h, p)
		}
	}
	return e.tx.Send(ctx, dst, *h, p)
}

// postFrame starts frame h over data to dst on a transport.Poster, the
// verdicts held for dst sent ahead of it (as frameWithHeld sends them),
// and returns the Post's finish.
func (e *engine) postFrame(ctx context.Context, p transport.Poster, dst int, h *wire.Header, data []byte) (func() error, error) {
	if bs := e.caps.batch; bs != nil && e.ctl.heldN.Load() > 0 {
		b := batches.Get().(*batch)
		var err error
		if b.takeHeld(e, dst) > 0 {
			err = bs.SendBatch(ctx, dst, b.hs, b.ps)
		}
		b.release()
		if err != nil {
			return nil, err
		}
	}
	return p.Post(ctx, dst, *h, data)
}

// frameWithHeld sends a frame to dst behind the verdicts held for dst
// (ctlQueue.hold), in one write.
func (e *engine) frameWithHeld(ctx context.Context, bs transport.BatchSender, dst int, h *wire.Header, p []byte) error {
	b := batches.Get().(*batch)
	defer b.release()
	if b.takeHeld(e, dst) == 0 {
		return e.tx.Send(ctx, dst, *h, p)
	}
	b.hs, b.ps = append(b.hs, *h), append(b.ps, p)
	return bs.SendBatch(ctx, dst, b.hs, b.ps)
}

// takeHeld appends the verdicts held for dst to b's frames, to ride in
// the write that sends b, and returns how many there were.
func (b *batch) takeHeld(e *engine, dst int) int {
	b.fs = e.ctl.takeHeld(dst, b.fs[:0])
	for _, f := range b.fs {
		b.hs, b.ps = append(b.hs, f.h), append(b.ps, f.payload)
	}
	e.ctl.rode.Add(uint64(len(b.fs)))
	return len(b.fs)
}

// batch is the scratch of frameWithHeld, postFrame and sendBatched, pooled: a send
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
