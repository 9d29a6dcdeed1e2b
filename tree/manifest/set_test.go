package manifest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// A set on disk: files written in dir under their names, and its
// manifest made beside them as m.
type diskSet struct {
	t     *testing.T
	dir   string
	files map[string][]byte
}

func newDiskSet(t *testing.T, files map[string][]byte, opts ...Option) *diskSet {
	t.Helper()
	d := &diskSet{t: t, dir: t.TempDir(), files: files}
	var src []Source
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := filepath.Join(d.dir, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			t.Fatal(err)
		}
		src = append(src, Source{Name: n, Data: bytes.NewReader(files[n]), Size: int64(len(files[n])), Mode: 0o644})
	}
	out, err := os.Create(filepath.Join(d.dir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := Create(out, src, opts...); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *diskSet) path(name string) string { return filepath.Join(d.dir, name) }

func (d *diskSet) write(name string, b []byte) {
	if err := os.WriteFile(d.path(name), b, 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// repair checks the set and repairs it, returning what was done.
func (d *diskSet) repair(opt RepairOptions) ([]Done, error) {
	d.t.Helper()
	s, err := OpenSet(d.path("m"), "")
	if err != nil {
		d.t.Fatal(err)
	}
	defer s.Close()
	sts, err := s.Check(context.Background(), nil)
	if err != nil {
		d.t.Fatal(err)
	}
	return s.Repair(context.Background(), sts, opt)
}

// same says whether the file at name holds its original bytes.
func (d *diskSet) same(name string) bool {
	b, err := os.ReadFile(d.path(name))
	return err == nil && bytes.Equal(b, d.files[name])
}

// entries lists the directory's names, sorted.
func (d *diskSet) entries(dir string) []string {
	es, _ := os.ReadDir(filepath.Join(d.dir, dir))
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// A file shorter than a segment, with other bytes, is not another's to
// overwrite: nothing of it could be compared, and its size differs.
func TestShortForeignFileLeftAlone(t *testing.T) {
	d := newDiskSet(t, map[string][]byte{"big": randomData(200_000, 1), "notes.txt": randomData(20_000, 2)})
	d.write("notes.txt", []byte("completely new notes\n"))
	done, err := d.repair(RepairOptions{})
	if err == nil || !strings.Contains(done[1].LeftAlone, "-force") {
		t.Errorf("repair: %v, %+v", err, done[1])
	}
	if b, _ := os.ReadFile(d.path("notes.txt")); string(b) != "completely new notes\n" {
		t.Error("the new notes were overwritten")
	}
}

// An empty file of the manifest matches no bytes: a set whose only
// "match" is an empty segment is not the manifest's.
func TestEmptySegmentIsNoEvidence(t *testing.T) {
	d := newDiskSet(t, map[string][]byte{"a": randomData(5000, 1), "__init__.py": nil}, Redundancy(100))
	d.write("a", randomData(5000, 9))
	d.write("__init__.py", []byte("print('hi')\n"))
	_, err := d.repair(RepairOptions{})
	if !errors.Is(err, ErrNotThisSet) {
		t.Errorf("repair: %v", err)
	}
	if b, _ := os.ReadFile(d.path("__init__.py")); string(b) != "print('hi')\n" {
		t.Error("__init__.py was emptied")
	}
}

// A repair that stops before it writes in place leaves nothing it made:
// neither the files made anew, nor their directories.
func TestApplyCleansUp(t *testing.T) {
	d := newDiskSet(t, map[string][]byte{"a": randomData(3000, 1), "sub/deeper/b": randomData(3000, 2), "c": randomData(30_000, 3)}, Redundancy(30))
	os.Remove(d.path("a"))
	os.RemoveAll(d.path("sub"))
	testHookApply = func() error { return errors.New("disk full") }
	defer func() { testHookApply = nil }()
	if _, err := d.repair(RepairOptions{}); err == nil || err.Error() != "disk full" {
		t.Fatalf("repair: %v", err)
	}
	if got := d.entries("."); !slices.Equal(got, []string{"c", "m"}) {
		t.Errorf("left in the directory: %v", got)
	}
}

// A file with bytes inserted, whose name is as long as names go, is laid
// out anew beside itself (the temporary name is short), and keeps its
// mode bits and owner.
func TestRelayLongNameModeAndOwner(t *testing.T) {
	long := strings.Repeat("n", 250)
	data := randomData(20_000, 4)
	d := newDiskSet(t, map[string][]byte{long: data})
	d.write(long, append([]byte("XY"), data...))
	root := os.Getuid() == 0
	if root {
		os.Chown(d.path(long), 65534, 65534)
	}
	os.Chmod(d.path(long), 0o751|fs.ModeSetgid)
	done, err := d.repair(RepairOptions{})
	if err != nil || done[0].Moved == 0 || done[0].Owner != "" {
		t.Fatalf("repair: %v %+v", err, done[0])
	}
	if !d.same(long) {
		t.Error("not restored")
	}
	fi, _ := os.Stat(d.path(long))
	if fi.Mode()&(fs.ModePerm|fs.ModeSetgid) != 0o751|fs.ModeSetgid {
		t.Errorf("mode %v", fi.Mode())
	}
	if uid, gid, ok := fileOwner(fi); root && ok && (uid != 65534 || gid != 65534) {
		t.Errorf("owner %d:%d", uid, gid)
	}
	if got := d.entries("."); len(got) != 2 {
		t.Errorf("left in the directory: %v", got)
	}
}

// A mode of 0 kept in a version 3 manifest is a mode, not "unknown".
func TestModeZeroKept(t *testing.T) {
	dir := t.TempDir()
	out, _ := os.Create(filepath.Join(dir, "m"))
	data := randomData(3000, 1)
	if _, err := Create(out, []Source{{Name: "locked", Data: bytes.NewReader(data), Size: 3000, Mode: 0}, {Name: "pad", Data: bytes.NewReader(data), Size: 3000, Mode: 0o644}}, Redundancy(100)); err != nil {
		t.Fatal(err)
	}
	out.Close()
	os.WriteFile(filepath.Join(dir, "pad"), data, 0o644)
	s, _ := OpenSet(filepath.Join(dir, "m"), "")
	defer s.Close()
	sts, _ := s.Check(context.Background(), nil)
	if done, err := s.Repair(context.Background(), sts, RepairOptions{}); err != nil || !done[0].Created {
		t.Fatalf("%v %+v", err, done)
	}
	if fi, err := os.Stat(filepath.Join(dir, "locked")); err != nil || fi.Mode().Perm() != 0 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
}

// A file with other hard links is left alone, but its intact segments
// still serve the parity: the other files are repaired.
func TestHardLinkedFileStillServes(t *testing.T) {
	d := newDiskSet(t, map[string][]byte{"big": randomData(2<<20, 1), "small": randomData(9000, 2)}, Recovery(2))
	d.write("big", corrupt(d.files["big"], 2048, []int{100}, 1))
	d.write("small", corrupt(d.files["small"], 2048, []int{1}, 2))
	if err := os.Link(d.path("big"), filepath.Join(t.TempDir(), "elsewhere")); err != nil {
		t.Skip("no hard links here:", err)
	}
	done, err := d.repair(RepairOptions{})
	if err != nil || !strings.Contains(done[0].LeftAlone, "hard links") || done[1].Rebuilt != 1 {
		t.Fatalf("repair: %v %+v", err, done)
	}
	if !d.same("small") || d.same("big") {
		t.Error("small not repaired, or big written")
	}
}

// A repair that stops (a rebuilt segment does not check: here the parity
// of its last stripe was forged, checksums and all) says what it wrote
// before: every segment of the stripes before, correct.
func TestStoppedRepairSaysWhatItWrote(t *testing.T) {
	data := randomData(70_000*64, 6)
	d := newDiskSet(t, map[string][]byte{"f": data}, Segment(64), PerStripe(2))
	mf, _ := os.ReadFile(d.path("m"))
	m, _ := Open(bytes.NewReader(mf), int64(len(mf)))
	if m.Stripes != 2 {
		t.Fatalf("%d stripes", m.Stripes)
	}
	for k := range m.Parity { // stripe 1's parity, forged
		off, n := m.ParityRange(1, k)
		for x := off; x < off+n; x++ {
			mf[x] ^= 0x5a
		}
	}
	for s := range m.Stripes {
		for k := range m.Parity {
			off, _ := m.ParityRange(s, k)
			for c := range m.chunks() {
				lo, hi := m.chunkRange(c)
				m.paritySums[(s*m.Parity+k)*m.chunks()+c] = xxh3Sum(mf[off+int64(lo) : off+int64(hi)])
			}
		}
	}
	main := m.encodeMain()
	for _, at := range m.copies {
		copy(mf[at:], main)
	}
	os.WriteFile(d.path("m"), mf, 0o644)
	d.write("f", data[:len(data)-64*3]) // 3 segments cut: 69998 in stripe 0, 69997 and 69999 in stripe 1
	_, err := d.repair(RepairOptions{})
	var stopped *StoppedError
	if !errors.As(err, &stopped) || !errors.Is(err, ErrRepairCheck) || stopped.Written[0] != 1 {
		t.Fatalf("repair: %v (%v)", err, stopped.Written)
	}
	got, _ := os.ReadFile(d.path("f"))
	if !bytes.Equal(got[len(data)-128:len(data)-64], data[len(data)-128:len(data)-64]) {
		t.Error("what it wrote is not the original")
	}
}

// Missing files found renamed, many in one directory, are each copied
// back from their own.
func TestManyRenamed(t *testing.T) {
	files := map[string][]byte{}
	for k := range 40 {
		files["f-"+string(rune('a'+k%26))+strings.Repeat("x", k/26)] = randomData(1000+k%3, uint64(k))
	}
	d := newDiskSet(t, files, Redundancy(5))
	for n := range files {
		os.Rename(d.path(n), d.path(n+".old"))
	}
	done, err := d.repair(RepairOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, dn := range done {
		if dn.CopiedFrom == "" {
			t.Errorf("file %d: %+v", i, dn)
		}
	}
	for n := range files {
		if !d.same(n) {
			t.Errorf("%s not restored", n)
		}
	}
}

func xxh3Sum(b []byte) uint64 { return xxh3.Hash(b) }

// A name that changes while its file is laid out anew is not clobbered:
// the user's new version stays, and the repaired copy is kept beside it
// and named. A repaired copy swapped for a link is not put in place.
func TestPlaceNeverClobbers(t *testing.T) {
	data := randomData(20_000, 4)
	for _, race := range []string{"the file replaced", "the copy replaced by a link"} {
		d := newDiskSet(t, map[string][]byte{"d": data})
		d.write("d", append([]byte("XY"), data...))
		testHookPlace = func() {
			switch race {
			case "the file replaced":
				os.Remove(d.path("d"))
				os.WriteFile(d.path("d"), []byte("the user's new version"), 0o644)
			default:
				for _, n := range d.entries(".") {
					if strings.HasPrefix(n, tempPrefix) {
						os.Remove(d.path(n))
						os.Symlink("/etc/passwd", d.path(n))
					}
				}
			}
		}
		_, err := d.repair(RepairOptions{})
		testHookPlace = nil
		if !errors.Is(err, errChanged) {
			t.Errorf("%s: %v", race, err)
		}
		fi, lerr := os.Lstat(d.path("d"))
		if lerr != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: d is now %v (%v)", race, fi.Mode(), lerr)
		}
		b, _ := os.ReadFile(d.path("d"))
		switch race {
		case "the file replaced":
			if string(b) != "the user's new version" || err == nil || !strings.Contains(err.Error(), "the repaired file is") {
				t.Errorf("%s: d holds %d bytes; %v", race, len(b), err)
			}
		default:
			if !bytes.Equal(b, append([]byte("XY"), data...)) {
				t.Errorf("%s: d was changed", race)
			}
		}
	}
}

// A file whose root differs, where the manifest lost the hashes that
// would say where, cannot be repaired: nothing could check a rebuild.
func TestRootMismatchNotRepairable(t *testing.T) {
	data := randomData(100_000, 8)
	m, mf := makeOne(t, data, Redundancy(10))
	// Both copies of every leaf hash damaged, the checksums left as they
	// were: the blocks are damaged, their hashes lost.
	for j := range m.Files[0].Segments {
		a, b := m.leafAt(0, j)
		mf.b[m.nodesAt+a] ^= 1
		mf.b[m.leavesAt+b] ^= 1
	}
	lost, _ := Open(mf, int64(len(mf.b)))
	bad := corrupt(data, 2048, []int{30}, 1)
	rep, _ := lost.Check(context.Background(), 0, &memFile{bad}, int64(len(bad)), nil)
	if !rep.RootChecked || rep.RootMatches {
		t.Fatalf("%+v", rep)
	}
	if err := lost.Plan([]*Report{rep}); !errors.Is(err, ErrRepairCheck) {
		t.Errorf("plan: %v", err)
	}
}

// A hard-linked file left alone, with bytes inserted: its moved segments
// are not where it is read, so they count as lost to the others, and the
// other files are still repaired right.
func TestHardLinkedMovedFile(t *testing.T) {
	d := newDiskSet(t, map[string][]byte{"g": randomData(80_000, 1), "small": randomData(9000, 2)}, Redundancy(100))
	d.write("g", append([]byte("inserted"), d.files["g"]...))
	d.write("small", corrupt(d.files["small"], 2048, []int{1}, 2))
	if err := os.Link(d.path("g"), filepath.Join(t.TempDir(), "elsewhere")); err != nil {
		t.Skip("no hard links here:", err)
	}
	done, err := d.repair(RepairOptions{})
	if err != nil || done[0].LeftAlone == "" || !d.same("small") {
		t.Fatalf("repair: %v %+v", err, done)
	}
}
