package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

func randomFile(t *testing.T, path string, n int, seed uint64) []byte {
	t.Helper()
	data := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 4))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func same(t *testing.T, path string, want []byte) {
	t.Helper()
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not the original (%d bytes, %v)", path, len(got), err)
	}
}

func TestManifestVerifyRepairCommands(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.bin")
	data := randomFile(t, path, 300_000, 3)

	o, e, code := sigcheck(t, "manifest", "-seg", "1000", "-parity", "3", path)
	if code != 0 || !strings.Contains(o, "300 segments of 1000") || !strings.Contains(o, "wrote "+path+".sigcheck") ||
		!strings.Contains(o, "parity 3 segments (1.0 %, 3.0 KiB, Leopard GF(2^16)): rebuilds any 3 lost segments") {
		t.Fatalf("manifest: exit %d %q %q", code, o, e)
	}
	if fi, err := os.Stat(path + ".sigcheck"); err != nil || fi.Mode().Perm() != 0o600 { // in the test's private directory
		t.Errorf("manifest mode %v (%v)", fi.Mode(), err)
	}
	if o, _, code := sigcheck(t, "verify", path); code != 0 || !strings.Contains(o, "OK, all 300 segments") {
		t.Errorf("clean verify: exit %d %q", code, o)
	}
	// Segments 5, 6 (one run) and 281.
	flip(t, path, 5000, 6999, 281_500)
	o, _, code = sigcheck(t, "verify", path, path+".sigcheck")
	want := "data.bin: 3 of 300 segments corrupted:\n  bytes 5000-6999 (2000 bytes, segments 5-6)\n  bytes 281000-281999 (1000 bytes, segment 281)\n"
	if code != exitNegative || !strings.Contains(o, want) || !strings.Contains(o, "repairable: the parity rebuilds the 3 lost segments") {
		t.Errorf("verify: exit %d\n%s", code, o)
	}
	o, _, code = sigcheck(t, "verify", "-json", path)
	var v struct {
		OK         bool `json:"ok"`
		Repairable bool `json:"repairable"`
		Files      []struct {
			Corrupted []struct {
				First  int   `json:"first_segment"`
				Offset int64 `json:"offset"`
			} `json:"corrupted"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(o), &v); err != nil || code != exitNegative || v.OK || !v.Repairable || len(v.Files) != 1 ||
		len(v.Files[0].Corrupted) != 2 || v.Files[0].Corrupted[1].Offset != 281_000 || strings.Contains(o, `"OK"`) || strings.Contains(o, `"Off"`) {
		t.Errorf("verify -json: exit %d %q", code, o)
	}
	o, _, code = sigcheck(t, "repair", path)
	if code != 0 || !strings.Contains(o, "repaired 3 segments") {
		t.Errorf("repair: exit %d %q", code, o)
	}
	same(t, path, data)
	// Four corrupted segments, parity 3: refused, unchanged.
	flip(t, path, 10, 2010, 4010, 100_000)
	before, _ := os.ReadFile(path)
	o, _, code = sigcheck(t, "repair", path)
	if code != exitNegative || !strings.Contains(o, "cannot repair, nothing was changed") || !strings.Contains(o, "stripe 0 lost 4") {
		t.Errorf("too many faults: exit %d %q", code, o)
	}
	same(t, path, before)
	os.WriteFile(path, data, 0o644)

	// The manifest of another file of the same size.
	other := filepath.Join(dir, "other.bin")
	randomFile(t, other, len(data), 9)
	if o, _, code := sigcheck(t, "verify", other, path+".sigcheck"); code != exitNegative || !strings.Contains(o, `made for "data.bin"`) {
		t.Errorf("another file: exit %d %q", code, o)
	}
	os.Remove(other)
	// A corrupt manifest beyond use, a missing one, a file that is not one.
	m, _ := os.ReadFile(path + ".sigcheck")
	bad := bytes.ReplaceAll(m, []byte("SIGCHKM3"), []byte("SIGCHKXX"))
	os.WriteFile(path+".bad", bad, 0o644)
	for _, args := range [][]string{{"verify", path, path + ".bad"}, {"repair", path, path + ".bad"}, {"verify", path, path + ".none"},
		{"verify", path, path}, {"verify"}, {"verify", "a", "b", "c"}, {"manifest", "-parity", "40000", path}, {"manifest", "-r", "101", path}, {"manifest", "-r", "5", "-c", "3", path}, {"manifest", "-m", "0", path}, {"repair", "-m", "-1", path}, {"manifest", "-seg", "-1", path}, {"verify", "-nope", path}} {
		if o, e, code := sigcheck(t, args...); code != exitUsage || e == "" || strings.Count(e, "\n") != 1 || strings.Contains(e, "tree:") {
			t.Errorf("%v: exit %d %q %q", args, code, o, e)
		}
	}
	os.Remove(path + ".bad")
	// A refused manifest leaves nothing behind.
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("directory holds %d files", len(entries))
	}
	// -o and -json; an -o that cannot be written is named as given.
	o, _, code = sigcheck(t, "manifest", "-o", filepath.Join(dir, "m"), "-json", path)
	var got map[string]any
	if err := json.Unmarshal([]byte(o), &got); err != nil || code != 0 || got["parity"] != 8.0 || got["manifest"] != filepath.Join(dir, "m") || got["version"] != 3.0 {
		t.Errorf("manifest -json: %q", o)
	}
	nowhere := filepath.Join(dir, "no", "such", "dir", "m")
	if _, e, code := sigcheck(t, "manifest", "-o", nowhere, path); code != exitUsage || !strings.HasPrefix(e, "sigcheck manifest: "+nowhere+": ") || strings.Contains(e, ".tmp") {
		t.Errorf("-o in a missing directory: %d %q", code, e)
	}
	if o, _, code := sigcheck(t, "repair", path, filepath.Join(dir, "m")); code != 0 || !strings.Contains(o, "OK") {
		t.Errorf("repair of a clean file: exit %d %q", code, o)
	}
	if o, e, code := sigcheck(t, "manifest", "-r", "0", "-o", filepath.Join(dir, "m"), path); code != 0 || !strings.Contains(o, "no parity") {
		t.Errorf("manifest -r 0: exit %d %q %q", code, o, e)
	}
	flip(t, path, 0)
	if o, _, code := sigcheck(t, "repair", path, filepath.Join(dir, "m")); code != exitNegative || !strings.Contains(o, "no parity") {
		t.Errorf("repair without parity: exit %d %q", code, o)
	}
}

// The done-means walk: a file truncated, then extended, repaired each time
// from a manifest with flipped bytes.
func TestRepairTruncatedExtendedFromDamagedManifest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bin")
	data := randomFile(t, path, 1_000_000, 7)
	if _, e, code := sigcheck(t, "manifest", "-parity", "8", path); code != 0 {
		t.Fatal(e)
	}
	mpath := path + ".sigcheck"
	fi, _ := os.Stat(mpath)
	for _, off := range []int64{3, 200, fi.Size() / 3, fi.Size() / 2, fi.Size() - 5} {
		flip(t, mpath, off)
	}
	os.WriteFile(path, data[:990_000], 0o644)
	o, _, code := sigcheck(t, "verify", path)
	if code != exitNegative || !strings.Contains(o, "truncated: 10000 bytes missing from offset 990000") || !strings.Contains(o, "damaged, still usable") {
		t.Errorf("verify truncated: %d %q", code, o)
	}
	if o, _, code := sigcheck(t, "repair", path); code != 0 || !strings.Contains(o, "repaired 6 segments") {
		t.Errorf("repair truncated: %d %q", code, o)
	}
	same(t, path, data)
	os.WriteFile(path, append(slices.Clone(data), "appended"...), 0o644)
	o, _, code = sigcheck(t, "verify", path)
	if code != exitNegative || !strings.Contains(o, "extended: 8 bytes appended at offset 1000000") {
		t.Errorf("verify extended: %d %q", code, o)
	}
	if o, _, code := sigcheck(t, "repair", path); code != 0 {
		t.Errorf("repair extended: %d %q", code, o)
	}
	same(t, path, data)
	// Damage at the parity's limit, less the two rows damaged in the
	// manifest: 6 segments, with the manifest still damaged.
	for k := range int64(6) {
		flip(t, path, 2*k*2048+k%2*1500+7)
	}
	if o, _, code := sigcheck(t, "repair", path); code != 0 || !strings.Contains(o, "repaired 6 segments") {
		t.Errorf("repair at the limit: %d %q", code, o)
	}
	same(t, path, data)
}

// A directory as one recovery set: a renamed file, a missing one and a
// damaged one, restored from parity shared across them.
func TestManifestOfADirectory(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "set")
	a := randomFile(t, filepath.Join(set, "a.bin"), 200_000, 1)
	b := randomFile(t, filepath.Join(set, "sub", "b.bin"), 30_000, 2)
	c := randomFile(t, filepath.Join(set, "c.bin"), 50_000, 3)
	o, e, code := sigcheck(t, "tree", "manifest", "-parity", "30", set)
	if code != 0 || !strings.Contains(o, "wrote "+set+".sigcheck") || strings.Count(o, "root") != 3 {
		t.Fatalf("manifest DIR: %d %q %q", code, o, e)
	}
	os.Rename(filepath.Join(set, "a.bin"), filepath.Join(set, "renamed"))
	os.Remove(filepath.Join(set, "sub", "b.bin"))
	flip(t, filepath.Join(set, "c.bin"), 100, 40_000)
	o, _, code = sigcheck(t, "verify", set)
	for _, w := range []string{"a.bin: missing (200000 bytes), found as " + filepath.Join(set, "renamed"), "b.bin: missing", "c.bin: 2 of 25 segments corrupted", "repairable: the parity rebuilds the 17 lost segments"} {
		if !strings.Contains(o, w) {
			t.Errorf("verify DIR: %d, no %q in\n%s", code, w, o)
		}
	}
	o, _, code = sigcheck(t, "repair", set+".sigcheck")
	if code != 0 || !strings.Contains(o, "found as "+filepath.Join(set, "renamed")+": copied from it") {
		t.Errorf("repair DIR: %d\n%s", code, o)
	}
	same(t, filepath.Join(set, "a.bin"), a)
	same(t, filepath.Join(set, "sub", "b.bin"), b)
	same(t, filepath.Join(set, "c.bin"), c)
	if o, _, code := sigcheck(t, "verify", "-json", set); code != 0 || strings.Count(o, `"ok":true`) != 4 {
		t.Errorf("verify after repair: %d %q", code, o)
	}
	same(t, filepath.Join(set, "renamed"), a)
	os.Remove(filepath.Join(set, "renamed"))
	// "." is the directory it names: its manifest goes beside it.
	t.Chdir(set)
	os.Remove(filepath.Join(dir, "set.sigcheck"))
	if o, e, code := sigcheck(t, "manifest", "."); code != 0 || !strings.Contains(o, "wrote "+filepath.Join(dir, "set.sigcheck")) {
		t.Errorf("manifest .: %d %q %q", code, o, e)
	}
	if o, _, code := sigcheck(t, "verify", "."); code != 0 || strings.Count(o, "OK") != 3 {
		t.Errorf("verify .: %d %q", code, o)
	}
	// Several files name themselves relative to the manifest; one outside
	// its directory is refused.
	if _, e, code := sigcheck(t, "manifest", "-o", filepath.Join(set, "m"), filepath.Join(set, "c.bin"), filepath.Join(dir, "set.sigcheck")); code != exitUsage || !strings.Contains(e, "is not under") {
		t.Errorf("a file outside: %d %q", code, e)
	}
}

func TestTreeStdin(t *testing.T) {
	f := goldenFile(t, 1000003)
	data, _ := os.ReadFile(f)
	var o, e bytes.Buffer
	if code := runIO([]string{"tree", "-seg", "64", "-"}, bytes.NewReader(data), &o, &e); code != 0 || o.String() != "c7afd39f09769e6b  -\n" {
		t.Errorf("tree -: %d %q %q", code, o.String(), e.String())
	}
}
