package tree

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/prefetch"
)

// DefaultSegment is the paper's and the reference's segment size.
const DefaultSegment = 2048

// Errors of Build and the methods that take a segment or node index.
var (
	ErrSegment = errors.New("tree: bad segment size")
	ErrIndex   = errors.New("tree: index out of range")
	ErrShape   = errors.New("tree: trees of different shapes")
)

// Tree is a Merkle tree over a byte buffer cut into segments, in the
// layout of the paper: the 2n-1 nodes of n segments in level order, the
// children of node i at 2i+1 and 2i+2, the leaf of segment j at node
// j + n-1. When n is not a power of two the tree is slightly unbalanced and
// its leaves sit on two levels (segment 0 is not the leftmost leaf).
//
// A Tree holds the node hashes and its parameters, 16 bytes a segment with
// 64-bit hashes and nothing else that grows with the data: never the data.
// Methods that need the data take it. A Tree is safe for concurrent reads;
// Update needs exclusive access.
type Tree struct {
	h     *Hash
	seg   int
	size  int64
	n     int      // segments, at least 1 (an empty buffer is one empty segment)
	nodes []uint64 // (2n-1) hashes of h.words words each
}

// Option configures Build.
type Option func(*config)

type config struct {
	seg     int
	hash    string
	workers int
	err     error
}

// Segment sets the segment size in bytes (the last segment may be
// shorter); it must be positive. The default is 2048.
func Segment(n int) Option {
	return func(c *config) {
		if n <= 0 {
			c.err = fmt.Errorf("%w %d: must be positive", ErrSegment, n)
		}
		c.seg = n
	}
}

// UseHash sets the node hash by name (see LookupHash); the default is
// "xxh3", the paper's.
func UseHash(name string) Option { return func(c *config) { c.hash = name } }

// Workers sets how many goroutines hash a large buffer; 1 builds serially.
// The default is GOMAXPROCS.
func Workers(n int) Option { return func(c *config) { c.workers = n } }

// parallelMin is the buffer size below which Build stays on one goroutine:
// measured on 2 cores with 2 KiB segments, a parallel build of 1 MiB ran
// at 75 % of the serial one (goroutines and batch hand-out cost more than
// the second core brings), of 2 MiB at par, of 4 MiB 1.23× faster, of
// 8 MiB 1.4×.
const parallelMin = 2 << 20

// Build returns the tree of data.
func Build(data []byte, opts ...Option) (*Tree, error) {
	c := config{seg: DefaultSegment, hash: DefaultHash, workers: runtime.GOMAXPROCS(0)}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	t, err := newTree(int64(len(data)), c.seg, c.hash)
	if err != nil {
		return nil, err
	}
	workers := max(1, c.workers)
	if len(data) < parallelMin {
		workers = 1
	}
	t.hashLeaves(data, workers)
	t.hashInner(workers)
	return t, nil
}

// New returns the tree of size bytes of data that is yet to come: its
// segments are hashed as they arrive (HashSegments), its inner nodes once
// all have (Finish). A receiver uses it to hash a message while the rest
// is still on the wire.
func New(size int64, opts ...Option) (*Tree, error) {
	c := config{seg: DefaultSegment, hash: DefaultHash}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	return newTree(size, c.seg, c.hash)
}

// Reset makes t, of any size, the tree of size bytes of data yet to come,
// as New would with t's segment size and hash: its nodes are reused when
// they are large enough. A receiver that checks one message after another
// keeps its trees rather than making one per message, whose nodes were
// most of what a message allocated. Its hashes are zero until computed.
func (t *Tree) Reset(size int64) error {
	n, err := segments(size, t.seg, t.h)
	if err != nil {
		return err
	}
	words := (2*n - 1) * t.h.words
	if cap(t.nodes) < words {
		t.nodes = make([]uint64, words)
	} else {
		t.nodes = t.nodes[:words]
		clear(t.nodes)
	}
	t.size, t.n = size, n
	return nil
}

// HashSegments hashes segments [lo, hi) of data (the whole buffer, or at
// least its bytes up to the end of segment hi-1) into their leaves.
func (t *Tree) HashSegments(data []byte, lo, hi int) error {
	if lo < 0 || hi > t.n || lo > hi {
		return fmt.Errorf("%w: segments [%d, %d) of %d", ErrIndex, lo, hi, t.n)
	}
	if hi > lo {
		if end, n := t.SegmentRange(hi - 1); int64(len(data)) < end+n {
			return fmt.Errorf("tree: %d bytes of data for segments up to byte %d", len(data), end+n)
		}
	}
	t.hashSegments(data, lo, hi)
	return nil
}

