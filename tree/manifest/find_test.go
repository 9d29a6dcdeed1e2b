package manifest

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Bytes inserted or removed: the segments after them are found where they
// moved, by their weak sums, and the file is laid out anew; what was
// overwritten too is rebuilt from the parity.
func TestFindMovedSegments(t *testing.T) {
	data := randomData(300_000, 9)
	for _, c := range []struct {
		name  string
		edit  func([]byte) []byte
		moved int64 // segments found moved
		lost  int64 // segments rebuilt
	}{
		{"a byte inserted at the start", func(b []byte) []byte { return append([]byte{'X'}, b...) }, 147, 0},
		{"ten bytes removed in segment 50", func(b []byte) []byte { return slices.Concat(b[:50*2048+7], b[50*2048+17:]) }, 96, 1},
		{"a KiB inserted, and segment 100 overwritten", func(b []byte) []byte {
			b = slices.Concat(b[:70*2048], bytes.Repeat([]byte("i"), 1024), b[70*2048:])
			b[100*2048+1024+5] ^= 1
			return b
		}, 76, 1},
		{"the last 3 bytes cut, a byte inserted at 0", func(b []byte) []byte { return append([]byte{0}, b[:len(b)-3]...) }, 146, 1},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "data.bin")
		os.WriteFile(path, data, 0o640)
		out, _ := os.Create(filepath.Join(dir, "m"))
		if _, err := Create(out, []Source{{Name: "data.bin", Data: bytes.NewReader(data), Size: int64(len(data)), Mode: 0o640}}, PerStripe(2)); err != nil {
			t.Fatal(err)
		}
		out.Close()
		os.WriteFile(path, c.edit(slices.Clone(data)), 0o640)
		os.Chmod(path, 0o604)
		s, err := OpenSet(filepath.Join(dir, "m"), "")
		if err != nil {
			t.Fatal(err)
		}
		sts, err := s.Check(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := sts[0].Report
		if got := Count(movedRuns(r.Moved)); got != c.moved || Count(r.Lost()) != c.lost || !sts[0].Scanned {
			t.Errorf("%s: %d found moved (%+v), %d lost", c.name, got, r.Moved, Count(r.Lost()))
		}
		done, err := s.Repair(context.Background(), sts, RepairOptions{})
		if err != nil || done[0].Moved != c.moved || done[0].Rebuilt != c.lost {
			t.Errorf("%s: repair %v %+v", c.name, err, done[0])
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, data) {
			t.Errorf("%s: not restored", c.name)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o604 {
			t.Errorf("%s: mode %v, not the file's own", c.name, fi.Mode())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("%s: %d files left in the directory", c.name, len(entries))
		}
		s.Close()
	}
}

// Recheck reads back only what a repair wrote, and still tells a write
// that did not land.
func TestRecheck(t *testing.T) {
	data := randomData(50_000, 4)
	m, _ := makeOne(t, data, Segment(1000), PerStripe(4))
	f := &memFile{corrupt(data, 1000, []int{3, 7}, 1)}
	f.b = append(f.b, "tail"...)
	prev, _ := m.Check(context.Background(), 0, f, int64(len(f.b)), nil)
	copy(f.b[3000:4000], data[3000:4000]) // segment 3 written; 7 not
	f.b = f.b[:len(data)]
	rep, err := m.Recheck(context.Background(), 0, f, int64(len(f.b)), prev, prev.Lost())
	if err != nil || rep.OK() || !slices.Equal(rep.Corrupted, runs(7)) || rep.Matched != 49 {
		t.Errorf("one write missing: %+v %v", rep, err)
	}
	copy(f.b[7000:8000], data[7000:8000])
	rep, err = m.Recheck(context.Background(), 0, f, int64(len(f.b)), prev, prev.Lost())
	if err != nil || !rep.OK() || rep.Matched != 50 {
		t.Errorf("all written: %+v %v", rep, err)
	}
}

// A file of one repeated byte: every segment has the same weak sum, and
// the scan still finds each once, in one pass (a quadratic scan would
// compare 2^15 windows with 2^15 segments).
func TestFindRepeatedBytes(t *testing.T) {
	data := bytes.Repeat(randomData(64, 1), 1<<15)
	m, _ := makeOne(t, data, Segment(64), Redundancy(1))
	shifted := append([]byte{7, 7, 7}, data[:len(data)-1]...) // 3 bytes in, 1 cut
	f := &memFile{shifted}
	rep, err := m.Check(context.Background(), 0, f, int64(len(f.b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if Count(rep.Corrupted) < 1<<15-1 {
		t.Fatalf("%d corrupted: the shift went unseen", Count(rep.Corrupted))
	}
	if err := m.Find(context.Background(), 0, f, int64(len(f.b)), rep, nil); err != nil {
		t.Fatal(err)
	}
	if n := Count(rep.Lost()); n > 1 {
		t.Errorf("%d segments still lost after the scan", n)
	}
}

// A forged manifest whose weak sums match every window of a file, while
// its leaf hashes do not: the scan gives up once refuting matches has
// cost the file's size again, instead of hashing a segment at every byte.
func TestFindGivesUpOnForgedWeakSums(t *testing.T) {
	data := make([]byte, 1<<20)
	m, mf := makeOne(t, data, Segment(4096), Redundancy(5))
	zero := weakSum(make([]byte, 4096))
	f := &m.Files[0]
	for j := range f.Segments {
		binary.LittleEndian.PutUint64(mf.b[m.weakAt+f.weak+int64(j)*weakSize:], zero)
	}
	// The leaves say the segments are not zeros.
	for j := range f.Segments {
		a, b := m.leafAt(0, j)
		mf.b[m.nodesAt+a] ^= 1
		mf.b[m.leavesAt+b] ^= 1
	}
	forged := rehash(t, mf)
	file := &memFile{append([]byte{0}, data...)}
	rep, err := forged.Check(context.Background(), 0, file, int64(len(file.b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := forged.Find(context.Background(), 0, file, int64(len(file.b)), rep, nil); err != nil || !rep.ScanStopped {
		t.Errorf("the scan went on: %v %+v", err, rep.Moved)
	}
}

// rehash recomputes a manifest's checksums after an edit of its hashes,
// as a forger would, and opens it.
func rehash(t *testing.T, mf *memFile) *Manifest {
	t.Helper()
	m, err := Open(mf, int64(len(mf.b)))
	if err != nil {
		t.Fatal(err)
	}
	if m.nodeSums, err = blockSums(mf, m.nodesAt, m.nodesLen); err != nil {
		t.Fatal(err)
	}
	m.leafSums, _ = blockSums(mf, m.leavesAt, m.weakAt-m.leavesAt)
	m.weakSums, _ = blockSums(mf, m.weakAt, m.copies[2]-m.weakAt)
	main := m.encodeMain()
	for _, at := range m.copies {
		copy(mf.b[at:], main)
	}
	if m, err = Open(mf, int64(len(mf.b))); err != nil || m.Damage.Any() {
		t.Fatalf("%v %+v", err, m.Damage)
	}
	return m
}

// A manifest that lost its hashes still checks a file of the right size
// whole, against its root: a damaged file is never reported OK.
func TestLostHashesCheckTheRoot(t *testing.T) {
	data := randomData(100_000, 8)
	m, mf := makeOne(t, data, Segment(2048), Redundancy(0))
	cut := &memFile{mf.b[:m.mainLen+100]} // the main block, and nothing after it
	lost, err := Open(cut, int64(len(cut.b)))
	if err != nil || lost.Damage.LostLeaves != 49 {
		t.Fatalf("%v %+v", err, lost.Damage)
	}
	rep, _ := lost.Check(context.Background(), 0, &memFile{data}, int64(len(data)), nil)
	if !rep.OK() || !rep.RootChecked || !rep.RootMatches || Count(rep.Unchecked) != 49 {
		t.Errorf("an intact file: %+v", rep)
	}
	bad := corrupt(data, 2048, []int{30}, 1)
	rep, _ = lost.Check(context.Background(), 0, &memFile{bad}, int64(len(bad)), nil)
	if rep.OK() || !rep.RootChecked || rep.RootMatches {
		t.Errorf("a damaged file: %+v", rep)
	}
}
