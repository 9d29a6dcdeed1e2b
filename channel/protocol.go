package channel

import (
	"bytes"

	"github.com/zeebo/xxh3"
)

// The payload grammar of the protection protocol: what the first bytes
// of a control frame's payload say (verdicts, asks), the flags of a
// frame, and the final verdict written three times (flagTriple).

// Verdicts, the first byte of a KindVerdict payload.
const (
	verdictOK        = 0
	verdictRanges    = 1 // checksum: resend these byte ranges (offset, length uvarints)
	verdictSegments  = 2 // merkle: resend these segments (uvarints)
	verdictFail      = 3 // the receiver gave up
	verdictDiscarded = 4 // the receiver threw the message away; then the reason (discardTruncated…)
	verdictUnknown   = 5 // the receiver never opened the message: send it again
)

// Asks, the first byte of a KindAsk payload.
const (
	askNodes = 0 // then a tree.Request
	askRoot  = 1 // the trailer again
)

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

// askStamp, in a KindAsk, asks for the message's datatype stamp again.
const askStamp = 2

// Directions of KindAgain, in its Offset field.
const (
	againToSender   = 0
	againToReceiver = 1
)
