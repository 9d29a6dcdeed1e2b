package tree

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/xxh3k"
)

// A Hash is how a tree hashes its nodes: a leaf is the hash of its segment
// and an inner node the hash of its children's hashes, both seeded with the
// node's index, so that equal segments at different places, or equal
// subtrees, still hash apart.
//
// "xxh3" is the default and the paper's: XXH3-64 with the node index as
// seed; an inner node hashes its two children's hashes as 16 little-endian
// bytes, left child first — hash for hash the reference implementation's
// (merkle-mpi's tree_calculate_hash). "xxh3-128" is the same with
// XXH3-128, each child's hash as 16 bytes, low half first, little-endian.
// Any other csum algorithm of up to 16 bytes also works (not the 32-byte
// digests sha256 and blake3), with the seed as 8 little-endian bytes
// written before the data; those are slower and are for comparison.
type Hash struct {
	name  string
	words int // 64-bit words per node hash: 1, or 2 for 128-bit hashes
	kind  hashKind
	alg   *csum.Algorithm // kindCsum
}

type hashKind uint8

const (
	kindXXH3 hashKind = iota
	kindXXH3128
	kindCsum
)

// DefaultHash is the hash of the paper's trees.
const DefaultHash = "xxh3"

// LookupHash returns the hash a name gives: "xxh3", "xxh3-128", or any
// algorithm of csum whose checksum fits a node (16 bytes at most).
func LookupHash(name string) (*Hash, error) {
	if name == "" {
		name = DefaultHash
	}
	if h, ok := hashes.Load(name); ok {
		return h.(*Hash), nil // a tree per small message: the lookup must cost nothing
	}
	h, err := lookupHash(name)
	if err == nil {
		hashes.Store(name, h)
	}
	return h, err
}

// hashes caches LookupHash's answers (a Hash never changes).
var hashes sync.Map

func lookupHash(name string) (*Hash, error) {
	a, err := csum.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("tree: %w", err)
	}
	if a.Size > 16 { // a node holds one or two 64-bit words
		return nil, fmt.Errorf("tree: %s: a %d-byte digest does not fit a node (16 bytes at most)", a.Name, a.Size)
	}
	h := &Hash{name: a.Name, words: (a.Size + 7) / 8, kind: kindCsum, alg: a}
	switch a.Name {
	case "xxh3":
		h.kind = kindXXH3
	case "xxh3-128":
		h.kind = kindXXH3128
	}
	return h, nil
}

// Name returns the hash's name, as csum spells it.
func (h *Hash) Name() string { return h.name }

// Size returns the bytes in one node hash: 8 or 16 (4-byte checksums are
// kept in 8).
func (h *Hash) Size() int { return 8 * h.words }

// Leaf returns the hash of a segment as the leaf at node index i of a
// tree (i = j+n-1 for segment j of n): for code that keeps trees of its
// own, such as manifests on disk, and must hash them as Build does.
func (h *Hash) Leaf(segment []byte, i uint64) csum.Value {
	if h.kind == kindXXH3 {
		return csum.Value{Lo: xxh3.HashSeed(segment, i)}
	}
	var w [2]uint64
	h.leaf(segment, i, w[:h.words])
	return get(w[:h.words])
}

// Inner returns the hash of inner node i from its children's hashes, as
// Build computes it.
func (h *Hash) Inner(left, right csum.Value, i uint64) csum.Value {
	if h.kind == kindXXH3 {
		return csum.Value{Lo: innerXXH3(left.Lo, right.Lo, i)}
	}
	var l, r, out [2]uint64
	put(left, l[:h.words])
	put(right, r[:h.words])
	h.inner(l[:h.words], r[:h.words], i, out[:h.words])
	return get(out[:h.words])
}

// A LeafHasher hashes a segment written to it in pieces, as Leaf hashes
// it whole: for a segment too large to hold, such as one rebuilt a column
// at a time.
type LeafHasher interface {
	io.Writer
	Sum() csum.Value
}

