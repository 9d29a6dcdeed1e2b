package tree

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
)

func params(n int) *gopter.TestParameters {
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = n
	if testing.Short() {
		p.MinSuccessfulTests = max(n/10, 20)
	}
	return p
}

// goldenData is golden.c's test data: byte k is the top byte of the
// 32-bit product k·2654435761.
func goldenData(n int) []byte {
	p := make([]byte, n)
	for k := range p {
		p[k] = byte(uint32(k) * 2654435761 >> 24)
	}
	return p
}

func randomData(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

func mustBuild(t testing.TB, data []byte, opts ...Option) *Tree {
	t.Helper()
	tr, err := Build(data, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The roots in testdata/golden_roots.txt come from golden.c, an
// independent C implementation of the reference's layout and hashing on
// the xxHash C library. Serial and parallel builds both match them.
func TestGoldenRoots(t *testing.T) {
	f, err := os.Open("testdata/golden_roots.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := goldenData(4194304)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var size, seg int
		var root uint64
		if _, err := fmt.Sscanf(line, "%d %d %x", &size, &seg, &root); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		for _, w := range []int{1, 2, 7} {
			tr := mustBuild(t, data[:size], Segment(seg), Workers(w))
			if got := tr.Root().Lo; got != root {
				t.Errorf("size %d segment %d workers %d: root %016x, want %016x", size, seg, w, got, root)
			}
		}
		n++
	}
	if n != 44 {
		t.Fatalf("%d golden roots", n)
	}
}

func TestShape(t *testing.T) {
	for _, c := range []struct {
		size          int
		seg, n, depth int
	}{{0, 2048, 1, 0}, {1, 2048, 1, 0}, {2048, 2048, 1, 0}, {2049, 2048, 2, 1}, {6144, 2048, 3, 2},
		{8192, 2048, 4, 2}, {10000, 1000, 10, 4}, {64 << 20, 2048, 32768, 15}} {
		tr := mustBuild(t, make([]byte, c.size), Segment(c.seg))
		if tr.Segments() != c.n || tr.Nodes() != 2*c.n-1 || tr.Depth() != c.depth {
			t.Errorf("size %d seg %d: %d segments, %d nodes, depth %d", c.size, c.seg, tr.Segments(), tr.Nodes(), tr.Depth())
		}
		for j := range tr.Segments() {
			if tr.SegmentOf(tr.Leaf(j)) != j {
				t.Fatalf("leaf/segment mapping at %d", j)
			}
		}
	}
	tr := mustBuild(t, make([]byte, 10000), Segment(1000))
	if off, n := tr.SegmentRange(9); off != 9000 || n != 1000 {
		t.Errorf("last segment %d+%d", off, n)
	}
	tr = mustBuild(t, make([]byte, 10001), Segment(1000))
	if off, n := tr.SegmentRange(10); off != 10000 || n != 1 {
		t.Errorf("short last segment %d+%d", off, n)
	}
	if tr.SegmentOf(0) != -1 || tr.SegmentOf(tr.Nodes()) != -1 {
		t.Error("SegmentOf out of the leaves")
	}
}

func TestBuildErrors(t *testing.T) {
	for _, seg := range []int{0, -5} {
		_, err := Build([]byte("abc"), Segment(seg))
		if !errors.Is(err, ErrSegment) || !strings.Contains(err.Error(), strconv.Itoa(seg)) {
			t.Errorf("Segment(%d): %v", seg, err)
		}
	}
	if _, err := Build([]byte("abc"), UseHash("md5")); err == nil {
		t.Error("unknown hash accepted")
	}
	// The empty buffer has a tree: one empty segment.
	tr := mustBuild(t, nil)
	if tr.Segments() != 1 || tr.Root() != mustBuild(t, []byte{}).Root() {
		t.Error("empty buffer")
	}
}

func TestUpdate(t *testing.T) {
	data := randomData(100_000, 1)
	tr := mustBuild(t, data, Segment(999))
	for _, j := range []int{0, 17, tr.Segments() - 1} {
		data[j*999] ^= 0x40
		if err := tr.Update(data, j); err != nil {
			t.Fatal(err)
		}
		if tr.Root() != mustBuild(t, data, Segment(999)).Root() {
			t.Fatalf("root after updating segment %d", j)
		}
	}
	if err := tr.Update(data, tr.Segments()); !errors.Is(err, ErrIndex) {
		t.Errorf("segment out of range: %v", err)
	}
	if err := tr.Update(data[:5], 0); err == nil {
		t.Error("short data accepted")
	}
}

// Every hash gives a tree; parallel and serial builds agree for each.
func TestHashesAndParallelism(t *testing.T) {
	data := randomData(3<<20+77, 2)
	for _, h := range []string{"xxh3", "xxh3-128", "crc32c", "fnv1a64", "murmur64a"} {
		serial := mustBuild(t, data, UseHash(h), Segment(4096), Workers(1))
		for _, w := range []int{2, 3, 8} {
			par := mustBuild(t, data, UseHash(h), Segment(4096), Workers(w))
			for i := range serial.Nodes() {
				if par.Node(i) != serial.Node(i) {
					t.Fatalf("%s, %d workers: node %d differs", h, w, i)
				}
			}
		}
		if h == "xxh3-128" && serial.Root().Hi == 0 {
			t.Error("128-bit root has no high half")
		}
	}
	small := mustBuild(t, data, Segment(64), Workers(4)) // many inner levels split among workers
	if small.Root() != mustBuild(t, data, Segment(64), Workers(1)).Root() {
		t.Error("64-byte segments: parallel and serial differ")
	}
}

// Memory: the node array (16 bytes a segment with 64-bit hashes, 32 with
// 128-bit) and nothing else that grows with the data; the reference
// implementation takes about 90 bytes a segment.
func TestMemoryPerSegment(t *testing.T) {
	data := randomData(16<<20, 3)
	for _, c := range []struct {
		hash  string
		bytes float64
	}{{"xxh3", 16}, {"xxh3-128", 32}} {
		const seg = 64
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr := mustBuild(t, data, Segment(seg), UseHash(c.hash))
		runtime.ReadMemStats(&after)
		per := float64(after.TotalAlloc-before.TotalAlloc) / float64(tr.Segments())
		if per > c.bytes*1.01 {
			t.Errorf("%s: %.1f bytes allocated per segment, want %.0f", c.hash, per, c.bytes)
		}
		runtime.KeepAlive(tr)
	}
}

// A tree hashed as its data arrives equals the tree built at once.
func TestIncremental(t *testing.T) {
	for _, c := range []struct{ size, seg int }{{0, 64}, {1, 64}, {100_000, 1000}, {300_000, 2048}} {
		data := randomData(c.size, 5)
		want := mustBuild(t, data, Segment(c.seg))
		tr, err := New(int64(c.size), Segment(c.seg))
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < tr.Segments(); lo += 7 {
			hi := min(lo+7, tr.Segments())
			end, n := tr.SegmentRange(hi - 1)
			if err := tr.HashSegments(data[:end+n], lo, hi); err != nil {
				t.Fatal(err)
			}
		}
		tr.Finish()
		if tr.Root() != want.Root() {
			t.Errorf("size %d: incremental root %x, built %x", c.size, tr.Root(), want.Root())
		}
		if err := tr.HashSegments(data, 0, tr.Segments()+1); !errors.Is(err, ErrIndex) {
			t.Errorf("past the end: %v", err)
		}
	}
}
