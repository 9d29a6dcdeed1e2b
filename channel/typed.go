package channel

import (
	"context"
	"fmt"

	"github.com/sigcheck/sigcheck/sig"
)

// Typed sends and receives messages together with their datatype: each
// message carries its datatype's signature (a sig.Stamp, 27 bytes) and
// description, and the receiver checks it against its own datatype and
// count by MPI's rules before it accepts the data. A mismatch is a
// *sig.MismatchError (errors.Is(err, sig.ErrMismatch)) that says at which
// element the two sides first differ and which basic types they have
// there — what a byte count check lets through.
//
// Typed works over any Comm. Over a Comm of this package (an Endpoint, a
// duplicate, a layer) the stamp goes in a frame of its own ahead of the
// message, and rides with the protected message's checks; over a Comm of
// another package it goes at the head of the message (a typed header,
// msglayer.go), and the receiver takes it off before the data reach buf.
type Typed struct {
	c   Comm
	e   *engine // nil: c is not framed, and the stamp goes in the message
	ctx uint32
	p   *protection
	alg sig.Algebra
}

// maxDescription bounds the datatype description sent with a message; a
// longer one is left out, and a mismatch then says how the signatures
// differ but not where.
const maxDescription = 4096

// WithTypes returns typed messaging over c, with signatures in alg (both
// sides must use the same; sig.Default() if nil).
func WithTypes(c Comm, alg sig.Algebra) *Typed {
	if alg == nil {
		alg = sig.Default()
	}
	t := &Typed{c: c, alg: alg}
	if f, ok := c.(framed); ok {
		t.e = f.engine()
		t.ctx, t.p = f.context()
	}
	return t
}

// Comm returns the Comm under t.
func (t *Typed) Comm() Comm { return t.c }

// Send sends count copies of dt, packed in data (exactly dt's size times
// count bytes).
func (t *Typed) Send(ctx context.Context, dst, tag int, data []byte, dt *sig.Datatype, count uint64) error {
	if err := checkSend(t.c, dst, tag, false); err != nil {
		return err
	}
	st, err := sig.NewStamp(t.alg, dt, count)
	if err != nil {
		return err
	}
	if st.Bytes != uint64(len(data)) {
		return fmt.Errorf("channel: %d bytes of data for %d × %s (%d bytes)", len(data), count, dt, st.Bytes)
	}
	b, err := st.AppendBinary(nil)
	if err != nil {
		return err
	}
	if d := dt.String(); len(d) <= maxDescription {
		b = append(b, d...)
	}
	if t.e == nil {
		return t.sendInMessage(ctx, dst, tag, data, b)
	}
	if t.p != nil {
		return t.e.sendProtected(ctx, t.p, t.ctx, dst, int64(tag), data, b)
	}
	return t.e.send(ctx, t.ctx, dst, int64(tag), data, b)
}

// Recv receives a message into buf as count copies of dt, after checking
// the sender's datatype against them by the point-to-point rule (the
// message may be a prefix of what the receive expects). On a mismatch
// buf's contents are undefined and the error is a *sig.MismatchError,
// located when the sender's description came along.
func (t *Typed) Recv(ctx context.Context, src, tag int, buf []byte, dt *sig.Datatype, count uint64) (Status, error) {
	if err := checkRecv(t.c, src, tag, false); err != nil {
		return Status{}, err
	}
	mine, err := sig.NewStamp(t.alg, dt, count)
	if err != nil {
		return Status{}, err
	}
	if uint64(len(buf)) < mine.Bytes {
		return Status{}, fmt.Errorf("channel: a buffer of %d bytes for %d × %s (%d bytes)", len(buf), count, dt, mine.Bytes)
	}
	var st Status
	var sp stamp
	if t.e == nil {
		st, sp, err = t.recvInMessage(ctx, src, tag, buf)
	} else {
		st, sp, err = t.e.recvStamped(ctx, t.ctx, src, int64(tag), buf)
	}
	if err != nil {
		return st, err
	}
	switch {
	case sp.b == nil:
		return st, fmt.Errorf("%w: an untyped message from rank %d (tag %d) to a typed receive", ErrProtocol, st.Source, st.Tag)
	case !sp.ok:
		return st, fmt.Errorf("%w: the datatype stamp from rank %d came corrupted", ErrCorrupted, st.Source)
	case len(sp.b) < sig.StampSize:
		return st, fmt.Errorf("%w: a stamp of %d bytes from rank %d", ErrProtocol, len(sp.b), st.Source)
	}
	var theirs sig.Stamp
	if err := theirs.UnmarshalBinary(sp.b[:sig.StampSize]); err != nil {
		return st, fmt.Errorf("%w: rank %d's stamp: %v", ErrProtocol, st.Source, err)
	}
	if theirs.Bytes != uint64(st.Len) {
		return st, fmt.Errorf("%w: rank %d's stamp says %d bytes, the message has %d", ErrProtocol, st.Source, theirs.Bytes, st.Len)
	}
	if err := theirs.Check(t.alg, dt, count, sig.PointToPoint); err != nil {
		// Locate the first difference with the sender's description.
		if desc := sp.b[sig.StampSize:]; len(desc) > 0 {
			if send, perr := sig.ParseDatatype(string(desc)); perr == nil && theirs.Sig.Count > 0 {
				if n := send.Elements(); n > 0 && theirs.Sig.Count%n == 0 {
					if merr := sig.Match(t.alg, send, theirs.Sig.Count/n, dt, count, sig.PointToPoint); merr != nil {
						return st, fmt.Errorf("rank %d, tag %d: %w", st.Source, st.Tag, merr)
					}
				}
			}
		}
		return st, fmt.Errorf("rank %d, tag %d: %w", st.Source, st.Tag, err)
	}
	return st, nil
}