// NewLeaf returns a LeafHasher of the leaf at node index i of a segment of
// exactly n bytes.
func (h *Hash) NewLeaf(i uint64, n int64) LeafHasher {
	switch h.kind {
	case kindXXH3:
		return xxh3Leaf{xxh3.NewSeed(i)}
	case kindXXH3128:
		return xxh3Leaf128{xxh3.NewSeed128(i)}
	}
	hh := h.alg.NewFor(8 + n)
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], i)
	hh.Write(s[:])
	return csumLeaf{hh, h}
}

type xxh3Leaf struct{ *xxh3.Hasher }

func (l xxh3Leaf) Sum() csum.Value { return csum.Value{Lo: l.Sum64()} }

type xxh3Leaf128 struct{ *xxh3.Hasher128 }

func (l xxh3Leaf128) Sum() csum.Value {
	v := l.Sum128()
	return csum.Value{Lo: v.Lo, Hi: v.Hi}
}

type csumLeaf struct {
	csum.Hash
	h *Hash
}

func (l csumLeaf) Sum() csum.Value {
	var out [2]uint64
	l.h.put(l.Value(), out[:l.h.words])
	return get(out[:l.h.words])
}

// leaf hashes a segment into out (h.words words).
func (h *Hash) leaf(seg []byte, seed uint64, out []uint64) {
	switch h.kind {
	case kindXXH3:
		out[0] = xxh3.HashSeed(seg, seed)
	case kindXXH3128:
		v := xxh3.Hash128Seed(seg, seed)
		out[0], out[1] = v.Lo, v.Hi
	default:
		hh := h.alg.NewFor(int64(8 + len(seg)))
		var s [8]byte
		binary.LittleEndian.PutUint64(s[:], seed)
		hh.Write(s[:])
		hh.Write(seg)
		h.put(hh.Value(), out)
	}
}

// inner hashes two children's hashes into out.
func (h *Hash) inner(l, r []uint64, seed uint64, out []uint64) {
	switch h.kind {
	case kindXXH3:
		out[0] = innerXXH3(l[0], r[0], seed)
	case kindXXH3128:
		var b [32]byte
		binary.LittleEndian.PutUint64(b[0:], l[0])
		binary.LittleEndian.PutUint64(b[8:], l[1])
		binary.LittleEndian.PutUint64(b[16:], r[0])
		binary.LittleEndian.PutUint64(b[24:], r[1])
		v := xxh3.Hash128Seed(b[:], seed)
		out[0], out[1] = v.Lo, v.Hi
	default:
		var b [8 + 32]byte
		binary.LittleEndian.PutUint64(b[0:], seed)
		n := 8
		for _, w := range l {
			binary.LittleEndian.PutUint64(b[n:], w)
			n += 8
		}
		for _, w := range r {
			binary.LittleEndian.PutUint64(b[n:], w)
			n += 8
		}
		h.put(h.alg.Sum(b[:n]), out)
	}
}

func (h *Hash) put(v csum.Value, out []uint64) {
	out[0] = v.Lo
	if h.words > 1 {
		out[1] = v.Hi
	}
}

// innerXXH3 is the reference's inner node: XXH3_64bits_withSeed of
// {left, right} as two little-endian uint64s, seeded with the node index.
//
// It is XXH3's path for 9 to 16 bytes written out for exactly 16
// (xxhash.h, XXH3_len_9to16_64b), with the default secret's words folded
// into two constants: through xxh3.HashSeed, which dispatches on the
// length and reads the secret from memory, an inner node cost 5 ns — as
// much as a fifth of a leaf. TestInnerXXH3 checks it against
// xxh3.HashSeed.
func innerXXH3(l, r, seed uint64) uint64 {
	const (
		flip1 = 0x6782737bea4239b9 // secret[24:32] ^ secret[32:40]
		flip2 = 0xaf56bc3b0996523a // secret[40:48] ^ secret[48:56]
	)
	lo := l ^ (flip1 + seed)
	hi := r ^ (flip2 - seed)
	mh, ml := bits.Mul64(lo, hi)
	acc := 16 + bits.ReverseBytes64(lo) + hi + (mh ^ ml)
	acc ^= acc >> 37
	acc *= 0x165667919E3779F9
	return acc ^ acc>>32
}

