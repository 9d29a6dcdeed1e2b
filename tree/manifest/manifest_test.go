package manifest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/tree"
)

// memFile is an in-memory file: a Target.
type memFile struct{ b []byte }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if end := off + int64(len(p)); end > int64(len(f.b)) {
		f.b = append(f.b, make([]byte, end-int64(len(f.b)))...)
	}
	return copy(f.b[off:], p), nil
}

func (f *memFile) Truncate(n int64) error {
	if n <= int64(len(f.b)) {
		f.b = f.b[:n]
		return nil
	}
	f.b = append(f.b, make([]byte, n-int64(len(f.b)))...)
	return nil
}

func randomData(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 28))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// corrupt returns a copy of data with one byte changed in each segment
// listed.
func corrupt(data []byte, seg int, segments []int, seed uint64) []byte {
	b := slices.Clone(data)
	r := rand.New(rand.NewPCG(seed, 3))
	for _, j := range segments {
		n := min(seg, len(b)-j*seg)
		b[j*seg+r.IntN(n)] ^= byte(1 + r.IntN(255))
	}
	return b
}

// makeSet writes the manifest of files in memory and opens it back.
func makeSet(t testing.TB, names []string, datas [][]byte, opts ...Option) (*Manifest, *memFile) {
	t.Helper()
	var src []Source
	for k, d := range datas {
		src = append(src, Source{Name: names[k], Data: bytes.NewReader(d), Size: int64(len(d)), Mode: 0o640})
	}
	out := &memFile{}
	m, err := Create(out, src, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(out.b)) != m.Bytes() {
		t.Fatalf("wrote %d bytes, the layout says %d", len(out.b), m.Bytes())
	}
	back, err := Open(out, int64(len(out.b)))
	if err != nil {
		t.Fatal(err)
	}
	if back.Damage.Any() || len(back.Files) != len(m.Files) || back.Stripes != m.Stripes || back.Version != 3 {
		t.Fatalf("reopened manifest %+v, written %+v", back, m)
	}
	for i := range m.Files {
		if back.Files[i] != m.Files[i] || back.Files[i].Mode != 0o640 {
			t.Fatalf("file %d reopened as %+v, written %+v", i, back.Files[i], m.Files[i])
		}
	}
	return back, out
}

func makeOne(t testing.TB, data []byte, opts ...Option) (*Manifest, *memFile) {
	return makeSet(t, []string{"data.bin"}, [][]byte{data}, opts...)
}

