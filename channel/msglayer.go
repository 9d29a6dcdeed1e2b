package channel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sigcheck/sigcheck/sig"
)

// Protection over a Comm of another package (a replicate.Comm, a user's
// wrapper), whose frames this package never sees. WithChecksum and
// WithMerkle then work on whole messages: each carries its check (a
// checksum, or its Merkle root) after its bytes, and the receiver checks
// it before the bytes reach the receive's buffer. Damage is detected, not
// repaired: the Recv fails with ErrCorrupted, and the sender, whose Send
// has returned, does not hear of it. Over a Comm of this package the
// frame-level path (framed) does better: each frame is checked as it
// arrives, and only what was damaged is sent again. The formats of the
// checks and of a typed message's header are protocol.go's.

// msgLayer is a protection layer over a Comm of another package.
type msgLayer struct {
	c     Comm
	p     *protection
	n     int // bytes of the check each message carries (its trailer)
	stats counters
}

func newMsgLayer(c Comm, p *protection) (Comm, error) {
	if p.mode == modeMerkle && p.parity > 0 {
		return nil, fmt.Errorf("channel: Parity over a %T: a layer over a Comm of another package detects damage but does not rebuild it", c)
	}
	n := msgSumTrailer
	if p.mode == modeMerkle {
		n = p.h.Size() + 2
	}
	return &msgLayer{c: c, p: p, n: n}, nil
}

func (l *msgLayer) Rank() int { return l.c.Rank() }
func (l *msgLayer) Size() int { return l.c.Size() }

// Stats returns the layer's own counters: the messages it sent and
// received whole, and those it found damaged (Detected, Unrepaired).
func (l *msgLayer) Stats() Stats { return l.stats.snapshot() }

// Flush is the Flush of the Comm under the layer: the layer's own sends
// return once their messages are handed to it.
func (l *msgLayer) Flush(ctx context.Context) error { return Flush(ctx, l.c) }

// Send sends data with its check after it.
func (l *msgLayer) Send(ctx context.Context, dst, tag int, data []byte) error {
	bp := msgBuf(len(data) + l.n)
	defer msgBufs.Put(bp)
	b, err := l.seal((*bp)[:0], data)
	if err != nil {
		return err
	}
	if err := l.c.Send(ctx, dst, tag, b); err != nil {
		return err
	}
	l.stats.sent(len(data))
	return nil
}

// seal appends data and its check to b.
func (l *msgLayer) seal(b, data []byte) ([]byte, error) {
	b = append(b, data...)
	if l.p.mode == modeChecksum {
		return appendSumTrailer(b, fold(l.p.alg.Sum(data)), l.p.algIdx), nil
	}
	root, err := l.p.h.Root(data, l.p.seg)
	if err != nil {
		return nil, err
	}
	return appendRootTrailer(b, root, l.p.h.Size()), nil
}

// Recv receives a message and checks it before its bytes go into buf.
func (l *msgLayer) Recv(ctx context.Context, src, tag int, buf []byte) (Status, error) {
	bp := msgBuf(len(buf) + l.n)
	defer msgBufs.Put(bp)
	st, err := l.c.Recv(ctx, src, tag, *bp)
	if err != nil {
		if errors.Is(err, ErrTruncated) && st.Len >= l.n {
			st.Len -= l.n // the message's own bytes, without the check
			err = fmt.Errorf("%w (%d bytes of it the layer's check)", err, l.n)
		}
		return st, err
	}
	b := (*bp)[:st.Len]
	if len(b) < l.n {
		return st, fmt.Errorf("%w: a message of %d bytes from rank %d (tag %d), shorter than a protection layer's check", ErrProtocol, len(b), st.Source, st.Tag)
	}
	st.Len -= l.n
	if err := l.check(b); err != nil {
		l.stats.detected.Add(1)
		l.stats.bad.Add(1)
		return st, fmt.Errorf("%w: the message from rank %d (tag %d): %v", ErrCorrupted, st.Source, st.Tag, err)
	}
	copy(buf, b[:st.Len])
	l.stats.msgsIn.Add(1)
	l.stats.bytesIn.Add(uint64(st.Len))
	return st, nil
}

// check checks a message's bytes against the check after them.
func (l *msgLayer) check(b []byte) error {
	data, sum, param, kind, err := splitTrailer(b, l.n)
	if err != nil {
		return err
	}
	switch {
	case l.p.mode == modeChecksum && kind == trailerSum:
		alg := algByIndex(param)
		if alg == nil {
			return fmt.Errorf("checksum algorithm %d", param)
		}
		if fold(alg.Sum(data)) != sum.Lo {
			return errors.New("its checksum does not hold")
		}
		return nil
	case l.p.mode == modeMerkle && kind == trailerRoot:
		if int(param) != l.p.h.Size() {
			return fmt.Errorf("a root of %d bytes, %d expected", param, l.p.h.Size())
		}
		root, err := l.p.h.Root(data, l.p.seg)
		if err != nil {
			return err
		}
		if root != sum {
			return errors.New("its Merkle root does not hold")
		}
		return nil
	}
	return fmt.Errorf("a check of kind %d", kind)
}

// msgBufs keeps the buffers of message-level sends and receives, which
// hold a message and its check (or typed header) while it crosses.
var msgBufs sync.Pool // *[]byte

// msgBuf returns a buffer of n bytes, a kept one if it is big enough.
func msgBuf(n int) *[]byte {
	if p, ok := msgBufs.Get().(*[]byte); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n)
	return &b
}

// sendInMessage sends a typed message over a Comm of another package: its
// stamp and description (meta) at its head.
func (t *Typed) sendInMessage(ctx context.Context, dst, tag int, data, meta []byte) error {
	bp := msgBuf(2 + len(meta) + len(data))
	defer msgBufs.Put(bp)
	b := append(appendTypedHead((*bp)[:0], meta), data...)
	return t.c.Send(ctx, dst, tag, b)
}

// recvInMessage receives a typed message over a Comm of another package,
// and takes its header off.
func (t *Typed) recvInMessage(ctx context.Context, src, tag int, buf []byte) (Status, stamp, error) {
	bp := msgBuf(len(buf) + maxTypedHead)
	defer msgBufs.Put(bp)
	st, err := t.c.Recv(ctx, src, tag, *bp)
	if err != nil {
		if errors.Is(err, ErrTruncated) {
			// Longer than any header and buf: its data, whose header is at
			// least a stamp's, are at most this long.
			st.Len = max(0, st.Len-2-sig.StampSize)
		}
		return st, stamp{}, err
	}
	meta, data, err := splitTyped((*bp)[:st.Len])
	if err != nil {
		return st, stamp{}, err
	}
	st.Len = len(data)
	if len(data) > len(buf) {
		return st, stamp{}, fmt.Errorf("%w: %d bytes from rank %d (tag %d) into a buffer of %d", ErrTruncated, len(data), st.Source, st.Tag, len(buf))
	}
	copy(buf, data)
	return st, stamp{b: bytes.Clone(meta), ok: true}, nil
}
