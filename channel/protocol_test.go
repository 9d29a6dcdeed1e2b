package channel

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
)

// payloadSeeds are well-formed payloads of each kind of the grammar: the
// seed corpus in testdata/fuzz/FuzzPayload holds them and a few broken
// ones (go test runs them all).
func payloadSeeds() [][]byte {
	ranges := appendRange(appendRange(appendResendHead(nil, verdictRanges, 2), 0, 4096), 1<<20, 300)
	segs := appendSegment(appendSegment(appendSegment(appendResendHead(nil, verdictSegments, 3), 0), 7), 1<<30)
	return [][]byte{
		ranges,
		segs,
		okTriple,
		triple([]byte{verdictDiscarded, discardCanceled}),
		{verdictDiscarded, discardTruncated},
		appendSumTrailer([]byte("some data"), 0x0123456789abcdef, 1),
		appendRootTrailer([]byte("more"), csum.Value{Lo: 1, Hi: 2}, 16),
		appendRootTrailer(nil, csum.Value{Lo: 3}, 8),
		appendTypedHead(nil, []byte("a stamp and its description")),
		append(appendTypedHead(nil, nil), "data"...),
	}
}

// FuzzPayload feeds a peer's bytes to every decoder of the payload
// grammar. None may panic or read past the bytes; what decodes must
// encode back to the same bytes (a resend list: to the same parts, in no
// more bytes, as uvarints have longer spellings that decode alike); a
// triple payload damaged in one copy still gives its body; a discard
// reason is always one of the three errors.
func FuzzPayload(f *testing.F) {
	for _, s := range payloadSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parts, err := decodeResend(b)
		if err == nil && b[0] == verdictSegments && slices.ContainsFunc(parts, func(p [2]uint64) bool { return p[0] > math.MaxInt }) {
			// A segment past int, which no sender of this build writes
			// (a 32-bit one): the grammar takes it, appendSegment cannot.
			err = errors.New("beyond int")
		}
		if err == nil {
			again := appendResendHead(nil, b[0], len(parts))
			for _, p := range parts {
				if b[0] == verdictRanges {
					again = appendRange(again, int64(p[0]), int64(p[1]))
				} else {
					if p[1] != 0 {
						t.Fatalf("a segment with a length: %v", p)
					}
					again = appendSegment(again, int(p[0]))
				}
			}
			back, err := decodeResend(again)
			if err != nil || !slices.Equal(back, parts) || len(again) > len(b) {
				t.Fatalf("resend list %x: parts %v re-encode as %x, which decodes to %v, %v", b, parts, again, back, err)
			}
			if len(parts) > len(b) {
				t.Fatalf("resend list of %d bytes: %d parts", len(b), len(parts))
			}
		}

		// A payload of three copies, one of them damaged, under the check
		// of the whole one: the body survives, whichever copy is hit.
		if len(b) > 1 {
			body := b[1:]
			whole := bytes.Repeat(body, 3)
			sum := xxh3.Hash(whole)
			hit := int(b[0]) % len(whole)
			damaged := bytes.Clone(whole)
			damaged[hit] ^= 0x20
			if got, ok := untriple(damaged, sum, false); !ok || !bytes.Equal(got, body) {
				t.Fatalf("triple of %x damaged at %d: %x, %v", body, hit, got, ok)
			}
		}
		if got, ok := untriple(b, xxh3.Hash(b), false); ok && !bytes.Equal(bytes.Repeat(got, 3), b) {
			t.Fatalf("untriple of %x took %x, not a third of it", b, got)
		}

		if why := discardWhy(b); !errors.Is(why, ErrTruncated) && !errors.Is(why, ErrCanceled) && why != ErrProtocol {
			t.Fatalf("discard reason of %x: %v", b, why)
		}

		for _, n := range []int{msgSumTrailer, 8 + 2, 16 + 2} {
			data, sum, param, kind, err := splitTrailer(b, n)
			if err != nil {
				continue
			}
			var again []byte
			switch kind {
			case trailerSum:
				again = appendSumTrailer(bytes.Clone(data), sum.Lo, param)
			case trailerRoot:
				again = appendRootTrailer(bytes.Clone(data), sum, int(param))
			default:
				t.Fatalf("a trailer of kind %d accepted", kind)
			}
			if !bytes.Equal(again, b) {
				t.Fatalf("trailer of %d bytes in %x re-encodes as %x", n, b, again)
			}
		}

		if meta, data, err := splitTyped(b); err == nil {
			if again := append(appendTypedHead(nil, meta), data...); !bytes.Equal(again, b) {
				t.Fatalf("typed message %x re-encodes as %x", b, again)
			}
			if len(meta) > maxStampSize {
				t.Fatalf("a typed header of %d bytes accepted", len(meta))
			}
		} else if !errors.Is(err, ErrProtocol) {
			t.Fatalf("typed message %x: %v does not wrap ErrProtocol", b, err)
		}
	})
}
