package tcp

import (
	"context"
	"errors"
	"math"
	"net"
	"runtime"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/transport"
)

// The write side of a link. One goroutine writes to a link at a time
// (link.wmu): a frame's header and payload go in one writev, a large
// frame in pieces (writePiece), each first tried without waiting, and a
// write that must wait is interrupted by its context (watch).

// Send is transport.Transport's.
func (t *tx) Send(ctx context.Context, dst int, h transport.Header, payload []byte) error {
	tc := t.conn(dst)
	if tc == nil {
		return &channel.PeerError{Rank: dst, Err: errors.New("no connection")}
	}
	tc.wmu.Lock()
	defer tc.wmu.Unlock()
	if tc.auth != nil {
		tc.oneH[0], tc.oneP[0] = h, payload
		tc.authFrames(tc.oneH[:], tc.oneP[:])
		err := tc.write(ctx)
		tc.oneP[0] = nil
		tc.authDone()
		return t.sent(ctx, dst, tc, err)
	}
	h.Put(tc.hdr[:])
	tc.out = [2][]byte{tc.hdr[:], payload}
	tc.bufs = tc.out[:]
	err := tc.write(ctx)
	tc.out[1] = nil // the caller's buffer is not ours to keep
	return t.sent(ctx, dst, tc, err)
}

// writePiece is the most that write hands the kernel in one system
// call. The kernel sends what a call queues only at the end of the call
// (or once half the peer's window waits): over loopback, a 1 MiB frame
// written in one writev was all copied into the socket before the
// receiver could start to copy any of it out. In calls of 256 KiB the
// receiver copies out each piece while the sender copies in the next,
// and a large message arrives much sooner (C Open MPI writes fragments
// of 128 KiB after a first one of 64 KiB, for the same reason); smaller
// pieces cost more calls and more wake-ups than they gain. A plain C
// ping-pong over sockets of the same buffers, spinning on non-blocking
// reads, behaves the same. scripts/tcp-latency.sh measures the 1 MiB
// ping-pong between processes beside C Open MPI's, and
// BenchmarkLatency/transport=tcp/size=1MiB in one process.
const writePiece = 256 << 10

// Piece is transport.Piecer's: the engine frames and hashes protected
// messages in pieces of one write, so that hashing one overlaps the
// kernel's copy of the one before.
func (t *tx) Piece() int { return writePiece }

// write writes tc.bufs (under wmu) under ctx: in pieces of at most
// writePiece bytes, each tried without waiting, while the socket takes
// them whole; once it does not — it is full: the receiver is behind and
// has plenty to copy, and pieces would only cost calls (a measurable
// share of a stream's bandwidth: BenchmarkBandwidth/transport=tcp) —
// the rest goes in one write that waits for the socket, under a watch of
// ctx (watch allocates: a frame the socket takes at once, a small one
// mostly, needs none).
func (tc *link) write(ctx context.Context) error {
	tc.setDeadline(ctx) // a deadline an earlier send's watch left must not fail this one
	done := 0           // bytes written
	for tc.try != nil && len(tc.bufs) > 0 {
		k := tc.takePiece(tc.pieceLimit(done))
		tc.sealTo(done + k) // an authenticated link's tags in the piece (pieceLimit leaves none)
		n, err := tc.try.writev(tc.piece)
		clear(tc.piece) // the callers' buffers are not ours to keep
		if err != nil {
			return err
		}
		consume(&tc.bufs, n)
		done += n
		if n < k {
			break
		}
	}
	if len(tc.bufs) == 0 {
		return nil
	}
	tc.sealTo(math.MaxInt)
	w := tc.watch(ctx)
	_, err := tc.bufs.WriteTo(tc.c)
	tc.unwatch(w)
	return err
}

// takePiece sets tc.piece to the first limit bytes of tc.bufs (all, if
// fewer), in at most len(tc.pieces) buffers, without the empty ones, and
// returns its length. A buffer is cut only if more than pieceSlack of it
// would be left: frames of 256 KiB of payload are 256 KiB and a header
// on the wire, and cut at 256 KiB each left a write of 32 bytes.
func (tc *link) takePiece(limit int) int {
	tc.piece = tc.pieces[:0]
	k := 0
	for _, b := range tc.bufs {
		if k >= limit || len(tc.piece) == len(tc.pieces) {
			break
		}
		if room := limit - k; len(b) > room+pieceSlack {
			b = b[:room]
		}
		if len(b) > 0 {
			tc.piece = append(tc.piece, b)
			k += len(b)
		}
	}
	return k
}

// pieceSlack is how much more than writePiece a piece may hold rather
// than leave a sliver for a write of its own.
const pieceSlack = 4 << 10

// consume drops the first n bytes of bufs, the buffers they empty, and
// the empty buffers after them: a frame written whole must not go on to
// a write of nothing (a frame without payload), which fails if the
// peer, having read the frame, has closed the connection meanwhile.
func consume(bufs *net.Buffers, n int) {
	for len(*bufs) > 0 && (n > 0 || len((*bufs)[0]) == 0) {
		k := min(n, len((*bufs)[0]))
		if (*bufs)[0] = (*bufs)[0][k:]; len((*bufs)[0]) == 0 {
			*bufs = (*bufs)[1:]
		}
		n -= k
	}
}

