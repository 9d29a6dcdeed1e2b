package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigcheck/sigcheck/csum"
)

func sigcheckIn(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = runIO(args, strings.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code
}

func TestCsumCommand(t *testing.T) {
	o, e, code := sigcheckIn(t, "123456789", "csum", "-alg", "crc32c")
	if code != 0 || o != "e3069283  -\n" {
		t.Fatalf("exit %d: %q %q", code, o, e)
	}
	o, _, _ = sigcheckIn(t, "", "csum", "-alg", "xxh3-128", "-")
	if o != "99aa06d3014798d86001c324468d497f  -\n" {
		t.Errorf("xxh3-128 of nothing: %q", o)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "nine")
	os.WriteFile(f, []byte("123456789"), 0o644)
	o, _, code = sigcheckIn(t, "", "csum", "-alg", "crc64", f, "-json")
	var got map[string]any
	if code != 0 || json.Unmarshal([]byte(o), &got) != nil || got["checksum"] != "995dc9bbdf1939fa" || got["bytes"] != 9.0 {
		t.Errorf("json: %q", o)
	}
	// Algorithms seeded with the length, streamed from a file of known size.
	for alg, want := range map[string]string{"murmur64a": "", "superfast": ""} {
		o1, _, _ := sigcheckIn(t, "", "csum", "-alg", alg, f)
		o2, _, _ := sigcheckIn(t, "123456789", "csum", "-alg", alg)
		if strings.Fields(o1)[0] != strings.Fields(o2)[0] || want != "" {
			t.Errorf("%s: file %q, stdin %q", alg, o1, o2)
		}
	}
	// Seeded with the length, from a pipe: held in memory, within a bound.
	defer func(m int64) { maxHeld = m }(maxHeld)
	maxHeld = 8
	if o, _, code := sigcheckIn(t, "12345678", "csum", "-alg", "murmur64a"); code != 0 || !strings.HasSuffix(o, "  -\n") {
		t.Errorf("8 bytes held: exit %d %q", code, o)
	}
	_, e, code = sigcheckIn(t, "123456789", "csum", "-alg", "superfast")
	if code != exitNegative || e != "sigcheck csum: -: superfast starts from the length, so input of unknown size is held in memory, and this is over 8 B: give a file instead\n" {
		t.Errorf("9 bytes over the bound: exit %d %q", code, e)
	}
	maxHeld = 256 << 20
	_, e, code = sigcheckIn(t, "", "csum", "-alg", "md5")
	if code != exitUsage || e != "sigcheck csum: -alg md5: unknown algorithm; known: "+strings.Join(csum.Names(), ", ")+" (sigcheck csum -h for help)\n" {
		t.Errorf("md5: %d %q", code, e)
	}
	// A file that cannot be read is reported; the others are still summed; exit 1.
	missing := filepath.Join(dir, "missing")
	o, e, code = sigcheckIn(t, "", "csum", "-alg", "crc32c", missing, f, dir)
	if code != exitNegative || o != "e3069283  "+f+"\n" ||
		e != "sigcheck csum: "+missing+": no such file or directory\nsigcheck csum: "+dir+": is a directory\n" {
		t.Errorf("missing file: exit %d, %q %q", code, o, e)
	}
	o, _, code = sigcheckIn(t, "", "csum", "-json", missing, f)
	rows := strings.Split(strings.TrimSpace(o), "\n")
	var row map[string]any
	if code != exitNegative || len(rows) != 2 || json.Unmarshal([]byte(rows[0]), &row) != nil ||
		row["error"] != "no such file or directory" || row["file"] != missing || row["checksum"] != nil {
		t.Errorf("missing file, -json: exit %d %q", code, o)
	}
}

// What sha256sum, b3sum and xxhsum print for "123456789" (coreutils 9.1,
// b3sum 1.2, xxhsum 0.8.1 -H0/-H1/-H2, and --tag -H3), sigcheck prints too.
func TestCsumPrintsWhatTheToolsPrint(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-alg", "sha256"}, "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225  -\n"},
		{[]string{"-alg", "sha256", "-tag"}, "SHA256 (-) = 15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225\n"},
		{[]string{"-alg", "blake3"}, "b7d65b48420d1033cb2595293263b6f72eabee20d55e699d0df1973b3c9deed1  -\n"},
		{[]string{"-alg", "xxh32"}, "937bad67  -\n"},
		{[]string{"-alg", "xxh64"}, "8cb841db40e6ae83  -\n"},
		{[]string{"-alg", "xxh128"}, "33119477ede5dcd5e9716427681d5860  -\n"},
		{[]string{"-alg", "xxh3-128", "-tag"}, "XXH128 (-) = 33119477ede5dcd5e9716427681d5860\n"},
		{[]string{}, "XXH3_72dcb18b67a17dff  -\n"},
		{[]string{"-tag"}, "XXH3 (-) = 72dcb18b67a17dff\n"},
		{[]string{"-alg", "crc32"}, "cbf43926  -\n"},
		{[]string{"-alg", "crc64-ecma"}, "6c40df5f0b497347  -\n"},
	} {
		o, e, code := sigcheckIn(t, "123456789", append([]string{"csum"}, c.args...)...)
		if code != 0 || o != c.want {
			t.Errorf("csum %v: exit %d, %q (want %q) %s", c.args, code, o, c.want, e)
		}
	}
}