// checkAll checks every file of a set as given (nil: missing).
func checkAll(t testing.TB, m *Manifest, files []*memFile) []*Report {
	t.Helper()
	var reps []*Report
	for i, f := range files {
		if f == nil {
			reps = append(reps, m.Absent(i))
			continue
		}
		rep, err := m.Check(context.Background(), i, f, int64(len(f.b)), nil)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	return reps
}

// repairAll repairs a set in memory (missing files made empty) within
// memory bytes of buffers, and returns the error.
func repairAll(t testing.TB, m *Manifest, files []*memFile, memory int64) error {
	reps := checkAll(t, m, files)
	targets := make([]Target, len(files))
	for i := range files {
		if files[i] == nil {
			files[i] = &memFile{}
		}
		targets[i] = files[i]
	}
	_, err := m.Repair(context.Background(), targets, reps, memory)
	return err
}

func runs(js ...int) []Run {
	var r []Run
	for _, j := range js {
		r = appendSegment(r, j)
	}
	return r
}

func TestManifestMatchesTree(t *testing.T) {
	for _, c := range []struct{ size, seg int }{
		{0, 2048}, {1, 2048}, {5000, 1000}, {100_000, 333}, {3 << 20, 4096}, {300_000, 64}, {300_000, 3}, // 100000 segments: several blocks of inner nodes
	} {
		data := randomData(c.size, uint64(c.size))
		m, _ := makeOne(t, data, Segment(c.seg))
		tr, err := tree.Build(data, tree.Segment(c.seg))
		if err != nil {
			t.Fatal(err)
		}
		if m.Files[0].Root != tr.Root() || m.Files[0].Segments != tr.Segments() {
			t.Errorf("size %d seg %d: manifest root %x, tree root %x", c.size, c.seg, m.Files[0].Root, tr.Root())
		}
		rep, err := m.Check(context.Background(), 0, bytes.NewReader(data), int64(len(data)), nil)
		// (An empty segment is no evidence: it matches nothing.)
		if err != nil || !rep.OK() || len(rep.Unchecked) > 0 || rep.Matched != int64(min(c.size, 1))*int64(tr.Segments()) {
			t.Errorf("size %d: clean file reports %+v, %v", c.size, rep, err)
		}
	}
}

// Several files: each its own tree (the root `sigcheck tree` prints).
func TestManifestSetRoots(t *testing.T) {
	names := []string{"a", "dir/b", "dir/sub/c", "empty"}
	datas := [][]byte{randomData(10_000, 1), randomData(777, 2), randomData(64*50, 3), nil}
	m, _ := makeSet(t, names, datas, Segment(64), PerStripe(3))
	for i, d := range datas {
		tr, _ := tree.Build(d, tree.Segment(64))
		if m.Files[i].Root != tr.Root() || m.Files[i].Name != names[i] {
			t.Errorf("file %d: %+v, root %x", i, m.Files[i], tr.Root())
		}
	}
	if m.Segments() != 157+13+50+1 || m.Size() != 10_000+777+3200 {
		t.Errorf("%d segments, %d bytes", m.Segments(), m.Size())
	}
}

// The parity's shape: par2's -r and -c, one stripe while the code holds
// the set, interleaved stripes past it.
func TestShape(t *testing.T) {
	for _, c := range []struct {
		n             int64
		opt           Option
		stripes, each int
	}{
		{1, Redundancy(5), 1, 1},
		{2000, Redundancy(5), 1, 100},
		{2000, Redundancy(10), 1, 200},
		{2000, Recovery(13), 1, 13},
		{524288, Redundancy(5), 9, 2913}, // 1 GiB in 2 KiB segments
		{524288, PerStripe(4), 9, 4},
		{65536, Redundancy(100), 2, 32768},
		{100, Redundancy(0), 0, 0},
	} {
		var cfg config
		c.opt(&cfg)
		s, p, err := shape(c.n, &cfg, codeLeopard16{})
		if err != nil || s != c.stripes || p != c.each {
			t.Errorf("%d segments: %d stripes of %d parity (%v), want %d of %d", c.n, s, p, err, c.stripes, c.each)
		}
		if s > 0 {
			if err := (codeLeopard16{}).fits(int((c.n+int64(s)-1)/int64(s)), p); err != nil {
				t.Errorf("%d segments: %v", c.n, err)
			}
		}
	}
}

func TestManifestChecksAndRepairsDamage(t *testing.T) {
	data := randomData(600_000, 21)
	m, _ := makeOne(t, data, Segment(1000), PerStripe(4))
	if m.Stripes != 1 || m.Width != 600 || m.Code() != "Leopard GF(2^16)" {
		t.Fatalf("%d stripes of %d, %s", m.Stripes, m.Width, m.Code())
	}
	f := &memFile{corrupt(data, 1000, []int{0, 7, 300, 599}, 22)}
	var progress []int64
	rep, err := m.Check(context.Background(), 0, f, int64(len(f.b)), func(d int64) { progress = append(progress, d) })
	if err != nil || !slices.Equal(rep.Corrupted, runs(0, 7, 300, 599)) || rep.OK() || rep.Matched != 596 || rep.Foreign() {
		t.Fatalf("Check: %+v %v", rep, err)
	}
	if len(progress) == 0 || progress[len(progress)-1] != int64(len(data)) {
		t.Errorf("progress %v", progress)
	}
	if err := repairAll(t, m, []*memFile{f}, 0); err != nil || !bytes.Equal(f.b, data) {
		t.Fatalf("repair: %v", err)
	}
	// Any 4 anywhere, a run or not; 5 are too many, and nothing is written.
	f.b = corrupt(data, 1000, []int{100, 101, 102, 103}, 23)
	if err := repairAll(t, m, []*memFile{f}, 0); err != nil || !bytes.Equal(f.b, data) {
		t.Fatalf("a run of 4: %v", err)
	}
	f.b = corrupt(data, 1000, []int{3, 6, 9, 12, 400}, 24)
	before := slices.Clone(f.b)
	if err := repairAll(t, m, []*memFile{f}, 0); !errors.Is(err, ErrTooManyFaults) || !bytes.Equal(f.b, before) {
		t.Errorf("five: %v", err)
	}
	noParity, _ := makeOne(t, data, Segment(1000), Redundancy(0))
	if err := repairAll(t, noParity, []*memFile{f}, 0); !errors.Is(err, ErrTooManyFaults) || !strings.Contains(err.Error(), "no parity") {
		t.Errorf("repair without parity: %v", err)
	}
	// Another file of the same size: every segment differs.
	rep, _ = m.Check(context.Background(), 0, bytes.NewReader(randomData(len(data), 99)), int64(len(data)), nil)
	if Count(rep.Corrupted) != 600 || !rep.Foreign() {
		t.Errorf("another file: %d of 600 differ", Count(rep.Corrupted))
	}
}

// Past one code's reach, stripes interleave: a run of lost segments
// spreads over all of them.
func TestManifestStripesInterleave(t *testing.T) {
	data := randomData(70_000*64, 5)
	m, _ := makeOne(t, data, Segment(64), PerStripe(3))
	if m.Stripes != 2 {
		t.Fatalf("%d stripes", m.Stripes)
	}
	f := &memFile{corrupt(data, 64, []int{1000, 1001, 1002, 1003, 1004, 1005}, 1)}
	if err := repairAll(t, m, []*memFile{f}, 0); err != nil || !bytes.Equal(f.b, data) {
		t.Fatalf("a run of 6 over 2 stripes: %v", err)
	}
	f.b = corrupt(data, 64, []int{2, 4, 6, 8}, 2) // 4 in stripe 0
	if err := repairAll(t, m, []*memFile{f}, 0); !errors.Is(err, ErrTooManyFaults) || !strings.Contains(err.Error(), "stripe 0 lost 4") {
		t.Errorf("4 in a stripe: %v", err)
	}
}

// Truncated and extended files: the common part is checked, the report
// says what is missing or appended, and repair restores the length.
func TestManifestTruncatedAndExtended(t *testing.T) {
	data := randomData(100_000, 31)
	m, _ := makeOne(t, data, Segment(512), PerStripe(20)) // 196 segments: 20 rebuilt
	for _, c := range []struct {
		size       int
		present    int
		from, miss int64
	}{
		{99_999, 195, 99_999, 1}, {99_840, 195, 99_840, 160}, {95_000, 185, 95_000, 5000}, {90_000, 175, 90_000, 10_000}, {0, 0, 0, 100_000},
	} {
		f := &memFile{slices.Clone(data[:c.size])}
		rep, err := m.Check(context.Background(), 0, f, int64(c.size), nil)
		if err != nil || rep.OK() || rep.Present != c.present || len(rep.Corrupted) != 0 {
			t.Fatalf("truncated to %d: %+v %v", c.size, rep, err)
		}
		if from, n := rep.Missing(); from != c.from || n != c.miss {
			t.Errorf("truncated to %d: missing %d from %d", c.size, n, from)
		}
		err = repairAll(t, m, []*memFile{f}, 0)
		if lost := 196 - c.present; lost <= 20 {
			if err != nil || !bytes.Equal(f.b, data) {
				t.Errorf("truncated to %d: repair %v", c.size, err)
			}
		} else if !errors.Is(err, ErrTooManyFaults) || len(f.b) != c.size {
			t.Errorf("truncated to %d (%d segments lost): %v, %d bytes", c.size, lost, err, len(f.b))
		}
	}
	// Extended, with a corrupted segment too.
	f := &memFile{append(corrupt(data, 512, []int{4}, 3), "tail"...)}
	rep, _ := m.Check(context.Background(), 0, f, int64(len(f.b)), nil)
	if rep.Appended() != 4 || !slices.Equal(rep.Corrupted, runs(4)) || rep.OK() {
		t.Errorf("extended: %+v", rep)
	}
	if err := repairAll(t, m, []*memFile{f}, 0); err != nil || !bytes.Equal(f.b, data) {
		t.Errorf("extended: repair %v", err)
	}
}

// A set: parity shared across files restores a missing file, a truncated
// one and a damaged one at once, within any memory: columns of whole
// segments, of chunks, and lost segments rebuilt twice (checked, then
// written) when they do not fit.
func TestManifestSetRepair(t *testing.T) {
	names := []string{"a", "b/c", "d", "e"}
	datas := [][]byte{randomData(50_000, 1), randomData(20_000, 2), randomData(123_456, 3), nil}
	m, _ := makeSet(t, names, datas, Segment(4096), Redundancy(60))
	for _, memory := range []int64{0, 64 << 10, 8 << 10} {
		files := []*memFile{{slices.Clone(datas[0][:40_000])}, nil, {corrupt(datas[2], 4096, []int{9, 20}, 4)}, nil}
		reps := checkAll(t, m, files)
		if reps[1].Size != -1 || reps[1].Present != 0 || reps[0].Present != 9 || !slices.Equal(reps[2].Corrupted, runs(9, 20)) {
			t.Fatalf("reports %+v %+v %+v", reps[0], reps[1], reps[2])
		}
		if err := repairAll(t, m, files, memory); err != nil {
			t.Fatalf("memory %d: %v", memory, err)
		}
		for i, d := range datas {
			if !bytes.Equal(files[i].b, d) {
				t.Errorf("memory %d: file %d not restored", memory, i)
			}
		}
	}
	if !m.Matches(1, bytes.NewReader(datas[1]), int64(len(datas[1]))) || m.Matches(1, bytes.NewReader(datas[0]), int64(len(datas[0]))) {
		t.Error("Matches")
	}
}

// Parity made in columns (a small budget) is the parity made whole.
func TestManifestParityColumns(t *testing.T) {
	data := randomData(500_000, 8)
	_, whole := makeOne(t, data, Segment(8192), PerStripe(4))
	for _, memory := range []int64{70 << 10, 66 * 128} { // columns of chunks; of 128 bytes, narrower than a chunk
		_, cols := makeOne(t, data, Segment(8192), PerStripe(4), Memory(memory))
		if !bytes.Equal(whole.b, cols.b) {
			t.Errorf("memory %d: the manifests differ", memory)
		}
	}
}

// Every byte of a small manifest flipped in turn: it still opens, checks
// a clean file as clean and repairs damage up to the parity less one (a
// damaged chunk of parity costs one row over its bytes).
func TestManifestSurvivesAnyFlippedByte(t *testing.T) {
	data := randomData(3000, 41)
	_, good := makeSet(t, []string{"x", "y/z"}, [][]byte{data, data[:700]}, Segment(64), PerStripe(2))
	damaged := corrupt(data, 64, []int{17}, 5)
	for at := range good.b {
		b := slices.Clone(good.b)
		b[at] ^= 0x40
		m, err := Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("byte %d of %d flipped: %v", at, len(b), err)
		}
		reps := checkAll(t, m, []*memFile{{data}, {data[:700]}})
		if !reps[0].OK() || !reps[1].OK() || len(reps[0].Unchecked)+len(reps[1].Unchecked) > 0 {
			t.Fatalf("byte %d flipped: a clean set reports %+v %+v", at, reps[0], reps[1])
		}
		files := []*memFile{{slices.Clone(damaged)}, {data[:700]}}
		if err := repairAll(t, m, files, 0); err != nil || !bytes.Equal(files[0].b, data) {
			t.Fatalf("byte %d flipped: repair %v", at, err)
		}
	}
	// At the parity's limit with a damaged parity byte: refused, nothing
	// written.
	m, _ := Open(bytes.NewReader(good.b), int64(len(good.b)))
	b := slices.Clone(good.b)
	b[m.parityAt+5] ^= 1
	m, _ = Open(bytes.NewReader(b), int64(len(b)))
	if n, chunk := m.DamagedParity(); n != 1 || chunk != 1024 || m.Damage.Any() {
		t.Errorf("damaged parity: %d chunks of %d, %+v", n, chunk, m.Damage)
	}
	two := corrupt(data, 64, []int{3, 30}, 6)
	files := []*memFile{{slices.Clone(two)}, {data[:700]}}
	if err := repairAll(t, m, files, 0); !errors.Is(err, ErrTooManyFaults) || !bytes.Equal(files[0].b, two) {
		t.Errorf("two lost, one row damaged: %v", err)
	}

	// A run of damage over the first copy of the main block and the nodes.
	b = slices.Clone(good.b)
	for k := range m.copies[1] {
		b[k] = 0
	}
	if m, err := Open(bytes.NewReader(b), int64(len(b))); err != nil || m.Damage.MainCopies != 2 || m.Damage.NodeBlocks == 0 || m.Damage.LostLeaves != 0 {
		t.Errorf("first third zeroed: %v %+v", err, m)
	}
	// A truncated manifest keeps what comes before the cut.
	if m, err := Open(bytes.NewReader(good.b[:len(good.b)-100]), int64(len(good.b)-100)); err != nil || m.Damage.MainCopies != 2 {
		t.Errorf("truncated manifest: %v", err)
	}
}

