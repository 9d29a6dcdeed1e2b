package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The safety items of issue 28, each reproduced from outside as the issue
// gives it: repair and verify never follow a symlink, never hang on a
// FIFO, never overwrite a file that no manifest matches, never move the
// user's files, keep modes, and print names that cannot fake a line.

// within runs sigcheck and fails the test if it has not returned in d:
// a command that blocks on a FIFO must not hang the suite.
func within(t *testing.T, d time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type result struct {
		o, e string
		code int
	}
	done := make(chan result, 1)
	go func() {
		var o, e bytes.Buffer
		c := run(args, &o, &e)
		done <- result{o.String(), e.String(), c}
	}()
	select {
	case r := <-done:
		return r.o, r.e, r.code
	case <-time.After(d):
		t.Fatalf("sigcheck %s: still running after %v", strings.Join(args, " "), d)
		return "", "", 0
	}
}

func writeFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Item 1: a symlink in the set that points out of it is neither written
// through by repair nor read through by verify; nor is a symlinked
// directory.
func TestRepairNeverFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	set, victim := filepath.Join(dir, "set"), filepath.Join(dir, "victim")
	attacker := bytes.Repeat([]byte("ATTACKER\n"), 300)
	writeFile(t, filepath.Join(set, "notes.txt"), attacker, 0o644)
	randomFile(t, filepath.Join(set, "pad"), 6000, 1)
	randomFile(t, filepath.Join(set, "sub", "b.bin"), 5000, 2)
	if _, e, code := sigcheck(t, "manifest", "-parity", "4", set); code != 0 {
		t.Fatal(e)
	}
	precious := bytes.Repeat([]byte("precious\n"), 1000)
	writeFile(t, filepath.Join(victim, "p.txt"), precious, 0o644)
	os.Remove(filepath.Join(set, "notes.txt"))
	if err := os.Symlink("../victim/p.txt", filepath.Join(set, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	// A directory of the set replaced by a link to another.
	os.RemoveAll(filepath.Join(set, "sub"))
	if err := os.Symlink("../victim", filepath.Join(set, "sub")); err != nil {
		t.Fatal(err)
	}

	o, _, code := within(t, 30*time.Second, "verify", set)
	if code != exitNegative || strings.Contains(o, "notes.txt: OK") || !strings.Contains(o, "symlink") {
		t.Errorf("verify through a symlink: exit %d\n%s", code, o)
	}
	o, _, code = within(t, 30*time.Second, "repair", set)
	if code == 0 {
		t.Errorf("repair with a symlink in the set: exit 0\n%s", o)
	}
	if got := readFile(t, filepath.Join(victim, "p.txt")); !bytes.Equal(got, precious) {
		t.Errorf("repair wrote through the symlink: victim/p.txt now %d bytes", len(got))
	}
	if _, err := os.Lstat(filepath.Join(victim, "b.bin")); err == nil {
		t.Errorf("repair created victim/b.bin through a symlinked directory\n%s", o)
	}
	if fi, err := os.Lstat(filepath.Join(set, "notes.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("repair replaced the user's symlink: %v %v", fi, err)
	}
	same(t, filepath.Join(set, "pad"), randomFile(t, filepath.Join(dir, "x"), 6000, 1))
}

// Item 3: a manifest of which nothing matches the file it is pointed at
// does not overwrite it, unless told to.
func TestRepairWithTheWrongManifestWritesNothing(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.bin")
	randomFile(t, a, 3000, 1)
	if _, e, code := sigcheck(t, "manifest", "-parity", "2", a); code != 0 {
		t.Fatal(e)
	}
	important := filepath.Join(dir, "important.bin")
	want := randomFile(t, important, 3500, 2)
	o, _, code := sigcheck(t, "repair", important, a+".sigcheck")
	if code != exitNegative || !strings.Contains(o, "-force") {
		t.Errorf("repair with another file's manifest: exit %d\n%s", code, o)
	}
	same(t, important, want)
	// Told to, it does.
	if o, _, code := sigcheck(t, "repair", "-force", important, a+".sigcheck"); code != 0 {
		t.Errorf("repair -force: exit %d\n%s", code, o)
	}
	same(t, important, readFile(t, a))
}

// Item 4: a missing file found under another name is copied back; the
// other file stays where it was.
func TestRepairCopiesARenamedFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.bin")
	data := randomFile(t, big, 100_000, 1)
	if _, e, code := sigcheck(t, "manifest", "-parity", "4", big); code != 0 {
		t.Fatal(e)
	}
	orig := filepath.Join(dir, "big.orig")
	if err := os.Rename(big, orig); err != nil {
		t.Fatal(err)
	}
	o, _, code := sigcheck(t, "repair", big)
	if code != 0 || !strings.Contains(o, "copied from") {
		t.Errorf("repair of a renamed file: exit %d\n%s", code, o)
	}
	same(t, big, data)
	same(t, orig, data)
}

// Item 5: a lost file comes back with its mode.
func TestRepairRestoresMode(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	secret := filepath.Join(set, "secret.key")
	writeFile(t, secret, bytes.Repeat([]byte("k"), 3000), 0o600)
	randomFile(t, filepath.Join(set, "pad"), 20_000, 1)
	if _, e, code := sigcheck(t, "manifest", "-parity", "4", set); code != 0 {
		t.Fatal(e)
	}
	os.Remove(secret)
	if o, _, code := sigcheck(t, "repair", set); code != 0 {
		t.Fatalf("repair: exit %d\n%s", code, o)
	}
	if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret.key came back as %v (%v), not 0600", fi.Mode(), err)
	}
}

// Item 7: names are escaped as checksum lines escape them, so that a
// newline in a name cannot fake a line of the report.
func TestVerifyEscapesNames(t *testing.T) {
	dir := t.TempDir()
	evil := filepath.Join(dir, "x\ndata.bin: OK, all 3 segments match m")
	path := filepath.Join(evil, "data.bin")
	randomFile(t, path, 6000, 1)
	if _, e, code := sigcheck(t, "manifest", "-parity", "2", path); code != 0 {
		t.Fatal(e)
	}
	flip(t, path, 10)
	o, _, code := sigcheck(t, "verify", path)
	if code != exitNegative {
		t.Errorf("verify: exit %d\n%s", code, o)
	}
	for _, line := range strings.Split(o, "\n") {
		if strings.HasPrefix(line, "data.bin: OK") {
			t.Errorf("a name faked a line: %q in\n%s", line, o)
		}
	}
	if !strings.Contains(o, `\n`) {
		t.Errorf("the newline is not escaped:\n%s", o)
	}
}

// Item 8: repair says what it did, bytes cut included.
func TestRepairSaysWhatItDid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bin")
	data := randomFile(t, path, 10_000, 1)
	if _, e, code := sigcheck(t, "manifest", "-parity", "2", path); code != 0 {
		t.Fatal(e)
	}
	os.WriteFile(path, append(bytes.Clone(data), "0123456789"...), 0o644)
	o, _, code := sigcheck(t, "repair", path)
	if code != 0 || !strings.Contains(o, "cut 10 appended bytes") {
		t.Errorf("repair of an extended file: exit %d\n%s", code, o)
	}
	same(t, path, data)
}