// wholeLeaves hashes the leading whole segments of data, as many as
// there are leaves (one word each), into leaves, seeded with first,
// first+1, …: with internal/xxh3k's leaves kernel, where it runs
// (AVX-512, the default XXH3 hash, segments over 240 bytes). It
// returns how many it hashed — none where the kernel does not apply, or
// for a lone short segment — and leaves the rest to the caller. data
// must end where the tree does: a last partial segment is not whole.
//
// A 64 KiB message's 32 leaves take 1.13 µs in it against 1.79 µs by
// xxh3.HashSeed leaf by leaf (internal/xxh3k's BenchmarkLeaves); one
// unseeded XXH3 of the whole is 0.88 µs.
func (h *Hash) wholeLeaves(leaves []uint64, data []byte, seg, first int) int {
	if h.kind != kindXXH3 || !xxh3k.Available || seg < xxh3k.LongMin {
		return 0
	}
	k := min(len(leaves), len(data)/seg)
	// In calls of at most leafBatch bytes: the runtime cannot preempt an
	// assembly function, and one call over a large buffer held up every
	// stop of the world for its whole length (50 ms for 512 MiB).
	per := max(1, leafBatch/seg)
	for j := 0; j < k; j += per {
		n := min(per, k-j)
		xxh3k.Leaves(leaves[j:j+n], data[j*seg:], seg, uint64(first+j))
	}
	return k
}

// Hash.Root computes the nodes of up to largeLeaves segments (1 MiB in
// the default 2 KiB segments, a protocol's largest frame) in an array on
// the stack, in three sizes, so that a message pays to clear only the
// array its size needs: clearing the 2 KiB of smallLeaves' nodes was 50
// ns of each side's 60 in the root of a 1-byte message, a twentieth of
// its protected round trip in process.
const (
	tinyLeaves  = 16
	smallLeaves = 128
	largeLeaves = 512
)

// Root returns the root of the tree Build makes of data in segments of
// seg bytes with this hash, without keeping the tree: with the default
// hash and up to 512 segments nothing is allocated. A protocol needs the
// root of every message that goes in one frame, and the tree only when
// two roots differ.
func (h *Hash) Root(data []byte, seg int) (csum.Value, error) {
	if seg <= 0 {
		return csum.Value{}, fmt.Errorf("%w %d: must be positive", ErrSegment, seg)
	}
	n := max(1, (len(data)+seg-1)/seg)
	switch {
	case h.kind != kindXXH3 || n > largeLeaves:
		t, err := Build(data, Segment(seg), UseHash(h.name), Workers(1))
		if err != nil {
			return csum.Value{}, err
		}
		return t.Root(), nil
	case n > smallLeaves:
		return h.rootLarge(data, seg, n), nil
	case n > tinyLeaves:
		return h.rootSmall(data, seg, n), nil
	}
	var nodes [2*tinyLeaves - 1]uint64 // the layout of Tree.nodes
	return h.rootIn(nodes[:2*n-1], data, seg), nil
}

// rootSmall is Root of more than tinyLeaves segments, up to smallLeaves.
//
//go:noinline
func (h *Hash) rootSmall(data []byte, seg, n int) csum.Value {
	var nodes [2*smallLeaves - 1]uint64
	return h.rootIn(nodes[:2*n-1], data, seg)
}

// rootLarge is Root of more than smallLeaves segments.
//
//go:noinline
func (h *Hash) rootLarge(data []byte, seg, n int) csum.Value {
	var nodes [2*largeLeaves - 1]uint64
	return h.rootIn(nodes[:2*n-1], data, seg)
}

// rootIn is Root of data's len(nodes)/2+1 segments, computed in nodes.
func (h *Hash) rootIn(nodes []uint64, data []byte, seg int) csum.Value {
	n := len(nodes)/2 + 1
	for j := h.wholeLeaves(nodes[n-1:], data, seg, n-1); j < n; j++ {
		off := j * seg
		nodes[j+n-1] = xxh3.HashSeed(data[off:min(off+seg, len(data))], uint64(j+n-1))
	}
	for i := n - 2; i >= 0; i-- { // children (2i+1, 2i+2) before parents
		nodes[i] = innerXXH3(nodes[2*i+1], nodes[2*i+2], uint64(i))
	}
	return csum.Value{Lo: nodes[0]}
}
