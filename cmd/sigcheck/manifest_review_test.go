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
	// The test's directories are 0700: open them, as a shared place is.
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
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

// What a name can hold that a terminal would obey or draw misleadingly is
// escaped; the rest is printed as it is.
func TestEsc(t *testing.T) {
	for in, want := range map[string]string{
		"plain name.bin":    "plain name.bin",
		"été":               "été",
		`a\b`:               `a\\b`,
		"a\nb\rc":           `a\nb\rc`,
		"x\x1b[2Jy\x7f":     `x\x1b[2Jy\x7f`,
		"csi\u009b2J":       `csi\u{009b}2J`,
		"evil\u202etxt.exe": `evil\u{202e}txt.exe`,
		"latin1 \xe9t\xe9":  `latin1 \xe9t\xe9`,
		"tab\there":         `tab\x09here`,
	} {
		if got := esc(in); got != want {
			t.Errorf("esc(%q) = %q, want %q", in, got, want)
		}
		if (escPrefix(in) == `\`) != (in != want) {
			t.Errorf("escPrefix(%q) = %q", in, escPrefix(in))
		}
	}
}

// verify says what a killed repair left, and says a set is repairable
// only in part when repair would leave files alone.
func TestVerifyLeftoversAndPartRepairs(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	randomFile(t, filepath.Join(set, "a"), 30_000, 1)
	randomFile(t, filepath.Join(set, "b"), 30_000, 2)
	if _, e, code := sigcheck(t, "manifest", "-r", "60", set); code != 0 {
		t.Fatal(e)
	}
	os.WriteFile(filepath.Join(set, ".sigcheck-tmp-0123456789ab"), []byte("half a file"), 0o600)
	os.Remove(filepath.Join(set, "b"))
	os.Symlink("a", filepath.Join(set, "b"))
	flip(t, filepath.Join(set, "a"), 10)
	o, _, code := sigcheck(t, "verify", set)
	if code != exitNegative || !strings.Contains(o, ".sigcheck-tmp-0123456789ab: a temporary file of a repair that was killed") ||
		!strings.Contains(o, "repairable in part") {
		t.Errorf("verify: %d %q", code, o)
	}
}

// A file in a private directory, its manifest written elsewhere: the
// manifest is as private as the file.
func TestManifestModeFollowsDirectoriesAbove(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "priv", "key"), []byte("a private key"), 0o644)
	os.Chmod(filepath.Join(dir, "priv"), 0o700)
	os.Mkdir(filepath.Join(dir, "pub"), 0o755)
	m := filepath.Join(dir, "pub", "key.sigcheck")
	if _, e, code := sigcheck(t, "manifest", "-o", m, filepath.Join(dir, "priv", "key")); code != 0 {
		t.Fatal(e)
	}
	if fi, err := os.Stat(m); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("manifest %v (%v), want 0600", fi.Mode(), err)
	}
}
