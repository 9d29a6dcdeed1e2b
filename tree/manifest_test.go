package tree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/zeebo/xxh3"
)

// writeManifest makes a manifest of data in dir and returns it and its file.
func writeManifest(t *testing.T, dir string, data []byte, opts ...Option) (*Manifest, *os.File) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := CreateManifest(f, bytes.NewReader(data), int64(len(data)), "data.bin", opts...)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	back, err := OpenManifest(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	if back.Root != m.Root || back.Segments != m.Segments || back.Name != "data.bin" || back.Parity != m.Parity {
		t.Fatalf("reopened manifest %+v, written %+v", back, m)
	}
	return back, f
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
		m, _ := writeManifest(t, t.TempDir(), data, opts...)
		tr := mustBuild(t, data, Segment(c.seg))
		if m.Root != tr.Root() {
			t.Errorf("size %d seg %d: manifest root %x, tree root %x", c.size, c.seg, m.Root, tr.Root())
		}
		bad, err := m.Verify(bytes.NewReader(data), int64(len(data)))
		if err != nil || len(bad) != 0 {
			t.Errorf("size %d: clean file reports %v, %v", c.size, bad, err)
		}
		if c.parity > 0 {
			par, _ := NewParity(data, c.seg, c.parity)
			var want []byte
			for _, s := range par.Shards {
				want = append(want, s...)
			}
			got := make([]byte, len(want))
			m.f.ReadAt(got, m.parityOffset())
			if !bytes.Equal(got, want) {
				t.Errorf("size %d: the manifest's parity is not NewParity's", c.size)
			}
		}
	}
}

