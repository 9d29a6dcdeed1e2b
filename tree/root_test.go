package tree

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/zeebo/xxh3"
)

// Hash.Root is Build's root, whatever the size, segment and hash — on
// its stack paths (XXH3, up to 128 and up to 512 segments) and off them.
func TestHashRootIsBuildRoot(t *testing.T) {
	props := gopter.NewProperties(params(300))
	props.Property("Root(data) == Build(data).Root()", prop.ForAll(func(size, seg int, name string, seed uint64) bool {
		data := make([]byte, size)
		rng := rand.New(rand.NewPCG(seed, 1))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		h, err := LookupHash(name)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Build(data, Segment(seg), UseHash(name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Root(data, seg)
		return err == nil && got == tr.Root()
	}, gen.IntRange(0, 300_000), gen.OneConstOf(1, 7, 64, 2048, 5000), gen.OneConstOf("xxh3", "xxh3-128", "crc32c"), gen.UInt64()))
	props.TestingRun(t)
}

func TestHashRootEdges(t *testing.T) {
	h, _ := LookupHash("")
	if _, err := h.Root([]byte("x"), 0); !errors.Is(err, ErrSegment) {
		t.Errorf("segment 0: %v, want ErrSegment", err)
	}
	data := make([]byte, (largeLeaves+1)*DefaultSegment)
	for i := range data {
		data[i] = byte(i * 31)
	}
	tiny, small, large := tinyLeaves*DefaultSegment, smallLeaves*DefaultSegment, largeLeaves*DefaultSegment
	for _, n := range []int{0, 1, DefaultSegment, tiny - 1, tiny, tiny + 1, small - 1, small, small + 1, large - 1, large, large + 1} {
		tr, _ := Build(data[:n])
		if got, _ := h.Root(data[:n], DefaultSegment); got != tr.Root() {
			t.Errorf("%d bytes: %x, Build says %x", n, got, tr.Root())
		}
	}
	for _, n := range []int{1, tiny, small, large} {
		if a := testing.AllocsPerRun(20, func() { h.Root(data[:n], DefaultSegment) }); a != 0 {
			t.Errorf("the root of %d bytes allocates %v times, want 0", n, a)
		}
	}
}

// innerXXH3, XXH3's 16-byte path written out, equals xxh3.HashSeed of the
// two words, for any words and seed.
func TestInnerXXH3(t *testing.T) {
	props := gopter.NewProperties(nil)
	props.Property("innerXXH3 = xxh3.HashSeed of {l, r}", prop.ForAll(func(l, r, seed uint64) bool {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], l)
		binary.LittleEndian.PutUint64(b[8:], r)
		return innerXXH3(l, r, seed) == xxh3.HashSeed(b[:], seed)
	}, gen.UInt64(), gen.UInt64(), gen.UInt64()))
	props.TestingRun(t)
}

// HashSegments over a buffer that goes on past the tree (its doc allows
// it) hashes the last, partial segment as partial, whatever the segment
// size and whether the leaves kernel runs: the leaves equal Build's of
// the tree's bytes alone. (The kernel's first use counted whole
// segments in the buffer, not in the tree.)
func TestHashSegmentsLongerBuffer(t *testing.T) {
	data := randomData(300<<10, 3)
	for _, c := range []struct{ size, seg int }{{3000, 2048}, {5000, 1024}, {2048*130 + 7, 2048}, {700, 300}, {100, 64}} {
		tr, err := New(int64(c.size), Segment(c.seg))
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.HashSegments(data, 0, tr.Segments()); err != nil {
			t.Fatal(err)
		}
		tr.Finish()
		want, err := Build(data[:c.size], Segment(c.seg))
		if err != nil {
			t.Fatal(err)
		}
		if tr.Root() != want.Root() {
			t.Errorf("size %d, segments of %d, hashed from a %d-byte buffer: root %v, Build says %v", c.size, c.seg, len(data), tr.Root(), want.Root())
		}
	}
}

// A tree Reset from any earlier size, larger or smaller, and hashed again
// is the tree New would have made: nothing of the earlier shape or hashes
// shows through. Growing its nodes allocates; shrinking does not.
func TestReset(t *testing.T) {
	props := gopter.NewProperties(params(100))
	props.Property("Reset(size) then hashing == Build", prop.ForAll(func(first, size, seg int, name string, seed uint64) bool {
		data := randomData(max(first, size), seed)
		tr := mustBuild(t, data[:first], Segment(seg), UseHash(name))
		if err := tr.Reset(int64(size)); err != nil {
			t.Fatal(err)
		}
		want := mustBuild(t, data[:size], Segment(seg), UseHash(name))
		if tr.Size() != int64(size) || tr.Segments() != want.Segments() || tr.Nodes() != want.Nodes() {
			t.Logf("reset to %d bytes: size %d, %d segments, %d nodes; want %d and %d", size, tr.Size(), tr.Segments(), tr.Nodes(), want.Segments(), want.Nodes())
			return false
		}
		if err := tr.HashSegments(data[:size], 0, tr.Segments()); err != nil {
			t.Fatal(err)
		}
		tr.Finish()
		if d, err := Diff(tr, want); err != nil || len(d) != 0 {
			t.Logf("from %d to %d bytes in %d-byte %s segments: segments %v differ (%v)", first, size, seg, name, d, err)
			return false
		}
		return tr.Root() == want.Root()
	}, gen.IntRange(0, 40_000), gen.IntRange(0, 40_000), gen.OneConstOf(1, 64, 2048, 5000), gen.OneConstOf("xxh3", "xxh3-128", "crc32c"), gen.UInt64()))
	props.TestingRun(t)

	tr := mustBuild(t, make([]byte, 1<<20))
	if a := testing.AllocsPerRun(20, func() { tr.Reset(512 << 10) }); a != 0 {
		t.Errorf("a shrinking Reset allocates %v times, want 0", a)
	}
	if err := tr.Reset(-1); err == nil {
		t.Error("Reset(-1): no error")
	}
	if tr := mustBuild(t, nil, Segment(1)); !errors.Is(tr.Reset(1<<62), ErrSegment) {
		t.Errorf("Reset(1<<62) in 1-byte segments: %v, want ErrSegment", tr.Reset(1<<62))
	}
}