// resign recomputes a main block's checksums after an edit, as an
// attacker would.
func resign(h []byte) []byte {
	binary.LittleEndian.PutUint64(h[8:], uint64(len(h)))
	binary.LittleEndian.PutUint64(h[16:], xxh3.Hash(h[:16]))
	binary.LittleEndian.PutUint64(h[len(h)-8:], xxh3.Hash(h[:len(h)-8]))
	return h
}

func TestManifestRefused(t *testing.T) {
	_, good := makeOne(t, randomData(5000, 3), Segment(100), PerStripe(2))
	try := func(b []byte) error {
		_, err := Open(bytes.NewReader(b), int64(len(b)))
		return err
	}
	m, _ := Open(bytes.NewReader(good.b), int64(len(good.b)))
	all := slices.Clone(good.b)
	for _, at := range m.copies {
		all[at+40] ^= 1
	}
	old := append([]byte("SIGCHKMF\x01"), make([]byte, 200)...)
	for name, c := range map[string]struct {
		b    []byte
		want string
	}{
		"every copy damaged": {all, "checksum mismatch"},
		"empty":              {nil, "shorter than"},
		"not a manifest":     {bytes.Repeat([]byte("not a manifest "), 20), "not a sigcheck manifest"},
		"version 1":          {old, "version 1"},
	} {
		if err := try(c.b); !errors.Is(err, ErrManifest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Main blocks that lie consistently: sizes that would make a reader
	// allocate or loop without bound, names that climb out of the set.
	for name, edit := range map[string]func(h []byte) []byte{
		"segment 1 TiB":  func(h []byte) []byte { binary.LittleEndian.PutUint64(h[56:], 1<<40); return h },
		"segment 0":      func(h []byte) []byte { binary.LittleEndian.PutUint64(h[56:], 0); return h },
		"size 2^63-1":    func(h []byte) []byte { binary.LittleEndian.PutUint64(h[96+2+8:], 1<<63-1); return h },
		"parity 70000":   func(h []byte) []byte { binary.LittleEndian.PutUint32(h[64:], 70000); return h },
		"files 2^31":     func(h []byte) []byte { binary.LittleEndian.PutUint32(h[68:], 1<<31); return h },
		"stripes 7":      func(h []byte) []byte { binary.LittleEndian.PutUint64(h[72:], 7); return h },
		"stripes 0":      func(h []byte) []byte { binary.LittleEndian.PutUint64(h[72:], 0); return h },
		"chunk 4096":     func(h []byte) []byte { binary.LittleEndian.PutUint32(h[88:], 4096); return h },
		"code 2":         func(h []byte) []byte { h[92] = 2; return h },
		"version 4":      func(h []byte) []byte { h[24] = 4; return h },
		"mode setuid":    func(h []byte) []byte { binary.LittleEndian.PutUint32(h[96+2+8+8:], 0o4755); return h },
		"hash size 16":   func(h []byte) []byte { h[25] = 16; return h },
		"name ../../etc": func(h []byte) []byte { return slices.Concat(h[:96], []byte{10, 0}, []byte("../../etcx"), h[96+2+8:]) },
		"name .":         func(h []byte) []byte { return slices.Concat(h[:96], []byte{1, 0}, []byte("."), h[96+2+8:]) },
	} {
		h := resign(edit(slices.Clone(good.b[:m.mainLen])))
		if err := try(h); !errors.Is(err, ErrManifest) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Item 6 of issue 28: a forged manifest, a main block alone that claims
// 2^36 bytes, costs work bounded by the bytes present: opening, checking
// the (missing) file and planning its repair allocate a few times the
// main block, not the gigabytes the claimed size would make.
func TestForgedManifestBoundedWork(t *testing.T) {
	h, _ := tree.LookupHash(tree.DefaultHash)
	m := &Manifest{Version: 3, Hash: h, Segment: tree.DefaultSegment, code: codeLeopard16{},
		Files: []File{{Name: "big.bin", Size: 1 << 36}}}
	m.layout()
	var cfg config
	Redundancy(5)(&cfg)
	m.Stripes, m.Parity, _ = shape(m.segments, &cfg, m.code)
	if err := m.layout(); err != nil {
		t.Fatal(err)
	}
	m.nodeSums = make([]uint64, blocks(m.nodesLen))
	m.leafSums = make([]uint64, blocks(m.copies[2]-m.leavesAt))
	m.paritySums = make([]uint64, int64(m.Stripes)*int64(m.Parity)*int64(m.chunks()))
	main := m.encodeMain()
	allocs := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := Open(bytes.NewReader(main), int64(len(main)))
			if err != nil {
				b.Fatal(err)
			}
			rep := got.Absent(0)
			if got.Damage.LostLeaves != 1<<25 || Count(rep.Unchecked) != 1<<25 {
				b.Fatalf("%d leaves lost, %d unchecked", got.Damage.LostLeaves, Count(rep.Unchecked))
			}
			if err := got.Plan([]*Report{rep}); !errors.Is(err, ErrRepairCheck) {
				b.Fatal(err)
			}
		}
	})
	if n := allocs.AllocedBytesPerOp(); n > 8*int64(len(main)) {
		t.Errorf("a %d-byte forged manifest: %d bytes allocated", len(main), n)
	}
}

func TestCreateLimits(t *testing.T) {
	one := []Source{{Name: "x", Data: bytes.NewReader(nil)}}
	for _, opts := range [][]Option{
		{Segment(MaxSegment + 1)},
		{Segment(0)},
		{PerStripe(maxShards)},
		{Redundancy(101)},
		{Redundancy(-1)},
		{Recovery(-1)},
		{UseHash("no such hash")},
	} {
		if _, err := Create(&memFile{}, one, opts...); err == nil {
			t.Errorf("%d options accepted", len(opts))
		}
	}
	for _, src := range [][]Source{nil, {{Name: "../x"}}, {{Name: "/x"}}, {{Name: "a/./b"}}, {{Name: "a"}, {Name: "a"}}} {
		if _, err := Create(&memFile{}, src); err == nil {
			t.Errorf("%+v accepted", src)
		}
	}
	short := []Source{{Name: "x", Data: bytes.NewReader(make([]byte, 10)), Size: 11}}
	if _, err := Create(&memFile{}, short); !errors.Is(err, ErrSize) {
		t.Errorf("short data: %v", err)
	}
	failing := []Source{{Name: "x", Data: errReaderAt{}, Size: 11}}
	if _, err := Create(&memFile{}, failing); err == nil || errors.Is(err, ErrSize) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("a failing reader: %v", err)
	}
}

