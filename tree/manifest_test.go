package tree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/zeebo/xxh3"
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

// makeSet writes the manifest of files (name → data) in memory and opens
// it back.
func makeSet(t testing.TB, names []string, datas [][]byte, opts ...Option) (*Manifest, *memFile) {
	t.Helper()
	var src []Source
	for k, d := range datas {
		src = append(src, Source{Name: names[k], Data: bytes.NewReader(d), Size: int64(len(d))})
	}
	out := &memFile{}
	m, err := CreateManifest(out, src, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(out.b)) != m.Bytes() {
		t.Fatalf("wrote %d bytes, the layout says %d", len(out.b), m.Bytes())
	}
	back, err := OpenManifest(out, int64(len(out.b)))
	if err != nil {
		t.Fatal(err)
	}
	if back.Damage.Any() || len(back.Files) != len(m.Files) || back.Stripes != m.Stripes {
		t.Fatalf("reopened manifest %+v, written %+v", back, m)
	}
	for i := range m.Files {
		if back.Files[i] != m.Files[i] {
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
		size := int64(-1)
		if f != nil {
			size = int64(len(f.b))
		}
		var r io.ReaderAt = bytes.NewReader(nil)
		if f != nil {
			r = f
		}
		rep, err := m.Check(i, r, size)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	return reps
}

// repairAll repairs a set in memory (missing files made empty) and
// returns the error.
func repairAll(t testing.TB, m *Manifest, files []*memFile) error {
	reps := checkAll(t, m, files)
	targets := make([]Target, len(files))
	for i := range files {
		if files[i] == nil {
			files[i] = &memFile{}
		}
		targets[i] = files[i]
	}
	return m.Repair(targets, reps)
}

func TestManifestMatchesTree(t *testing.T) {
	for _, c := range []struct{ size, seg, parity int }{
		{0, 2048, 0}, {1, 2048, 2}, {5000, 1000, 0}, {100_000, 333, 3}, {3 << 20, 4096, 0}, {300_000, 64, 4}, {300_000, 3, 0}, // 100000 segments: several blocks of inner nodes
	} {
		data := randomData(c.size, uint64(c.size))
		opts := []Option{Segment(c.seg)}
		if c.parity > 0 {
			opts = append(opts, WithParity(c.parity))
		}
		m, _ := makeOne(t, data, opts...)
		tr := mustBuild(t, data, Segment(c.seg))
		if m.Files[0].Root != tr.Root() || m.Files[0].Segments != tr.Segments() {
			t.Errorf("size %d seg %d: manifest root %x, tree root %x", c.size, c.seg, m.Files[0].Root, tr.Root())
		}
		rep, err := m.Check(0, bytes.NewReader(data), int64(len(data)))
		if err != nil || !rep.OK() || len(rep.Unchecked) > 0 {
			t.Errorf("size %d: clean file reports %+v, %v", c.size, rep, err)
		}
	}
}

// Several files: each its own tree (the root `sigcheck tree` prints).
func TestManifestSetRoots(t *testing.T) {
	names := []string{"a", "dir/b", "dir/sub/c", "empty"}
	datas := [][]byte{randomData(10_000, 1), randomData(777, 2), randomData(64*50, 3), nil}
	m, _ := makeSet(t, names, datas, Segment(64), WithParity(3))
	for i, d := range datas {
		if r := mustBuild(t, d, Segment(64)).Root(); m.Files[i].Root != r || m.Files[i].Name != names[i] {
			t.Errorf("file %d: %+v, root %x", i, m.Files[i], r)
		}
	}
	if m.Segments() != 157+13+50+1 || m.Size() != 10_000+777+3200 {
		t.Errorf("%d segments, %d bytes", m.Segments(), m.Size())
	}
}

// The code: any e ≤ P lost data segments of a stripe come back from any e
// intact parity segments (a property over random stripes, losses and
// damaged parity).
func TestCauchyCodeRebuilds(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(5)
	params.MinSuccessfulTests = 300
	props := gopter.NewProperties(params)
	props.Property("lost ≤ intact parity: rebuilt exactly", prop.ForAll(func(seed uint64) bool {
		r := rand.New(rand.NewPCG(seed, 1))
		p := 1 + r.IntN(MaxParity)
		if r.IntN(2) == 0 {
			p = 1 + r.IntN(8)
		}
		w := 1 + r.IntN(256-p)
		seg := 1 + r.IntN(100)
		data := make([][]byte, w)
		for i := range data {
			data[i] = randomData(seg, r.Uint64())
		}
		parity := make([][]byte, p)
		for k := range parity {
			parity[k] = make([]byte, seg)
		}
		for i, d := range data {
			addParity(parity, i, d)
		}
		damaged := r.IntN(p)
		for _, k := range r.Perm(p)[:damaged] {
			parity[k] = nil
		}
		lost := r.Perm(w)[:r.IntN(min(w, p-damaged)+1)]
		got := make([][]byte, w)
		for i := range data {
			got[i] = slices.Clone(data[i])
		}
		for _, i := range lost {
			got[i] = randomData(seg, r.Uint64())
		}
		if err := solveStripe(got, lost, parity); err != nil {
			return false
		}
		for i := range data {
			if !bytes.Equal(got[i], data[i]) {
				return false
			}
		}
		if w > p-damaged { // one too many is refused
			more := r.Perm(w)[:p-damaged+1]
			return errors.Is(solveStripe(got, more, parity), ErrTooManyFaults)
		}
		return true
	}, gen.UInt64()))
	props.TestingRun(t)
}

// gf8 is klauspost's field: our scalar products are its kernels' (all
// 256×256 of them).
func TestGF8IsKlauspostField(t *testing.T) {
	in := make([]byte, 256)
	for i := range in {
		in[i] = byte(i)
	}
	out := make([]byte, 256)
	for c := range 256 {
		clear(out)
		mulAdd(byte(c), in, out)
		for a := range 256 {
			if want := byte(gf8().Mul(uint32(c), uint32(a))); out[a] != want {
				t.Fatalf("%d·%d: kernel %d, field %d", c, a, out[a], want)
			}
		}
	}
}

func TestManifestChecksAndRepairsDamage(t *testing.T) {
	data := randomData(600_000, 21)
	m, _ := makeOne(t, data, Segment(1000), WithParity(3))
	if m.Stripes != 3 || m.Width != 200 {
		t.Fatalf("%d stripes of %d", m.Stripes, m.Width)
	}
	f := &memFile{corrupt(data, 1000, []int{0, 7, 300, 599}, 22)}
	var progress []int64
	rep, err := m.Check(0, f, int64(len(f.b)), Progress(func(d int64) { progress = append(progress, d) }))
	if err != nil || !slices.Equal(rep.Corrupted, []int{0, 7, 300, 599}) || rep.OK() {
		t.Fatalf("Check: %+v %v", rep, err)
	}
	if len(progress) == 0 || progress[len(progress)-1] != int64(len(data)) {
		t.Errorf("progress %v", progress)
	}
	if err := repairAll(t, m, []*memFile{f}); err != nil || !bytes.Equal(f.b, data) {
		t.Fatalf("repair: %v", err)
	}
	// Stripes interleave: 9 consecutive segments are 3 per stripe, rebuilt;
	// 4 in one stripe (every third segment) are too many, and nothing is
	// written.
	f.b = corrupt(data, 1000, []int{100, 101, 102, 103, 104, 105, 106, 107, 108}, 23)
	if err := repairAll(t, m, []*memFile{f}); err != nil || !bytes.Equal(f.b, data) {
		t.Fatalf("a run of 9: %v", err)
	}
	f.b = corrupt(data, 1000, []int{3, 6, 9, 12}, 24)
	before := slices.Clone(f.b)
	if err := repairAll(t, m, []*memFile{f}); !errors.Is(err, ErrTooManyFaults) || !bytes.Equal(f.b, before) {
		t.Errorf("four in a stripe: %v", err)
	}
	noParity, _ := makeOne(t, data, Segment(1000))
	if err := repairAll(t, noParity, []*memFile{f}); !errors.Is(err, ErrTooManyFaults) || !strings.Contains(err.Error(), "no parity") {
		t.Errorf("repair without parity: %v", err)
	}
	// Another file of the same size: every segment differs.
	rep, _ = m.Check(0, bytes.NewReader(randomData(len(data), 99)), int64(len(data)))
	if len(rep.Corrupted) != 600 {
		t.Errorf("another file: %d of 600 differ", len(rep.Corrupted))
	}
}

// Truncated and extended files: the common part is checked, the report
// says what is missing or appended, and repair restores the length.
func TestManifestTruncatedAndExtended(t *testing.T) {
	data := randomData(100_000, 31)
	m, _ := makeOne(t, data, Segment(512), WithParity(20)) // 196 segments, 1 stripe: 20 rebuilt
	for _, c := range []struct {
		size       int
		present    int
		from, miss int64
	}{
		{99_999, 195, 99_999, 1}, {99_840, 195, 99_840, 160}, {95_000, 185, 95_000, 5000}, {90_000, 175, 90_000, 10_000}, {0, 0, 0, 100_000},
	} {
		f := &memFile{slices.Clone(data[:c.size])}
		rep, err := m.Check(0, f, int64(c.size))
		if err != nil || rep.OK() || rep.Present != c.present || len(rep.Corrupted) != 0 {
			t.Fatalf("truncated to %d: %+v %v", c.size, rep, err)
		}
		if from, n := rep.Missing(); from != c.from || n != c.miss {
			t.Errorf("truncated to %d: missing %d from %d", c.size, n, from)
		}
		err = repairAll(t, m, []*memFile{f})
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
	rep, _ := m.Check(0, f, int64(len(f.b)))
	if rep.Appended() != 4 || !slices.Equal(rep.Corrupted, []int{4}) || rep.OK() {
		t.Errorf("extended: %+v", rep)
	}
	if err := repairAll(t, m, []*memFile{f}); err != nil || !bytes.Equal(f.b, data) {
		t.Errorf("extended: repair %v", err)
	}
}

// A set: parity shared across files restores a missing file, a truncated
// one and a damaged one at once.
func TestManifestSetRepair(t *testing.T) {
	names := []string{"a", "b/c", "d"}
	datas := [][]byte{randomData(50_000, 1), randomData(20_000, 2), randomData(123_456, 3)}
	m, _ := makeSet(t, names, datas, Segment(256), WithParity(40)) // 2 stripes: 80 segments of 755 rebuilt in a run
	files := []*memFile{{slices.Clone(datas[0][:40_000])}, nil, {corrupt(datas[2], 256, []int{9}, 4)}}
	reps := checkAll(t, m, files)
	if reps[1].Size != -1 || reps[1].Present != 0 || reps[0].Present != 156 || !slices.Equal(reps[2].Corrupted, []int{9}) {
		t.Fatalf("reports %+v %+v %+v", reps[0], reps[1], reps[2])
	}
	if err := repairAll(t, m, files); err != nil {
		t.Fatal(err)
	}
	for i, d := range datas {
		if !bytes.Equal(files[i].b, d) {
			t.Errorf("file %d not restored", i)
		}
	}
	if !m.Matches(1, bytes.NewReader(datas[1]), int64(len(datas[1]))) || m.Matches(1, bytes.NewReader(datas[0]), int64(len(datas[0]))) {
		t.Error("Matches")
	}
}

// Parity made in several passes (a small budget) is the parity of one.
func TestManifestParityPasses(t *testing.T) {
	data := randomData(500_000, 8)
	_, one := makeOne(t, data, Segment(100), WithParity(4))
	old := parityBudget
	parityBudget = 7 * 4 * 100 // 7 stripes a pass, of 20
	defer func() { parityBudget = old }()
	m, many := makeOne(t, data, Segment(100), WithParity(4))
	if m.Stripes != 20 || !bytes.Equal(one.b, many.b) {
		t.Errorf("%d stripes; the manifests differ", m.Stripes)
	}
}

// Every byte of a small manifest flipped in turn: it still opens, checks
// a clean file as clean and repairs a damaged one.
func TestManifestSurvivesAnyFlippedByte(t *testing.T) {
	data := randomData(3000, 41)
	_, good := makeSet(t, []string{"x", "y/z"}, [][]byte{data, data[:700]}, Segment(64), WithParity(2))
	damaged := corrupt(data, 64, []int{17}, 5)
	for at := range good.b {
		b := slices.Clone(good.b)
		b[at] ^= 0x40
		m, err := OpenManifest(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("byte %d of %d flipped: %v", at, len(b), err)
		}
		reps := checkAll(t, m, []*memFile{{data}, {data[:700]}})
		if !reps[0].OK() || !reps[1].OK() || len(reps[0].Unchecked)+len(reps[1].Unchecked) > 0 {
			t.Fatalf("byte %d flipped: a clean set reports %+v %+v", at, reps[0], reps[1])
		}
		files := []*memFile{{slices.Clone(damaged)}, {data[:700]}}
		if err := repairAll(t, m, files); err != nil || !bytes.Equal(files[0].b, data) {
			t.Fatalf("byte %d flipped: repair %v", at, err)
		}
	}
	// Damage at the parity's limit: two segments of a stripe with P = 2,
	// in different KiB of their segments, and a byte flipped anywhere in
	// the manifest, parity included (the other segment stands in for the
	// damaged parity row over the damaged KiB).
	data = randomData(30_000, 43)
	_, good2 := makeOne(t, data, WithParity(2))
	damaged = slices.Clone(data)
	damaged[2048*3+10] ^= 1   // segment 3, its first KiB
	damaged[2048*9+1500] ^= 1 // segment 9, its second
	for at := range good2.b {
		b := slices.Clone(good2.b)
		b[at] ^= 0x40
		m, err := OpenManifest(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("byte %d of %d flipped: %v", at, len(b), err)
		}
		files := []*memFile{{slices.Clone(damaged)}}
		if err := repairAll(t, m, files); err != nil || !bytes.Equal(files[0].b, data) {
			t.Fatalf("byte %d flipped, two segments damaged: repair %v", at, err)
		}
	}
	// Both damaged in the same KiB as a damaged parity byte: refused.
	m, _ := OpenManifest(bytes.NewReader(good2.b), int64(len(good2.b)))
	b := slices.Clone(good2.b)
	b[m.parityAt+5] ^= 1
	if m, _ := OpenManifest(bytes.NewReader(b), int64(len(b))); m.DamagedParity() != 1 || m.Damage.Any() {
		t.Errorf("damaged parity: %d KiB, %+v", m.DamagedParity(), m.Damage)
	}
	damaged[2048*9+5] ^= 1
	damaged[2048*9+1500] ^= 1
	m, _ = OpenManifest(bytes.NewReader(b), int64(len(b)))
	if err := repairAll(t, m, []*memFile{{damaged}}); !errors.Is(err, ErrTooManyFaults) {
		t.Errorf("overlapping damage: %v", err)
	}

	// A run of damage over the first copy of the main block and the nodes.
	b = slices.Clone(good.b)
	m, _ = OpenManifest(bytes.NewReader(b), int64(len(b)))
	for k := range m.copies[1] {
		b[k] = 0
	}
	if m, err := OpenManifest(bytes.NewReader(b), int64(len(b))); err != nil || m.Damage.MainCopies != 2 || m.Damage.NodeBlocks == 0 || m.Damage.LostLeaves != 0 {
		t.Errorf("first third zeroed: %v %+v", err, m)
	}
	// A truncated manifest keeps what comes before the cut.
	if m, err := OpenManifest(bytes.NewReader(good.b[:len(good.b)-100]), int64(len(good.b)-100)); err != nil || m.Damage.MainCopies != 2 {
		t.Errorf("truncated manifest: %v", err)
	}
}

func TestManifestRefused(t *testing.T) {
	_, good := makeOne(t, randomData(5000, 3), Segment(100), WithParity(2))
	try := func(b []byte) error {
		_, err := OpenManifest(bytes.NewReader(b), int64(len(b)))
		return err
	}
	m, _ := OpenManifest(bytes.NewReader(good.b), int64(len(good.b)))
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
	// Main blocks that lie consistently (checksums recomputed, as an
	// attacker would): sizes that would make a reader allocate or loop
	// without bound, names that climb out of the directory.
	for name, edit := range map[string]func(h []byte) []byte{
		"segment 1 TiB": func(h []byte) []byte { binary.LittleEndian.PutUint64(h[56:], 1<<40); return h },
		"segment 0":     func(h []byte) []byte { binary.LittleEndian.PutUint64(h[56:], 0); return h },
		"size 2^63-1":   func(h []byte) []byte { binary.LittleEndian.PutUint64(h[96+2+8:], 1<<63-1); return h },
		"parity 300":    func(h []byte) []byte { binary.LittleEndian.PutUint32(h[64:], 300); return h },
		"files 2^31":    func(h []byte) []byte { binary.LittleEndian.PutUint32(h[68:], 1<<31); return h },
		"stripes 7":     func(h []byte) []byte { binary.LittleEndian.PutUint64(h[72:], 7); return h },
		"name ../../etc/x": func(h []byte) []byte {
			return slices.Concat(h[:96], []byte{14, 0}, []byte("../../etc/xxxx"), h[96+2+8:])
		},
		"hash size 16": func(h []byte) []byte { h[25] = 16; return h },
	} {
		h := edit(slices.Clone(good.b[:m.mainLen]))
		binary.LittleEndian.PutUint64(h[8:], uint64(len(h)))
		binary.LittleEndian.PutUint64(h[16:], xxh3.Hash(h[:16]))
		binary.LittleEndian.PutUint64(h[len(h)-8:], xxh3.Hash(h[:len(h)-8]))
		if err := try(h); !errors.Is(err, ErrManifest) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCreateManifestLimits(t *testing.T) {
	one := []Source{{Name: "x", Data: bytes.NewReader(nil)}}
	for _, opts := range [][]Option{
		{Segment(MaxManifestSegment + 1)},
		{Segment(MaxParitySegment + 1), WithParity(1)},
		{Segment(0)},
		{WithParity(MaxParity + 1)},
		{UseHash("no such hash")},
	} {
		if _, err := CreateManifest(&memFile{}, one, opts...); err == nil {
			t.Errorf("%d options accepted", len(opts))
		}
	}
	for _, src := range [][]Source{nil, {{Name: "../x"}}, {{Name: "/x"}}, {{Name: "a/./b"}}, {{Name: "a"}, {Name: "a"}}} {
		if _, err := CreateManifest(&memFile{}, src); err == nil {
			t.Errorf("%+v accepted", src)
		}
	}
	short := []Source{{Name: "x", Data: bytes.NewReader(make([]byte, 10)), Size: 11}}
	if _, err := CreateManifest(&memFile{}, short); !errors.Is(err, ErrSize) {
		t.Errorf("short data: %v", err)
	}
	failing := []Source{{Name: "x", Data: errReaderAt{}, Size: 11}}
	if _, err := CreateManifest(&memFile{}, failing); err == nil || errors.Is(err, ErrSize) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("a failing reader: %v", err)
	}
}

type errReaderAt struct{}

func (errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, errors.New("disk on fire") }

// A sparse file past 4 GiB: sizes and offsets are 64-bit throughout.
func TestManifestOver4GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 4 GiB")
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
	m, err := CreateManifest(mf, []Source{{Name: "big", Data: f, Size: size}}, Segment(1<<20), WithParity(2))
	if err != nil {
		t.Fatal(err)
	}
	if m.Files[0].Segments != 4097 {
		t.Fatalf("%d segments", m.Files[0].Segments)
	}
	f.WriteAt([]byte{1}, 4<<30+100) // corrupt the last segment, past 4 GiB
	rep, err := m.Check(0, f, size)
	if err != nil || !slices.Equal(rep.Corrupted, []int{4096}) {
		t.Fatalf("Check: %+v %v", rep, err)
	}
	if err := m.Repair([]Target{f}, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 4<<30+100)
	if b[0] != 0 {
		t.Error("not repaired")
	}
}

func ExampleCreateManifest() {
	data := bytes.Repeat([]byte("a file worth keeping "), 10_000) // 210 000 bytes
	out := &memFile{}                                             // an *os.File in practice
	m, _ := CreateManifest(out, []Source{{Name: "file.txt", Data: bytes.NewReader(data), Size: int64(len(data))}}, WithParity(4))

	got := &memFile{slices.Clone(data[:205_000])} // truncated, and damaged
	got.b[1000] ^= 1
	rep, _ := m.Check(0, got, int64(len(got.b)))
	from, n := rep.Missing()
	fmt.Println("corrupted:", rep.Corrupted, "missing:", n, "bytes from", from)
	fmt.Println(m.Repair([]Target{got}, []*Report{rep}), bytes.Equal(got.b, data))
	// Output:
	// corrupted: [0] missing: 5000 bytes from 205000
	// <nil> true
}
