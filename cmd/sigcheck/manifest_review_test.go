package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Findings of a review of the manifest commands (issue 28), each held here.

// A manifest's parity rebuilds its files: it is readable by no one the
// files are not.
func TestManifestModeFollowsTheFiles(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		dirMode, fileMode, want os.FileMode
	}{
		{0o755, 0o644, 0o644},
		{0o755, 0o600, 0o600},
		{0o700, 0o644, 0o600}, // a private directory
		{0o750, 0o640, 0o640},
		{0o755, 0o640, 0o640},
	} {
		set := filepath.Join(dir, c.dirMode.String()+c.fileMode.String())
		writeFile(t, filepath.Join(set, "sub", "f"), []byte("a secret worth keeping"), c.fileMode)
		writeFile(t, filepath.Join(set, "g"), []byte("another"), 0o644)
		os.Chmod(filepath.Join(set, "sub"), c.dirMode)
		if _, e, code := sigcheck(t, "manifest", set); code != 0 {
			t.Fatal(e)
		}
		if fi, err := os.Stat(set + ".sigcheck"); err != nil || fi.Mode().Perm() != c.want {
			t.Errorf("directory %v, file %v: manifest %v (%v), want %v", c.dirMode, c.fileMode, fi.Mode(), err, c.want)
		}
	}
}

// A file swapped for a link to another between the walk and the read is
// refused, not read (a race a hostile user could run against root).
func TestManifestRefusesASwappedFile(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "d")
	writeFile(t, filepath.Join(set, "a"), []byte("mine"), 0o644)
	writeFile(t, filepath.Join(dir, "secret"), []byte("root's secret"), 0o600)
	ins, _, err := collect([]string{set}, set+".sigcheck")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(set, "a"))
	os.Symlink(filepath.Join(dir, "secret"), filepath.Join(set, "a"))
	out, _ := os.Create(filepath.Join(dir, "m"))
	defer out.Close()
	if _, err := makeManifest(&env{stderr: os.Stderr}, out, ins, nil); err == nil || !strings.Contains(err.Error(), "changed while the manifest was being made") {
		t.Errorf("a swapped file: %v", err)
	}
}

// verify and repair follow no link, so manifest refuses to make a set
// through one: named, it is refused in one line.
func TestManifestRefusesSymlinkArguments(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "real", "f"), []byte("data"), 0o644)
	os.Symlink("real", filepath.Join(dir, "link"))
	os.Symlink("real/f", filepath.Join(dir, "flink"))
	for _, arg := range []string{filepath.Join(dir, "link"), filepath.Join(dir, "link") + "/", filepath.Join(dir, "flink")} {
		if _, e, code := sigcheck(t, "manifest", arg); code != exitUsage || !strings.Contains(e, "is a symlink") || strings.Count(e, "\n") != 1 {
			t.Errorf("manifest %s: exit %d %q", arg, code, e)
		}
	}
}

// Control characters in names are escaped in reports and in errors: no
// name moves a terminal's cursor or makes a line of its own.
func TestControlCharactersEscaped(t *testing.T) {
	dir := t.TempDir()
	evil := filepath.Join(dir, "x\x1b[2Jy")
	randomFile(t, filepath.Join(evil, "f"), 5000, 1)
	if _, e, code := sigcheck(t, "manifest", filepath.Join(evil, "f")); code != 0 {
		t.Fatal(e)
	}
	flip(t, filepath.Join(evil, "f"), 10)
	o, _, _ := sigcheck(t, "verify", filepath.Join(evil, "f"))
	if strings.Contains(o, "\x1b") || !strings.Contains(o, `x\x1b[2Jy`) {
		t.Errorf("verify: %q", o)
	}
	_, e, code := sigcheck(t, "verify", filepath.Join(evil, "none\nsigcheck verify: OK"))
	if code != exitUsage || strings.Count(e, "\n") != 1 || strings.Contains(e, "\x1b") {
		t.Errorf("an error naming the file: %q", e)
	}
}

// A backslash is a name's own on this system: such a file is kept and
// checked, its name escaped in the report.
func TestBackslashInAName(t *testing.T) {
	if os.PathSeparator == '\\' {
		t.Skip("a separator here")
	}
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	randomFile(t, filepath.Join(set, `a\b`), 3000, 1)
	if _, e, code := sigcheck(t, "manifest", set); code != 0 {
		t.Fatal(e)
	}
	if o, _, code := sigcheck(t, "verify", set); code != 0 || !strings.HasPrefix(o, `\`) || !strings.Contains(o, `a\\b: OK`) {
		t.Errorf("verify: %d %q", code, o)
	}
}

// A manifest that lost its hashes (cut after its main block) does not
// call a damaged file OK: the file is checked whole against its root.
func TestTruncatedManifestNoFalseOK(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	randomFile(t, f, 100_000, 1)
	if _, e, code := sigcheck(t, "manifest", f); code != 0 {
		t.Fatal(e)
	}
	os.Truncate(f+".sigcheck", 700)
	if o, _, code := sigcheck(t, "verify", f); code != 0 || !strings.Contains(o, "checked by the file's root") {
		t.Errorf("an intact file: %d %q", code, o)
	}
	flip(t, f, 50_000)
	if o, _, code := sigcheck(t, "verify", f); code != exitNegative || !strings.Contains(o, "root differs") {
		t.Errorf("a damaged file: %d %q", code, o)
	}
}

// Bytes inserted and as many removed: the size is the same, and verify
// finds what repair finds (both look for moved segments when the parity
// falls short), and says it is repairable.
func TestVerifyAgreesWithRepair(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	data := randomFile(t, f, 200_000, 1)
	if _, e, code := sigcheck(t, "manifest", "-c", "3", f); code != 0 {
		t.Fatal(e)
	}
	b := slices.Concat([]byte("12345"), data[:100_000], data[100_005:])
	os.WriteFile(f, b, 0o644)
	o, _, code := sigcheck(t, "verify", f)
	if code != exitNegative || !strings.Contains(o, "repairable: the parity rebuilds the") || strings.Contains(o, "not repairable") {
		t.Errorf("verify: %d %q", code, o)
	}
	if o, _, code := sigcheck(t, "repair", f); code != 0 || !strings.Contains(o, "laid out anew") {
		t.Errorf("repair: %d %q", code, o)
	}
	same(t, f, data)
}