type errReaderAt struct{}

func (errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, errors.New("disk on fire") }

var big = flag.Bool("manifest.big", false, "run the tests that read gigabytes (.ci/run does)")

// A sparse file past 4 GiB: sizes and offsets are 64-bit throughout.
func TestManifestOver4GiB(t *testing.T) {
	if !*big {
		t.Skip("reads 4 GiB three times (20 s): -manifest.big runs it")
	}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 4<<30 + 12345
	if err := f.Truncate(size); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.WriteAt([]byte("the end"), size-7)
	mf, _ := os.Create(filepath.Join(dir, "m"))
	defer mf.Close()
	m, err := Create(mf, []Source{{Name: "big", Data: f, Size: size}}, Segment(1<<20), PerStripe(2))
	if err != nil {
		t.Fatal(err)
	}
	if m.Files[0].Segments != 4097 {
		t.Fatalf("%d segments", m.Files[0].Segments)
	}
	f.WriteAt([]byte{1}, 4<<30+100) // corrupt the last segment, past 4 GiB
	rep, err := m.Check(context.Background(), 0, f, size, nil)
	if err != nil || !slices.Equal(rep.Corrupted, runs(4096)) {
		t.Fatalf("Check: %+v %v", rep, err)
	}
	if _, err := m.Repair(context.Background(), []Target{f}, []*Report{rep}, 0); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 4<<30+100)
	if b[0] != 0 {
		t.Error("not repaired")
	}
}