// Finish hashes the inner nodes from the leaves.
func (t *Tree) Finish() { t.hashInner(1) }

// newTree allocates the tree of size bytes, hashes not yet computed.
func newTree(size int64, seg int, hash string) (*Tree, error) {
	h, n, err := shape(size, seg, hash)
	if err != nil {
		return nil, err
	}
	return &Tree{h: h, seg: seg, size: size, n: n, nodes: make([]uint64, (2*n-1)*h.words)}, nil
}

// shape checks the parameters of a tree and returns its hash and number of
// segments, without allocating the nodes (manifests keep them on disk).
func shape(size int64, seg int, hash string) (*Hash, int, error) {
	if seg <= 0 {
		return nil, 0, fmt.Errorf("%w %d: must be positive", ErrSegment, seg)
	}
	h, err := LookupHash(hash)
	if err != nil {
		return nil, 0, err
	}
	n, err := segments(size, seg, h)
	return h, n, err
}

// segments returns the number of segments of a tree of size bytes.
func segments(size int64, seg int, h *Hash) (int, error) {
	if size < 0 {
		return 0, fmt.Errorf("tree: negative size %d", size)
	}
	n := max(1, (size+int64(seg)-1)/int64(seg))
	if n > (1<<62)/int64(h.words)/2 {
		return 0, fmt.Errorf("%w: %d segments of %d bytes are too many", ErrSegment, n, seg)
	}
	return int(n), nil
}

// Segments returns the number of segments (leaves); an empty buffer has one.
func (t *Tree) Segments() int { return t.n }

// Nodes returns the number of nodes, 2·Segments()-1.
func (t *Tree) Nodes() int { return 2*t.n - 1 }

// SegmentSize returns the size of a full segment.
func (t *Tree) SegmentSize() int { return t.seg }

// Size returns the size of the data.
func (t *Tree) Size() int64 { return t.size }

// Hash returns the node hash.
func (t *Tree) Hash() *Hash { return t.h }

// Depth returns the number of levels below the root: ⌈log2 n⌉, the number
// of rounds of a descent.
func (t *Tree) Depth() int { return bits.Len(uint(t.Nodes())) - 1 }

// Root returns the root hash.
func (t *Tree) Root() csum.Value { return t.Node(0) }

// Node returns the hash of node i (0 ≤ i < Nodes()); it panics out of range.
func (t *Tree) Node(i int) csum.Value {
	w := t.h.words
	v := csum.Value{Lo: t.nodes[i*w]}
	if w > 1 {
		v.Hi = t.nodes[i*w+1]
	}
	return v
}

// Leaf returns the node index of segment j.
func (t *Tree) Leaf(j int) int { return j + t.n - 1 }

// SegmentOf returns the segment of node i, or -1 for an inner node.
func (t *Tree) SegmentOf(i int) int {
	if i < t.n-1 || i >= t.Nodes() {
		return -1
	}
	return i - (t.n - 1)
}

// SegmentRange returns the byte offset and length of segment j.
func (t *Tree) SegmentRange(j int) (off, n int64) {
	off = int64(j) * int64(t.seg)
	return off, min(int64(t.seg), t.size-off)
}

func (t *Tree) node(i int) []uint64 { return t.nodes[i*t.h.words : (i+1)*t.h.words] }

// hashLeaf hashes segment j of data into its leaf.
func (t *Tree) hashLeaf(data []byte, j int) {
	off, n := t.SegmentRange(j)
	i := t.Leaf(j)
	if t.h.kind == kindXXH3 {
		t.nodes[i] = xxh3.HashSeed(data[off:off+n], uint64(i))
		return
	}
	t.h.leaf(data[off:off+n], uint64(i), t.node(i))
}

// hashNode recomputes inner node i from its children.
func (t *Tree) hashNode(i int) {
	if t.h.kind == kindXXH3 {
		t.nodes[i] = innerXXH3(t.nodes[2*i+1], t.nodes[2*i+2], uint64(i))
		return
	}
	t.h.inner(t.node(2*i+1), t.node(2*i+2), uint64(i), t.node(i))
}

// leafBatch is the work unit of a parallel build: enough bytes that the
// atomic counter that hands batches out costs nothing in comparison.
const leafBatch = 256 << 10