func TestCsumListAndDetect(t *testing.T) {
	o, _, code := sigcheckIn(t, "", "csum", "-list", "-markdown")
	if code != 0 || !strings.HasPrefix(o, "| name | bits |") || strings.Count(o, "\n") != 21 ||
		!strings.Contains(o, "| crc64-xz | 64 |") || !strings.Contains(o, "| crc64, crc-64/xz, crc-64/go-ecma |") {
		t.Errorf("list:\n%s", o)
	}
	o, _, code = sigcheckIn(t, "", "csum", "-detect", "-trials", "300", "-size", "1024")
	if code != 0 || !strings.Contains(o, "never (0 %)") || !strings.Contains(o, "crc32c") {
		t.Errorf("detect:\n%s", o)
	}
	o, _, _ = sigcheckIn(t, "", "csum", "-detect", "-trials", "50", "-json")
	if n := strings.Count(o, "\n"); n != 19*4 {
		t.Errorf("%d JSON rows", n)
	}
	for _, bad := range [][]string{{"-size", "7"}, {"-trials", "0"}} {
		if _, _, code := sigcheckIn(t, "", append([]string{"csum", "-detect"}, bad...)...); code != exitUsage {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestBenchCsum(t *testing.T) {
	o, _, code := sigcheckIn(t, "", "bench", "csum", "-quick", "-sizes", "64,4K", "-algs", "xxh3,crc32c", "-json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	names := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["gbps"].(float64) <= 0 || (m["size"] != 64.0 && m["size"] != 4096.0) {
			t.Errorf("row %s", l)
		}
		names[m["algorithm"].(string)] = true
	}
	for _, n := range []string{"read", "copy", "xxh3", "crc32c", "copy+xxh3", "copy+crc32c"} {
		if !names[n] {
			t.Errorf("no %s row", n)
		}
	}
	svg := filepath.Join(t.TempDir(), "b.svg")
	o, _, code = sigcheckIn(t, "", "bench", "csum", "-quick", "-sizes", "64", "-algs", "sum", "-fused=false", "-csv", "-plot", svg)
	recs, err := csv.NewReader(strings.NewReader(o)).ReadAll()
	if code != 0 || err != nil || len(recs) != 4 || recs[0][2] != "gbps" {
		t.Errorf("csv %q %v", o, err)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte(">sum<")) { // the series in the legend
		t.Errorf("plot %v", err)
	}
	// The target may come after the flags.
	o, _, code = sigcheckIn(t, "", "bench", "-quick", "-sizes", "64", "-algs", "sum", "-fused=false", "-csv", "csum")
	if code != 0 || !strings.HasPrefix(o, "algorithm,size,gbps") {
		t.Errorf("target after the flags: exit %d, %.60q", code, o)
	}
	for _, bad := range [][]string{{"bench"}, {"bench", "tree"}, {"bench", "csum", "csum"}, {"bench", "csum", "-sizes", "4X"}, {"bench", "csum", "-algs", "md5"}} {
		if _, _, code := sigcheckIn(t, "", bad...); code != exitUsage {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
}

// bench csum -plot writes the format its file's name says (it wrote SVG
// into b.png and took b.gif), and refuses a name it cannot honour before
// measuring, in one line, leaving no file behind.
func TestBenchCsumPlotFormats(t *testing.T) {
	dir := t.TempDir()
	for name, magic := range map[string]string{"b.png": "\x89PNG\r\n\x1a\n", "b.svg": "<?xml", "b.PDF": "%PDF"} {
		path := filepath.Join(dir, name)
		if _, e, code := sigcheckIn(t, "", "bench", "csum", "-quick", "-sizes", "64,4K", "-algs", "sum", "-fused=false", "-csv", "-plot", path); code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, e)
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("%s: %v, starts %q, want %q", name, err, b[:min(8, len(b))], magic)
		}
		if name == "b.svg" {
			for _, want := range []string{">sum<", ">copy<", ">GB/s<", ">4 KiB<"} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("%s lacks %q", name, want)
				}
			}
		}
	}
	for _, name := range []string{"b.gif", "b", "b.svg.txt"} {
		path := filepath.Join(dir, name)
		o, e, code := sigcheckIn(t, "", "bench", "csum", "-quick", "-sizes", "64", "-algs", "sum", "-fused=false", "-csv", "-plot", path)
		want := "sigcheck bench: -plot " + path + ": unknown image format (want .svg, .png or .pdf) (sigcheck bench -h for help)\n"
		if code != exitUsage || e != want || o != "" {
			t.Errorf("-plot %s: exit %d, stderr %q, stdout %.80q; want exit 2, %q", name, code, e, o, want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("-plot %s: a file was left: %v", name, err)
		}
	}
}

func TestTuneCommand(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	o, _, code := sigcheckIn(t, "", "tune", "-quick", "-sizes", "64,64K")
	if code != 0 || !strings.Contains(o, "*") || !strings.Contains(o, "Stored in") {
		t.Fatalf("exit %d:\n%s", code, o)
	}
	o, _, code = sigcheckIn(t, "", "tune", "-quick", "-no-save", "-sizes", "4K", "-need", "bits", "-json")
	var got map[string]any
	if code != 0 || json.Unmarshal([]byte(o), &got) != nil {
		t.Fatalf("exit %d: %s", code, o)
	}
	choice := got["choices"].([]any)[0].(map[string]any)["algorithm"]
	if !strings.HasPrefix(choice.(string), "crc") {
		t.Errorf("with -need bits the choice is %v", choice)
	}
	if _, _, code := sigcheckIn(t, "", "tune", "-need", "perfect"); code != exitUsage {
		t.Error("bad -need accepted")
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("64, 4K,32KiB,1M,64MiB,1G")
	if err != nil || len(got) != 6 || got[1] != 4096 || got[4] != 64<<20 || got[5] != 1<<30 {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"", "0", "-5", "4X", "5T", "1e3"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The detection table of the README is what `sigcheck csum -detect
// -markdown` prints (deterministic: seeded corruption).
func TestReadmeDetectionTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	o, _, code := sigcheckIn(t, "", "csum", "-detect", "-markdown")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !bytes.Contains(readme, []byte(o)) {
		t.Errorf("README.md does not hold the current table; regenerate it with: go run ./cmd/sigcheck csum -detect -markdown\n%s", o)
	}
}
