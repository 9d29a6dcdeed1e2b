package channel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// The payload grammar of the protection protocol: the flags of a frame,
// what the first bytes of a control frame's payload say (verdicts, asks,
// KindAgain's direction), the final verdict written three times, the
// resend lists, and the formats of protection over a Comm of another
// package (msglayer.go). The decoders take a peer's bytes and check them
// before anything uses them; FuzzPayload (protocol_test.go) holds them
// to it.

// The flags of a frame (wire.Header.Flags, one byte of the header) mean
// something of their own in each kind of frame, and are read only once
// the kind is known:
//   - a protected message's own frames (KindMsg, KindData, KindRepair):
//     flagStamped, and under checksums the algorithm's number
//     (algIndex), or under Merkle flagRootInline on a message's only
//     frame;
//   - KindVerdict: flagTriple.
//
// So flagRootInline and flagTriple may both be 1, as an algorithm's
// number may: a verdict never reaches a guard (arriveNow hands KindMsg
// and KindData to arriveData, which opens the guard), and only a
// verdict is untripled (arriveControl looks at the flags of KindVerdict
// alone). A flag that two kinds of frame had to share would need a bit
// of its own, as flagStamped has.

// flagRootInline, in the flags of a Merkle message's only frame, says
// that its Sum is the root (64-bit hashes): no trailer follows.
const flagRootInline = 1

// flagStamped, in the flags of a protected message's frames, says that a
// datatype stamp goes with it (Typed): a receiver that has none, or a
// corrupted one, asks for it again before it accepts the message.
const flagStamped = 0x80

// flagTriple, in the flags of a verdict, says that its payload is the
// final verdict written three times: when the payload check fails, the
// sender takes the copy whose triple has the check the header (which has
// a check of its own) carries, so that a verdict damaged on the way still
// ends the transfer with the outcome the receiver decided — the two
// sides agree without a round trip more. (Resend lists are asked for
// again instead.) It is 1 as flagRootInline is: the two are flags of
// different kinds of frame (see above).
const flagTriple = 1

// Verdicts, the first byte of a KindVerdict payload.
const (
	verdictOK        = 0
	verdictRanges    = 1 // checksum: resend these byte ranges (offset, length uvarints)
	verdictSegments  = 2 // merkle: resend these segments (uvarints)
	verdictFail      = 3 // the receiver gave up
	verdictDiscarded = 4 // the receiver threw the message away; then the reason (discardTruncated…)
	verdictUnknown   = 5 // the receiver never opened the message: send it again
)

// Reasons of a verdictDiscarded, its second byte.
const (
	discardTruncated = 1 // the receive buffer is shorter than the message
	discardCanceled  = 2 // the receive was canceled while the message came
)

// The bodies of verdicts, and the payloads of the common final ones,
// shared: frames never write into their payloads. (Found by a switch,
// not a map keyed by the body: a map would hash the body for every
// verdict, on the way of every small protected message.)
var (
	okVerdict, failVerdict = []byte{verdictOK}, []byte{verdictFail}
	unknownVerdict         = []byte{verdictUnknown}
	okTriple               = bytes.Repeat(okVerdict, 3)
	failTriple             = bytes.Repeat(failVerdict, 3)
)

// verdictHeader is the header of a final verdict about a message.
func verdictHeader(ctx uint32, tag int64, id uint64, total int64) wire.Header {
	return wire.Header{Kind: wire.KindVerdict, Ctx: ctx, Tag: tag, ID: id, Total: total, Flags: flagTriple}
}

// triple is a final verdict's payload: its body three times over.
func triple(body []byte) []byte {
	switch {
	case len(body) == 1 && body[0] == verdictOK:
		return okTriple
	case len(body) == 1 && body[0] == verdictFail:
		return failTriple
	}
	return bytes.Repeat(body, 3)
}

// untriple returns the body of a triple payload whose check is sum: the
// payload's first third if it is whole, else the copy, if any, that
// tripled has that check.
func untriple(p []byte, sum uint64, ok bool) ([]byte, bool) {
	if len(p) == 0 || len(p)%3 != 0 {
		return nil, false
	}
	n := len(p) / 3
	if ok {
		return p[:n], true
	}
	for c := range 3 {
		body := p[c*n : (c+1)*n]
		if xxh3.Hash(bytes.Repeat(body, 3)) == sum {
			return body, true
		}
	}
	return nil, false
}

// A resend verdict lists the parts the receiver wants again, at most
// maxListed of them:
//
//	verdictRanges   n (uvarint) ‖ n × (offset, length) (uvarints)   checksum: byte ranges
//	verdictSegments n (uvarint) ‖ n × segment (uvarint)             merkle: segments
//
// appendResendHead begins one of n parts; appendRange and appendSegment
// append a part.
func appendResendHead(b []byte, kind byte, n int) []byte {
	return binary.AppendUvarint(append(b, kind), uint64(n))
}

func appendRange(b []byte, off, n int64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, uint64(off)), uint64(n))
}

func appendSegment(b []byte, j int) []byte { return binary.AppendUvarint(b, uint64(j)) }

