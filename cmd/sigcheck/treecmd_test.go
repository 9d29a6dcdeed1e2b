package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenFile writes golden.c's test data (byte k is the top byte of the
// 32-bit product k·2654435761), whose roots tree/testdata lists.
func goldenFile(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(uint32(k) * 2654435761 >> 24)
	}
	path := filepath.Join(t.TempDir(), "golden.bin")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTreeCommand(t *testing.T) {
	f := goldenFile(t, 1000003)
	// Roots from tree/testdata/golden_roots.txt (an independent C program
	// on libxxhash).
	for seg, want := range map[string]string{"2048": "22944eda3c88814a", "64": "c7afd39f09769e6b"} {
		o, e, code := sigcheck(t, "tree", "-seg", seg, f)
		if code != 0 || o != want+"  "+f+"\n" {
			t.Errorf("-seg %s: exit %d %q %q", seg, code, o, e)
		}
	}
	o, _, _ := sigcheck(t, "tree", goldenFile(t, 65536))
	if !strings.HasPrefix(o, "155822c2c6229b3f  ") {
		t.Errorf("golden root: %q", o)
	}
	o, _, _ = sigcheck(t, "tree", "-seg", "1000", "-json", goldenFile(t, 65536))
	var got map[string]any
	if err := json.Unmarshal([]byte(o), &got); err != nil || got["root"] != "2c013fda4e40483d" || got["segments"] != 66.0 {
		t.Errorf("json: %q", o)
	}
	o, _, _ = sigcheck(t, "tree", "-hash", "xxh3-128", f)
	if len(strings.Fields(o)[0]) != 32 {
		t.Errorf("xxh3-128 root: %q", o)
	}
	for _, args := range [][]string{{"tree"}, {"tree", "-seg", "0", f}, {"tree", filepath.Join(t.TempDir(), "missing")}, {"tree", t.TempDir()}, {"tree", "-hash", "md5", f}} {
		if _, e, code := sigcheck(t, args...); code != exitUsage || e == "" {
			t.Errorf("%v: exit %d, %q", args, code, e)
		}
	}
}

// flip corrupts one byte at each offset of a file.
func flip(t *testing.T, path string, offsets ...int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, off := range offsets {
		b := make([]byte, 1)
		f.ReadAt(b, off)
		b[0] ^= 0x5a
		f.WriteAt(b, off)
	}
}

func TestManifestVerifyRepairCommands(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 300_000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(dir, "data.bin")
	os.WriteFile(path, data, 0o644)

	o, e, code := sigcheck(t, "manifest", "-seg", "1000", "-parity", "2", path)
	if code != 0 || !strings.Contains(o, "300 segments of 1000") || !strings.Contains(o, "wrote "+path+".sigcheck") {
		t.Fatalf("manifest: exit %d %q %q", code, o, e)
	}
	if o, _, code := sigcheck(t, "verify", path); code != 0 || !strings.Contains(o, "OK, all 300 segments") {
		t.Errorf("clean verify: exit %d %q", code, o)
	}
	// Segments 5, 6 (one run) and 280 (in the second stripe, of 254).
	flip(t, path, 5000, 6999, 280_500)
	o, _, code = sigcheck(t, "verify", path, path+".sigcheck")
	want := "3 of 300 segments corrupted:\n  bytes 5000-6999 (2000 bytes, segments 5-6)\n  bytes 280000-280999 (1000 bytes, segment 280)\n"
	if code != exitNegative || !strings.HasSuffix(o, want) {
		t.Errorf("verify: exit %d\n%s", code, o)
	}
	o, _, code = sigcheck(t, "verify", "-json", path)
	var v verdict
	if err := json.Unmarshal([]byte(o), &v); err != nil || code != exitNegative || v.OK || len(v.Corrupted) != 2 || v.Corrupted[1].Off != 280_000 {
		t.Errorf("verify -json: exit %d %q", code, o)
	}
	o, _, code = sigcheck(t, "repair", path)
	if code != 0 || !strings.Contains(o, "repaired 3 segments") {
		t.Errorf("repair: exit %d %q", code, o)
	}
	if got, _ := os.ReadFile(path); string(got) != string(data) {
		t.Fatal("the repaired file is not the original")
	}
	// Three corrupted segments in one stripe, parity 2: refused, unchanged.
	flip(t, path, 10, 1010, 2010)
	before, _ := os.ReadFile(path)
	o, _, code = sigcheck(t, "repair", path)
	if code != exitNegative || !strings.Contains(o, "cannot repair, the file is unchanged") {
		t.Errorf("too many faults: exit %d %q", code, o)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused repair changed the file")
	}

	// Truncated and extended files: never OK.
	os.WriteFile(path, data[:len(data)-1], 0o644)
	if o, _, code := sigcheck(t, "verify", path); code != exitNegative || !strings.Contains(o, "truncated") {
		t.Errorf("truncated: exit %d %q", code, o)
	}
	if o, _, code := sigcheck(t, "repair", path); code != exitNegative || !strings.Contains(o, "truncated") {
		t.Errorf("repair truncated: exit %d %q", code, o)
	}
	os.WriteFile(path, append(data, 0), 0o644)
	if o, _, code := sigcheck(t, "verify", path); code != exitNegative || !strings.Contains(o, "extended") {
		t.Errorf("extended: exit %d %q", code, o)
	}
	// The manifest of another file of the same size.
	other := filepath.Join(dir, "other.bin")
	os.WriteFile(other, make([]byte, len(data)), 0o644)
	if o, _, code := sigcheck(t, "verify", other, path+".sigcheck"); code != exitNegative || !strings.Contains(o, `made for "data.bin"`) {
		t.Errorf("another file: exit %d %q", code, o)
	}
	// A corrupt manifest, a missing one, a file that is not a manifest.
	m, _ := os.ReadFile(path + ".sigcheck")
	m[200] ^= 1
	os.WriteFile(path+".bad", m, 0o644)
	os.WriteFile(path, data, 0o644)
	for _, args := range [][]string{{"verify", path, path + ".bad"}, {"repair", path, path + ".bad"}, {"verify", path, path + ".none"}, {"verify", path, path}, {"verify"}, {"manifest", "-parity", "300", path}, {"manifest", "-seg", "-1", path}} {
		if o, e, code := sigcheck(t, args...); code != exitUsage || e == "" {
			t.Errorf("%v: exit %d %q %q", args, code, o, e)
		}
	}
	if _, e, _ := sigcheck(t, "verify", path, path+".bad"); !strings.Contains(e, "checksum mismatch") {
		t.Errorf("corrupt manifest: %q", e)
	}
	// A refused manifest leaves nothing behind.
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("directory holds %d files", len(entries))
	}
	// -o and -json.
	o, _, code = sigcheck(t, "manifest", "-o", filepath.Join(dir, "m"), "-json", path)
	var got map[string]any
	if err := json.Unmarshal([]byte(o), &got); err != nil || code != 0 || got["parity"] != 0.0 || got["manifest"] != filepath.Join(dir, "m") {
		t.Errorf("manifest -json: %q", o)
	}
	if o, _, code := sigcheck(t, "repair", path, filepath.Join(dir, "m")); code != 0 || !strings.Contains(o, "OK") {
		t.Errorf("repair of a clean file: exit %d %q", code, o)
	}
	flip(t, path, 0)
	if o, _, code := sigcheck(t, "repair", path, filepath.Join(dir, "m")); code != exitNegative || !strings.Contains(o, "no parity") {
		t.Errorf("repair without parity: exit %d %q", code, o)
	}
}