// hashLeaves hashes every segment, on workers goroutines taking batches
// of consecutive segments from a shared counter (so that a slow core does
// not hold the others back), all finished on return.
func (t *Tree) hashLeaves(data []byte, workers int) {
	per := max(1, leafBatch/t.seg)
	if workers == 1 {
		t.hashSegments(data, 0, t.n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(int64(per))) - per
				if lo >= t.n {
					return
				}
				t.hashSegments(data, lo, min(lo+per, t.n))
			}
		})
	}
	wg.Wait()
}

// Before hashing a segment, the bytes after it are prefetched: the whole
// next segment, but at least prefetchAhead bytes (for small segments, at
// least prefetchMin at a time) and at most prefetchMax. An XXH3 call's own
// prefetching never reaches past its input, so without this every segment
// would start with cache misses, and a tree over data in main memory would
// hash at half the speed of one XXH3 call over it (BenchmarkBuild at
// 64 MiB: 9 GB/s against 17, now 16 against 17). Further ahead is slower
// again: it floods the line-fill buffers. (The leaves kernel, which hashes
// the whole segments where it runs, prefetches 2 KiB ahead itself: 25 GB/s
// there against XXH3's 28.)
const (
	prefetchAhead = 2048
	prefetchMax   = 8192
	prefetchMin   = 1024
)

// hashSegments hashes segments [lo, hi) into their leaves: the whole ones
// with the leaves kernel where it runs (Hash.wholeLeaves), the others one
// by one, prefetching the data a little ahead.
func (t *Tree) hashSegments(data []byte, lo, hi int) {
	if i := t.Leaf(lo); hi > lo {
		// Up to the tree's end: data may go on past it (HashSegments).
		end := min(int64(len(data)), t.size)
		lo += t.h.wholeLeaves(t.nodes[i:i+hi-lo], data[int64(lo)*int64(t.seg):end], t.seg, i)
	}
	ahead := int64(min(max(t.seg, prefetchAhead), prefetchMax))
	var pf int64 // prefetched up to here
	for j := lo; j < hi; j++ {
		off, n := t.SegmentRange(j)
		from := max(pf, off+n)
		if to := min(off+n+ahead, int64(len(data))); to-from >= prefetchMin || to == int64(len(data)) && to > from {
			prefetch.Bytes(data[from:to])
			pf = to
		}
		t.hashLeaf(data, j)
	}
}

// innerBatch is the number of inner nodes below which a level is hashed on
// one goroutine.
const innerBatch = 4096

// hashInner hashes the inner nodes, deepest level first: an inner node's
// children are leaves or inner nodes of the level below, done before it.
// Large levels are split among the workers.
func (t *Tree) hashInner(workers int) {
	if t.n == 1 {
		return
	}
	last := t.n - 2 // the last inner node
	for lvl := bits.Len(uint(last+1)) - 1; lvl >= 0; lvl-- {
		lo, hi := 1<<lvl-1, min(1<<(lvl+1)-2, last) // the inner nodes of this level
		if workers == 1 || hi-lo+1 < 2*innerBatch {
			for i := hi; i >= lo; i-- {
				t.hashNode(i)
			}
			continue
		}
		var next atomic.Int64
		next.Store(int64(lo))
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					a := int(next.Add(innerBatch)) - innerBatch
					if a > hi {
						return
					}
					for i := a; i <= min(a+innerBatch-1, hi); i++ {
						t.hashNode(i)
					}
				}
			})
		}
		wg.Wait()
	}
}

// Update rehashes segment j from data (which must be as long as the tree's
// data) and the path from its leaf to the root: O(log n).
func (t *Tree) Update(data []byte, j int) error {
	if int64(len(data)) != t.size {
		return fmt.Errorf("tree: Update with %d bytes of data for a tree of %d", len(data), t.size)
	}
	if j < 0 || j >= t.n {
		return fmt.Errorf("%w: segment %d of %d", ErrIndex, j, t.n)
	}
	t.hashLeaf(data, j)
	for i := t.Leaf(j); i > 0; {
		i = (i - 1) / 2
		t.hashNode(i)
	}
	return nil
}

// sameShape reports whether t and u cover the same data layout with the
// same hash, so that their nodes correspond one to one.
func (t *Tree) sameShape(u *Tree) error {
	if t.n != u.n || t.seg != u.seg || t.size != u.size || t.h.name != u.h.name {
		return fmt.Errorf("%w: %d segments of %d bytes (%d in all, %s) against %d of %d (%d, %s)",
			ErrShape, t.n, t.seg, t.size, t.h.name, u.n, u.seg, u.size, u.h.name)
	}
	return nil
}

// Clone returns a copy of t.
func (t *Tree) Clone() *Tree {
	u := *t
	u.nodes = append([]uint64(nil), t.nodes...)
	return &u
}