func TestManifestVerifyAndRepair(t *testing.T) {
	dir := t.TempDir()
	data := randomData(600_000, 21)
	m, _ := writeManifest(t, dir, data, Segment(1000), WithParity(3))
	path := filepath.Join(dir, "data.bin")
	faulty := []int{0, 7, 300, 599}
	os.WriteFile(path, corrupt(data, 1000, faulty, 22), 0o644)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var progress []int64
	bad, err := m.Verify(f, int64(len(data)), Progress(func(d int64) { progress = append(progress, d) }))
	if err != nil || !slices.Equal(bad, faulty) {
		t.Fatalf("Verify found %v (%v), want %v", bad, err, faulty)
	}
	if len(progress) == 0 || progress[len(progress)-1] != int64(len(data)) {
		t.Errorf("progress %v", progress)
	}
	if err := m.Repair(f, bad); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, 0)
	if bad, err := m.Verify(f, int64(len(data))); err != nil || len(bad) != 0 {
		t.Fatalf("after repair: %v %v", bad, err)
	}
	// Four faults in one stripe (the stripe is 253 segments) are too many.
	os.WriteFile(path, corrupt(data, 1000, []int{1, 2, 3, 4}, 23), 0o644)
	before, _ := os.ReadFile(path)
	if err := m.Repair(f, []int{1, 2, 3, 4}); !errors.Is(err, ErrTooManyFaults) {
		t.Errorf("four faults: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("a refused repair wrote to the file")
	}
	// Truncated, extended, another file of the same size.
	for name, d := range map[string][]byte{"truncated": data[:len(data)-1], "extended": append(slices.Clone(data), 0)} {
		if _, err := m.Verify(bytes.NewReader(d), int64(len(d))); !errors.Is(err, ErrSize) || !bytes.Contains([]byte(err.Error()), []byte(name)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := m.Verify(bytes.NewReader(data[:100]), int64(len(data))); !errors.Is(err, ErrSize) {
		t.Errorf("a file shorter than it said: %v", err)
	}
	if _, err := m.Verify(bytes.NewReader(append(slices.Clone(data), 1)), int64(len(data))); !errors.Is(err, ErrSize) {
		t.Errorf("a file longer than it said: %v", err)
	}
	other := randomData(len(data), 99)
	if bad, err := m.Verify(bytes.NewReader(other), int64(len(other))); err != nil || len(bad) != m.Segments {
		t.Errorf("another file: %d of %d segments differ, %v", len(bad), m.Segments, err)
	}
	noParity, _ := writeManifest(t, t.TempDir(), data, Segment(1000))
	if err := noParity.Repair(f, []int{1}); !errors.Is(err, ErrTooManyFaults) {
		t.Errorf("repair without parity: %v", err)
	}
}

func TestManifestRefusesCorruption(t *testing.T) {
	dir := t.TempDir()
	data := randomData(50_000, 31)
	_, f := writeManifest(t, dir, data, Segment(500), WithParity(2))
	good, _ := os.ReadFile(f.Name())
	try := func(b []byte) error {
		p := filepath.Join(dir, "x")
		os.WriteFile(p, b, 0o644)
		g, _ := os.Open(p)
		defer g.Close()
		_, err := OpenManifest(g, int64(len(b)))
		return err
	}
	for _, at := range []int{0, 9, 50, 70, 100, headerSize + 3, len(good) / 2, len(good) - 20, len(good) - 1} {
		b := slices.Clone(good)
		b[at] ^= 0x10
		if err := try(b); !errors.Is(err, ErrManifest) {
			t.Errorf("byte %d flipped: %v", at, err)
		}
	}
	for _, b := range [][]byte{good[:len(good)-1], append(slices.Clone(good), 0), good[:100], nil, []byte("not a manifest at all, but long enough to have a header............................................................................................")} {
		if err := try(b); !errors.Is(err, ErrManifest) {
			t.Errorf("%d bytes: %v", len(b), err)
		}
	}
	if err := try(good); err != nil {
		t.Errorf("the good manifest: %v", err)
	}
	// Headers that lie consistently (the trailer recomputed, as an attacker
	// would): sizes that would make a reader allocate or loop without bound.
	for name, edit := range map[string]func(h []byte){
		"segment 1 TiB":        func(h []byte) { binary.LittleEndian.PutUint64(h[48:], 1<<40) },
		"segment 0":            func(h []byte) { binary.LittleEndian.PutUint64(h[48:], 0) },
		"size 2^63-1":          func(h []byte) { binary.LittleEndian.PutUint64(h[56:], 1<<63-1) },
		"size -1":              func(h []byte) { binary.LittleEndian.PutUint64(h[56:], 1<<64-1) },
		"segments 2^60":        func(h []byte) { binary.LittleEndian.PutUint64(h[64:], 1<<60) },
		"parity 300":           func(h []byte) { binary.LittleEndian.PutUint16(h[72:], 300) },
		"stripe 7":             func(h []byte) { binary.LittleEndian.PutUint16(h[74:], 7) },
		"name of 200 bytes":    func(h []byte) { h[96] = 200 },
		"hash name of 9 bytes": func(h []byte) { h[10] = 9 },
		"hash size 16":         func(h []byte) { h[9] = 16 },
	} {
		b := slices.Clone(good)
		edit(b)
		binary.LittleEndian.PutUint64(b[len(b)-8:], xxh3.Hash(b[:len(b)-8]))
		if err := try(b); !errors.Is(err, ErrManifest) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCreateManifestLimits(t *testing.T) {
	f, _ := os.Create(filepath.Join(t.TempDir(), "m"))
	defer f.Close()
	for _, opts := range [][]Option{
		{Segment(MaxManifestSegment + 1)},
		{Segment(MaxParitySegment + 1), WithParity(1)},
		{Segment(0)},
		{WithParity(MaxParity + 1)},
		{UseHash("no such hash")},
	} {
		if _, err := CreateManifest(f, bytes.NewReader(nil), 0, "x", opts...); err == nil {
			t.Errorf("%d options accepted", len(opts))
		}
	}
	if _, err := CreateManifest(f, bytes.NewReader(make([]byte, 10)), 11, "x"); !errors.Is(err, ErrSize) {
		t.Errorf("short data: %v", err)
	}
	if _, err := CreateManifest(f, iotest.ErrReader(errors.New("disk on fire")), 11, "x"); err == nil || errors.Is(err, ErrSize) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("a failing reader: %v", err)
	}
	if _, err := CreateManifest(f, bytes.NewReader(make([]byte, 12)), 11, "x"); !errors.Is(err, ErrSize) {
		t.Error("long data accepted")
	}
}

// A sparse file past 4 GiB: sizes and offsets are 64-bit throughout.
func TestManifestOver4GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 4 GiB")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "big")
	f, err := os.Create(path)
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
	m, err := CreateManifest(mf, f, size, path, Segment(4<<20))
	if err != nil {
		t.Fatal(err)
	}
	if m.Segments != 1025 {
		t.Fatalf("%d segments", m.Segments)
	}
	f.WriteAt([]byte{1}, 4<<30+100) // corrupt the last segment, past 4 GiB
	f.Seek(0, 0)
	bad, err := m.Verify(f, size)
	if err != nil || !slices.Equal(bad, []int{1024}) {
		t.Errorf("Verify: %v %v", bad, err)
	}
}
