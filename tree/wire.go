package tree

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/csum"
)

// The wire forms of the tree's messages. Every message starts with a
// version byte, a kind byte and the size of its hashes (8 or 16; 0 for a
// request, which has none); hashes are their low 64 bits little-endian,
// then for 16-byte hashes the high 64 bits. Counts and indices are
// uvarints in their shortest form. Decoders check every count against the
// bytes actually present before allocating, so no input can make them
// allocate more than its own length, and they reject trailing bytes and
// longer spellings of a number: a message has exactly one encoding.
//
//	root      version kind=1 size hash
//	critical  version kind=2 size count hash…
//	request   version kind=3 0    count node…
//	answer    version kind=4 size count hash…
//	proof     version kind=5 size segment segments count hash…
const wireVersion = 1

type kind byte

const (
	kindRoot kind = 1 + iota
	kindCritical
	kindRequest
	kindAnswer
	kindProof
)

var kindNames = [...]string{"", "root", "critical path", "request", "answer", "proof", "parity"}

// ErrWire is wrapped by every decoding error.
var ErrWire = errors.New("tree: malformed message")

func wireErr(k kind, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrWire, kindNames[k], fmt.Sprintf(format, args...))
}

func header(b []byte, k kind, size int) []byte { return append(b, wireVersion, byte(k), byte(size)) }

func appendHash(b []byte, v csum.Value, size int) []byte {
	b = binary.LittleEndian.AppendUint64(b, v.Lo)
	if size == 16 {
		b = binary.LittleEndian.AppendUint64(b, v.Hi)
	}
	return b
}

func appendHashes(b []byte, hs []csum.Value, size int) []byte {
	b = binary.AppendUvarint(b, uint64(len(hs)))
	for _, h := range hs {
		b = appendHash(b, h, size)
	}
	return b
}

// reader decodes one message, remembering the first error.
type reader struct {
	b   []byte
	k   kind
	err error
}

func newReader(b []byte, want kind) (reader, int) {
	r := reader{b: b, k: want}
	if len(b) < 3 {
		r.err = wireErr(want, "%d bytes, shorter than the header", len(b))
		return r, 0
	}
	switch {
	case b[0] != wireVersion:
		r.err = wireErr(want, "version %d (want %d)", b[0], wireVersion)
	case kind(b[1]) != want:
		r.err = wireErr(want, "kind %d (want %d)", b[1], want)
	case want == kindRequest && b[2] != 0:
		r.err = wireErr(want, "hash size %d in a request", b[2])
	case want != kindRequest && b[2] != 8 && b[2] != 16:
		r.err = wireErr(want, "hash size %d (want 8 or 16)", b[2])
	}
	size := int(b[2])
	r.b = b[3:]
	return r, size
}

func (r *reader) uvarint(what string, limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = wireErr(r.k, "bad %s", what)
		return 0
	}
	if n != uvarintLen(v) {
		r.err = wireErr(r.k, "%s %d in %d bytes, not the shortest form", what, v, n)
		return 0
	}
	if v > limit {
		r.err = wireErr(r.k, "%s %d over %d", what, v, limit)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// uvarintLen is the length of the shortest uvarint encoding of v: the only
// one the decoders accept, so that a message has one encoding.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func (r *reader) hashes(size int) []csum.Value {
	n := r.uvarint("count", uint64(len(r.b))/uint64(max(size, 1)))
	if r.err != nil {
		return nil
	}
	if uint64(len(r.b)) != n*uint64(size) {
		r.err = wireErr(r.k, "%d hashes of %d bytes in %d bytes", n, size, len(r.b))
		return nil
	}
	hs := make([]csum.Value, n)
	for i := range hs {
		hs[i] = r.hash(size)
	}
	return hs
}

func (r *reader) hash(size int) csum.Value {
	if r.err != nil {
		return csum.Value{}
	}
	if len(r.b) < size {
		r.err = wireErr(r.k, "hash cut short")
		return csum.Value{}
	}
	v := csum.Value{Lo: binary.LittleEndian.Uint64(r.b)}
	if size == 16 {
		v.Hi = binary.LittleEndian.Uint64(r.b[8:])
	}
	r.b = r.b[size:]
	return v
}

func (r *reader) end() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = wireErr(r.k, "%d trailing bytes", len(r.b))
	}
	return r.err
}

// AppendRoot appends the wire form of a root hash of size bytes (8 or 16):
// all that crosses when nothing is wrong, 3+size bytes.
func AppendRoot(b []byte, root csum.Value, size int) []byte {
	return appendHash(header(b, kindRoot, size), root, size)
}

// DecodeRoot decodes a root and returns it with its hash size.
func DecodeRoot(b []byte) (csum.Value, int, error) {
	r, size := newReader(b, kindRoot)
	v := r.hash(size)
	return v, size, r.end()
}

// AppendCritical appends the wire form of a critical path (CriticalPath).
func AppendCritical(b []byte, path []csum.Value, size int) []byte {
	return appendHashes(header(b, kindCritical, size), path, size)
}

// DecodeCritical decodes a critical path.
func DecodeCritical(b []byte) ([]csum.Value, int, error) {
	r, size := newReader(b, kindCritical)
	hs := r.hashes(size)
	return hs, size, r.end()
}

// AppendBinary appends the wire form of the request.
func (q Request) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(header(b, kindRequest, 0), uint64(len(q.Nodes)))
	for _, i := range q.Nodes {
		if i < 0 {
			return nil, fmt.Errorf("%w: negative node %d", ErrIndex, i)
		}
		b = binary.AppendUvarint(b, uint64(i))
	}
	return b, nil
}

// UnmarshalBinary decodes a request. Node indices are only checked
// against a tree when it answers (Tree.Answer).
func (q *Request) UnmarshalBinary(b []byte) error {
	r, _ := newReader(b, kindRequest)
	n := r.uvarint("count", uint64(len(r.b))) // every index takes a byte at least
	if r.err != nil {
		return r.err
	}
	nodes := make([]int, n)
	for i := range nodes {
		nodes[i] = int(r.uvarint("node", 1<<62))
	}
	if err := r.end(); err != nil {
		return err
	}
	q.Nodes = nodes
	return nil
}

// AppendBinary appends the wire form of the answer, with hashes of size
// bytes (the tree's Hash().Size()).
func (a Answer) AppendBinary(b []byte, size int) []byte {
	return appendHashes(header(b, kindAnswer, size), a.Hashes, size)
}

// DecodeAnswer decodes an answer.
func DecodeAnswer(b []byte) (Answer, int, error) {
	r, size := newReader(b, kindAnswer)
	hs := r.hashes(size)
	return Answer{Hashes: hs}, size, r.end()
}

// AppendBinary appends the wire form of the proof, with hashes of size bytes.
func (p Proof) AppendBinary(b []byte, size int) []byte {
	b = header(b, kindProof, size)
	b = binary.AppendUvarint(b, uint64(p.Segment))
	b = binary.AppendUvarint(b, uint64(p.Segments))
	return appendHashes(b, p.Siblings, size)
}

// DecodeProof decodes a proof; VerifyProof checks it.
func DecodeProof(b []byte) (Proof, int, error) {
	r, size := newReader(b, kindProof)
	seg := r.uvarint("segment", 1<<62)
	segs := r.uvarint("segments", 1<<62)
	if r.err == nil && seg >= segs {
		r.err = wireErr(kindProof, "segment %d of %d", seg, segs)
	}
	sib := r.hashes(size)
	if err := r.end(); err != nil {
		return Proof{}, 0, err
	}
	return Proof{Segment: int(seg), Segments: int(segs), Siblings: sib}, size, nil
}
