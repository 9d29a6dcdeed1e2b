//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Item 2: a FIFO, a directory or a device in a file's place is a missing
// file: verify neither hangs nor gives up on the set, and repair rebuilds
// the other files and leaves it alone.
func TestFIFOAndDirectoryInAFilesPlace(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	randomFile(t, filepath.Join(set, "a.bin"), 3000, 1)
	b := randomFile(t, filepath.Join(set, "b.bin"), 3000, 2)
	randomFile(t, filepath.Join(set, "c.bin"), 3000, 3)
	if _, e, code := sigcheck(t, "manifest", "-parity", "5", set); code != 0 {
		t.Fatal(e)
	}
	os.Remove(filepath.Join(set, "a.bin"))
	if err := syscall.Mkfifo(filepath.Join(set, "a.bin"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	// Whoever hangs on the FIFO is let go when the test ends.
	t.Cleanup(func() {
		if f, err := os.OpenFile(filepath.Join(set, "a.bin"), os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	os.Remove(filepath.Join(set, "c.bin"))
	os.Mkdir(filepath.Join(set, "c.bin"), 0o755)
	flip(t, filepath.Join(set, "b.bin"), 10)

	o, e, code := within(t, 20*time.Second, "verify", set)
	if code != exitNegative || !strings.Contains(o, "a.bin: ") || !strings.Contains(o, "b.bin: 1 of 2 segments corrupted") {
		t.Errorf("verify with a FIFO and a directory: exit %d\n%s%s", code, o, e)
	}
	o, e, code = within(t, 20*time.Second, "repair", set)
	if code != exitNegative || !strings.Contains(o, "FIFO") || !strings.Contains(o, "directory") {
		t.Errorf("repair with a FIFO and a directory: exit %d\n%s%s", code, o, e)
	}
	same(t, filepath.Join(set, "b.bin"), b)
	if fi, err := os.Lstat(filepath.Join(set, "a.bin")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
}
