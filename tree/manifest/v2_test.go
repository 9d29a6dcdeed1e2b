package manifest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// copyTree copies testdata's manifests of version 2 and their files (made
// by sigcheck before version 3, with -seg 1024 -parity 3 and -seg 64
// -parity 2) into a directory of the test's.
func copyTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata", p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func checkSet(t *testing.T, s *Set) []*Status {
	t.Helper()
	sts, err := s.Check(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sts
}

// A manifest of version 2 still opens, verifies and repairs, with its own
// code (Cauchy over GF(2^8), stripes of up to 256 segments).
func TestVersion2Manifests(t *testing.T) {
	dir := copyTree(t)
	orig, _ := os.ReadFile(filepath.Join(dir, "v2", "a.bin"))
	s, err := OpenSet(filepath.Join(dir, "v2.sigcheck"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Version != 2 || s.Code() != "Cauchy GF(2^8)" || s.Parity != 3 || s.Stripes != 1 || len(s.Files) != 3 || s.Files[0].Mode != 0 {
		t.Fatalf("version %d, %s, parity %d×%d, %d files", s.Version, s.Code(), s.Parity, s.Stripes, len(s.Files))
	}
	if sts := checkSet(t, s); !OK(sts) {
		t.Fatalf("a clean set of version 2: %+v", sts[0].Report)
	}
	// Three segments lost, one of them a whole file: rebuilt.
	a := filepath.Join(dir, "v2", "a.bin")
	damaged := corrupt(orig, 1024, []int{3, 17}, 1)
	os.WriteFile(a, damaged, 0o644)
	os.Remove(filepath.Join(dir, "v2", "empty"))
	done, err := s.Repair(context.Background(), checkSet(t, s), RepairOptions{})
	if err != nil || done[0].Rebuilt != 2 || !done[1].Created || done[1].Mode != 0o644 {
		t.Fatalf("repair: %v %+v", err, done)
	}
	if sts := checkSet(t, s); !OK(sts) {
		t.Fatalf("after repair: %+v", sts[0].Report)
	}
	// Four: too many for its parity, and nothing changed.
	os.WriteFile(a, corrupt(orig, 1024, []int{1, 2, 3, 4}, 2), 0o644)
	before, _ := os.ReadFile(a)
	if _, err := s.Repair(context.Background(), checkSet(t, s), RepairOptions{}); !errors.Is(err, ErrTooManyFaults) {
		t.Errorf("four lost: %v", err)
	}
	if after, _ := os.ReadFile(a); string(after) != string(before) {
		t.Error("a refused repair changed the file")
	}
	os.WriteFile(a, orig, 0o644)

	// Two stripes of 157 and 156 segments, interleaved: two lost in each.
	s2, err := OpenSet(filepath.Join(dir, "v2-stripes.sigcheck"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Stripes != 2 || s2.Width != 157 {
		t.Fatalf("%d stripes of %d", s2.Stripes, s2.Width)
	}
	os.WriteFile(a, corrupt(orig, 64, []int{10, 11, 12, 13}, 3), 0o644)
	if _, err := s2.Repair(context.Background(), checkSet(t, s2), RepairOptions{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(a); string(after) != string(orig) {
		t.Error("not restored")
	}
}