// decodeResend reads a resend verdict: its parts, each an offset and a
// length (verdictRanges) or a segment and 0 (verdictSegments). It checks
// the grammar only (a count no longer than the bytes, every number whole,
// nothing after the list): what the numbers may be is the sender's to
// check, against its message (sender.parseResend).
func decodeResend(b []byte) ([][2]uint64, error) {
	if len(b) == 0 || b[0] != verdictRanges && b[0] != verdictSegments {
		return nil, errors.New("not a resend list")
	}
	kind, r := b[0], b[1:]
	n, k := binary.Uvarint(r)
	if k <= 0 || n > uint64(len(r)) {
		return nil, errors.New("a resend list's count")
	}
	r = r[k:]
	out := make([][2]uint64, 0, n)
	for range n {
		var part [2]uint64
		if part[0], k = binary.Uvarint(r); k <= 0 {
			return nil, errors.New("a resend list's part")
		}
		r = r[k:]
		if kind == verdictRanges {
			if part[1], k = binary.Uvarint(r); k <= 0 {
				return nil, errors.New("a resend list's length")
			}
			r = r[k:]
		}
		out = append(out, part)
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%d bytes after the resend list", len(r))
	}
	return out, nil
}

// discardWhy is what a verdictDiscarded body says of why: ErrTruncated,
// ErrCanceled, or ErrProtocol for a reason this build does not know.
func discardWhy(b []byte) error {
	switch {
	case len(b) == 2 && b[1] == discardTruncated:
		return ErrTruncated
	case len(b) == 2 && b[1] == discardCanceled:
		return ErrCanceled
	}
	return ErrProtocol
}

// Asks, the first byte of a KindAsk payload.
const (
	askNodes = 0 // then a tree.Request
	askRoot  = 1 // the trailer again
	askStamp = 2 // the message's datatype stamp again
)

// Directions of KindAgain, in its Offset field.
const (
	againToSender   = 0
	againToReceiver = 1
)

// maxListed bounds the parts one control frame lists or answers for:
// with uvarints of up to 10 bytes and hashes of up to 16, any list fits
// in a frame with room to spare, whatever the number of damaged parts;
// more are asked for in the next exchange.
const maxListed = 1 << 15

// maxStamps bounds the stamps waiting for their messages, and
// maxStampSize each one (a signature stamp and a description of at most
// maxDescription bytes): 16 MiB in all at most.
const (
	maxStamps    = 1024
	maxStampSize = 16 << 10
)

// The message-level formats. A layer's check goes after the message's
// bytes, so that the bytes are where a receive wants them:
//
//	data ‖ sum (8 bytes, little-endian) ‖ algorithm (1) ‖ trailerSum (1)
//	data ‖ root (8 or 16 bytes, low half first) ‖ its size (1) ‖ trailerRoot (1)
//
// The sum is the checksum folded to 64 bits (fold), as in a frame's
// header; the algorithm its number in the frames' flags (algIndex). A
// typed message over a Comm of another package starts with its header:
//
//	n (2 bytes, little-endian) ‖ stamp and description (n bytes) ‖ data
const (
	trailerSum  = 1
	trailerRoot = 2

	msgSumTrailer = 8 + 2
	maxTypedHead  = 2 + maxStampSize
)

func appendSumTrailer(b []byte, sum uint64, alg byte) []byte {
	return append(binary.LittleEndian.AppendUint64(b, sum), alg, trailerSum)
}

func appendRootTrailer(b []byte, root csum.Value, size int) []byte {
	b = binary.LittleEndian.AppendUint64(b, root.Lo)
	if size == 16 {
		b = binary.LittleEndian.AppendUint64(b, root.Hi)
	}
	return append(b, byte(size), trailerRoot)
}

// splitTrailer splits a message of a layer whose trailer is n bytes into
// its data and its check: the sum (in Lo for a checksum), the trailer's
// parameter (an algorithm's number, a root's size) and its kind.
func splitTrailer(b []byte, n int) (data []byte, sum csum.Value, param, kind byte, err error) {
	if n < 2 || len(b) < n {
		return nil, csum.Value{}, 0, 0, fmt.Errorf("%d bytes, shorter than a check of %d", len(b), n)
	}
	data, t := b[:len(b)-n], b[len(b)-n:]
	param, kind = t[n-2], t[n-1]
	switch {
	case kind == trailerSum && n == msgSumTrailer:
	case kind == trailerRoot && (n == 8+2 || n == 16+2) && int(param) == n-2:
	default:
		return nil, csum.Value{}, 0, 0, fmt.Errorf("a check of kind %d in %d bytes", kind, n)
	}
	sum.Lo = binary.LittleEndian.Uint64(t)
	if n == 16+2 {
		sum.Hi = binary.LittleEndian.Uint64(t[8:])
	}
	return data, sum, param, kind, nil
}

// appendTypedHead appends a typed message's header: its stamp and
// description (meta).
func appendTypedHead(b, meta []byte) []byte {
	return append(binary.LittleEndian.AppendUint16(b, uint16(len(meta))), meta...)
}

// splitTyped splits a typed message into its stamp and description, and
// its data.
func splitTyped(b []byte) (meta, data []byte, err error) {
	if len(b) < 2 {
		return nil, nil, fmt.Errorf("%w: a typed message of %d bytes, shorter than its header", ErrProtocol, len(b))
	}
	n := int(binary.LittleEndian.Uint16(b))
	if n > maxStampSize || 2+n > len(b) {
		return nil, nil, fmt.Errorf("%w: a typed header of %d bytes in a message of %d", ErrProtocol, n, len(b))
	}
	return b[2 : 2+n], b[2+n:], nil
}