// sent ends a write to dst: an error breaks the link.
func (t *tx) sent(ctx context.Context, dst int, tc *link, err error) error {
	if err != nil {
		t.fail(dst, tc, err)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &channel.PeerError{Rank: dst, Err: err}
	}
	return nil
}

// setDeadline sets the write deadline of tc to ctx's (under wmu).
// Setting it takes the poller's lock: skipped when it does not change,
// as for the sends without one.
func (tc *link) setDeadline(ctx context.Context) {
	if dl, _ := ctx.Deadline(); !dl.Equal(tc.wdl) {
		tc.c.SetWriteDeadline(dl)
		tc.wdl = dl
	}
}

// watch makes ctx, if it can be canceled, interrupt a write under it
// (under wmu, the write deadline already set: write); unwatch disarms it.
func (tc *link) watch(ctx context.Context) writeWatch {
	// A context done mid-write interrupts it; the link is then broken
	// (half a frame is on the wire) and the peer is lost. (A context that
	// is never done, as most sends' are, needs no watching.)
	if ctx.Done() == nil {
		return writeWatch{}
	}
	tc.wdl = time.Unix(1, 0) // unknown now: the next send sets its own
	tc.watches++
	n := tc.watches
	return writeWatch{n, context.AfterFunc(ctx, func() {
		tc.c.SetWriteDeadline(time.Now())
		tc.watched.Store(n)
	})}
}

// writeWatch is a write's watch (watch): its number and what disarms it.
type writeWatch struct {
	n    uint64
	stop func() bool
}

// unwatch disarms a write's watch (under wmu). Once it returns the watch
// has done all it will: if the context was done as the write ended, its
// deadline is set now, not later on a goroutine of its own — over the
// deadline of the next send, which would then fail, and break the link,
// for a context not its own.
func (tc *link) unwatch(w writeWatch) {
	if w.stop == nil || w.stop() {
		return
	}
	for tc.watched.Load() != w.n { // started: the wait of a call
		runtime.Gosched()
	}
}

// SendBatch is transport.BatchSender's: the frames go in one writev, in order.
func (t *tx) SendBatch(ctx context.Context, dst int, hs []transport.Header, ps [][]byte) error {
	tc := t.conn(dst)
	if tc == nil {
		return &channel.PeerError{Rank: dst, Err: errors.New("no connection")}
	}
	tc.wmu.Lock()
	defer tc.wmu.Unlock()
	if tc.auth != nil {
		tc.authFrames(hs, ps)
		err := tc.write(ctx)
		tc.authDone()
		return t.sent(ctx, dst, tc, err)
	}
	if n := len(hs) * transport.HeaderSize; cap(tc.hdrs) < n {
		tc.hdrs = make([]byte, n)
	}
	tc.batch = tc.batch[:0]
	for i, h := range hs {
		b := tc.hdrs[i*transport.HeaderSize : (i+1)*transport.HeaderSize]
		h.Put(b)
		tc.batch = append(tc.batch, b, ps[i])
	}
	tc.bufs = tc.batch // WriteTo consumes the slice it is given; a local would escape (allocate)
	err := tc.write(ctx)
	clear(tc.batch) // the callers' buffers are not ours to keep
	return t.sent(ctx, dst, tc, err)
}

// maxTrySend bounds the frames TrySend writes: control frames (verdicts,
// asks) and small messages (Isend's), not bulk data.
const maxTrySend = 4 << 10

// TrySend sends a control frame now if it can without waiting: the
// link's writer is free and the socket takes the frame. It is how a
// link's reader sends the verdicts it makes (ctlQueue.handled) without
// waking the control goroutine. It reports false if nothing was sent.
// A frame the socket takes only part of is finished by a goroutine that
// holds the writer until it is, so that the reader never waits.
func (t *tx) TrySend(dst int, h transport.Header, payload []byte) bool {
	tc := t.conn(dst)
	if tc == nil || tc.try == nil || len(payload) > maxTrySend || !tc.wmu.TryLock() {
		return false
	}
	if tc.auth != nil {
		tc.authControl(h, payload)
	} else {
		tc.cbuf = append(append(tc.cbuf[:0], make([]byte, transport.HeaderSize)...), payload...)
		h.Put(tc.cbuf)
	}
	n, err := tc.try.write(tc.cbuf)
	if n > 0 && tc.auth != nil {
		tc.auth.out.seq++ // on the wire, in part at least: the frame counts
	}
	switch {
	case err != nil || n == 0:
		// Nothing went: the control goroutine sends it, and meets the
		// error again if there is one (and then reports the link lost).
		tc.wmu.Unlock()
		return false
	case n < len(tc.cbuf):
		rest := tc.cbuf[n:]
		tc.finishing.Store(true)
		go func() {
			defer tc.wmu.Unlock()
			defer tc.finishing.Store(false)
			tc.wdl = time.Now().Add(30 * time.Second) // as the control goroutine's
			tc.c.SetWriteDeadline(tc.wdl)
			if _, err := tc.c.Write(rest); err != nil {
				t.fail(dst, tc, err)
			}
		}()
		return true
	}
	tc.wmu.Unlock()
	return true
}