// A forged manifest claiming 32768 parity segments of 1 MiB for a file of
// one byte, with only its first parity segment there: the repair refuses
// in time and memory bounded by what is there, instead of solving codes
// of 32 GiB in columns of hundreds of megabytes.
func TestForgedParityBoundedWork(t *testing.T) {
	h, _ := tree.LookupHash(tree.DefaultHash)
	m := &Manifest{Version: 3, Hash: h, Segment: 1 << 20, code: codeLeopard16{}, Parity: 32768, Stripes: 1,
		Files: []File{{Name: "x", Size: 1}}}
	if err := m.layout(); err != nil {
		t.Fatal(err)
	}
	m.nodeSums = make([]uint64, blocks(m.nodesLen))
	m.leafSums = make([]uint64, blocks(m.weakAt-m.leavesAt))
	m.weakSums = make([]uint64, blocks(m.copies[2]-m.weakAt))
	m.paritySums = make([]uint64, int64(m.Stripes)*int64(m.Parity)*int64(m.chunks()))
	zero := make([]byte, m.chunk)
	for c := range m.chunks() {
		lo, hi := m.chunkRange(c)
		m.paritySums[c] = xxh3.Hash(zero[:hi-lo])
	}
	main := m.encodeMain()
	b := make([]byte, m.parityAt+int64(m.shard)) // the main block, and parity row 0 of zeros
	copy(b, main)
	res := testing.Benchmark(func(bb *testing.B) {
		bb.ReportAllocs()
		for bb.Loop() {
			got, err := Open(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				bb.Fatal(err)
			}
			_, err = got.Repair(context.Background(), []Target{&memFile{}}, []*Report{got.Absent(0)}, 0)
			if !errors.Is(err, ErrTooManyFaults) || !strings.Contains(err.Error(), "claims far more") {
				bb.Fatal(err)
			}
		}
	})
	if n := res.AllocedBytesPerOp(); n > 4*int64(len(b)) {
		t.Errorf("a %d-byte forged manifest: %d bytes allocated", len(b), n)
	}
}
