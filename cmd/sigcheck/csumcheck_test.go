package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkDir makes files a, b and "we\ird" in a temporary directory and
// changes into it (names in checksum files are relative).
func checkDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	for name, data := range map[string]string{"a": "123456789", "b": "hello\n", "we\\ird": "x"} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeList(t *testing.T, name, content string) string {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// What csum prints, csum -c accepts, for every algorithm and both forms.
func TestCsumCheckRoundTrip(t *testing.T) {
	checkDir(t)
	for _, alg := range []string{"xxh3", "xxh3-128", "xxh64", "xxh32", "sha256", "blake3", "crc32c", "crc64-ecma", "murmur64a"} {
		for _, tag := range []bool{false, true} {
			args := []string{"csum", "-alg", alg, "a", "b", "we\\ird"}
			if tag {
				args = append(args, "-tag")
			}
			sums, e, code := sigcheckIn(t, "", args...)
			if code != 0 {
				t.Fatalf("%v: exit %d %s", args, code, e)
			}
			writeList(t, "SUMS", sums)
			check := []string{"csum", "-c", "SUMS"}
			if !tag && !strings.Contains("xxh3 xxh3-128 xxh64 xxh32 sha256", alg) {
				check = append(check, "-alg", alg) // bare lines of other lengths need it
			}
			o, e, code := sigcheckIn(t, "", check...)
			if code != 0 || o != "a: OK\nb: OK\n\\we\\\\ird: OK\n" || e != "" {
				t.Errorf("%s tag=%v: exit %d\n%s%s\nfrom\n%s", alg, tag, code, o, e, sums)
			}
		}
	}
}

func TestCsumCheckVerdicts(t *testing.T) {
	checkDir(t)
	sums, _, _ := sigcheckIn(t, "", "csum", "-alg", "sha256", "a", "b")
	writeList(t, "SUMS", sums)
	os.WriteFile("b", []byte("hellO\n"), 0o644) // b changed
	o, e, code := sigcheckIn(t, "", "csum", "-c", "SUMS")
	if code != exitNegative || o != "a: OK\nb: FAILED\n" || e != "sigcheck csum: WARNING: 1 computed checksum did NOT match\n" {
		t.Errorf("changed file: exit %d %q %q", code, o, e)
	}
	o, e, code = sigcheckIn(t, "", "csum", "--check", "--quiet", "SUMS") // sha256sum's spelling works too
	if code != exitNegative || o != "b: FAILED\n" || !strings.Contains(e, "WARNING") {
		t.Errorf("--check --quiet: exit %d %q %q", code, o, e)
	}
	o, e, code = sigcheckIn(t, "", "csum", "-c", "-quiet", "SUMS")
	if code != exitNegative || o != "b: FAILED\n" || !strings.Contains(e, "WARNING") {
		t.Errorf("-quiet: exit %d %q %q", code, o, e)
	}
	o, e, code = sigcheckIn(t, "", "csum", "-c", "-status", "SUMS")
	if code != exitNegative || o != "" || e != "" {
		t.Errorf("-status: exit %d %q %q", code, o, e)
	}
	o, e, code = sigcheckIn(t, "", "csum", "-c", "-json", "SUMS")
	lines := strings.Split(strings.TrimSpace(o), "\n")
	var row map[string]any
	if code != exitNegative || len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &row) != nil ||
		row["file"] != "b" || row["status"] != "failed" || row["algorithm"] != "sha256" || row["expected"] == row["actual"] {
		t.Errorf("-json: exit %d %q %q", code, o, e)
	}
	// A missing file is reported, the others still checked, exit 1.
	os.Remove("b")
	o, e, code = sigcheckIn(t, "", "csum", "-c", "SUMS")
	if code != exitNegative || o != "a: OK\nb: FAILED open or read\n" ||
		e != "sigcheck csum: b: no such file or directory\nsigcheck csum: WARNING: 1 listed file could not be read\n" {
		t.Errorf("missing file: exit %d %q %q", code, o, e)
	}
	o, e, code = sigcheckIn(t, "", "csum", "-c", "-ignore-missing", "SUMS")
	if code != 0 || o != "a: OK\n" || e != "" {
		t.Errorf("-ignore-missing: exit %d %q %q", code, o, e)
	}
	os.Remove("a")
	_, e, code = sigcheckIn(t, "", "csum", "-c", "-ignore-missing", "SUMS")
	if code != exitNegative || e != "sigcheck csum: SUMS: no file was verified\n" {
		t.Errorf("nothing verified: exit %d %q", code, e)
	}
	_, e, code = sigcheckIn(t, "", "csum", "-c", "NOSUMS", "SUMS")
	if code != exitNegative || !strings.HasPrefix(e, "sigcheck csum: NOSUMS: no such file or directory\n") || !strings.Contains(e, "b: no such file") {
		t.Errorf("missing checksum file: exit %d %q", code, e)
	}
}

func TestCsumCheckImproperLines(t *testing.T) {
	checkDir(t)
	sums, _, _ := sigcheckIn(t, "", "csum", "a")
	list := "# a comment\n" + sums + "not a checksum line\nXXH3_0123  b\n"
	o, e, code := sigcheckIn(t, "", "csum", "-c", "-")
	if code != exitNegative || e != "sigcheck csum: -: no properly formatted checksum lines found\n" {
		t.Errorf("empty list: exit %d %q %q", code, o, e)
	}
	o, e, code = sigcheckIn(t, list, "csum", "-c")
	if code != 0 || o != "a: OK\n" || e != "sigcheck csum: WARNING: 2 lines are improperly formatted\n" {
		t.Errorf("improper lines: exit %d %q %q", code, o, e)
	}
	_, _, code = sigcheckIn(t, list, "csum", "-c", "-strict")
	if code != exitNegative {
		t.Errorf("-strict: exit %d", code)
	}
	_, e, _ = sigcheckIn(t, list, "csum", "-c", "-warn")
	if !strings.Contains(e, "sigcheck csum: -:3: improperly formatted checksum line: want two spaces") ||
		!strings.Contains(e, "-:4: improperly formatted checksum line: XXH3_ with 4 hex digits, want 16") {
		t.Errorf("-warn: %q", e)
	}
	// A bare line of another length needs -alg, and says so.
	crc, _, _ := sigcheckIn(t, "", "csum", "-alg", "crc64-ecma", "a")
	o, e, code = sigcheckIn(t, crc, "csum", "-c")
	if code != exitNegative || o != "a: FAILED\n" || !strings.Contains(e, "(bare sums read as xxh64 by their length; -alg says") {
		t.Errorf("crc64-ecma read as xxh64 (as xxhsum reads it): exit %d %q %q", code, o, e)
	}
	_, e, code = sigcheckIn(t, "0102030405  a\n", "csum", "-c", "-warn")
	if code != exitNegative || !strings.Contains(e, "-:1: no algorithm for this checksum: 10 hex digits fit none") {
		t.Errorf("10 digits: exit %d %q", code, e)
	}
	if _, _, code := sigcheckIn(t, crc, "csum", "-c", "-alg", "crc64-ecma"); code != 0 {
		t.Errorf("with -alg crc64-ecma: exit %d", code)
	}
	long := strings.Repeat("0", 70_000) + "  a\n"
	_, e, code = sigcheckIn(t, sums+long, "csum", "-c")
	if code != exitNegative || !strings.Contains(e, "-:2: a line longer than 64 KiB") {
		t.Errorf("long line: exit %d %q", code, e)
	}
}

func TestCsumCheckFlagsNeedC(t *testing.T) {
	for _, f := range []string{"-quiet", "-status", "-strict", "-ignore-missing", "-warn"} {
		_, e, code := sigcheckIn(t, "", "csum", f)
		if code != exitUsage || !strings.Contains(e, f+" is for checking: add -c") {
			t.Errorf("%s without -c: exit %d %q", f, code, e)
		}
	}
	if _, e, code := sigcheckIn(t, "", "csum", "-c", "-tag"); code != exitUsage || !strings.Contains(e, "-tag is for writing sums") {
		t.Errorf("-c -tag: exit %d %q", code, e)
	}
	dir := t.TempDir()
	_, e, code := sigcheckIn(t, "", "csum", "-c", filepath.Join(dir))
	if code != exitNegative || !strings.Contains(e, "is a directory") {
		t.Errorf("a directory as the list: exit %d %q", code, e)
	}
}

// A checksum file with CRLF line endings (written on Windows) checks as
// sha256sum -c checks it.
func TestCsumCheckCRLF(t *testing.T) {
	checkDir(t)
	sums, _, _ := sigcheckIn(t, "", "csum", "-alg", "sha256", "a", "b")
	o, e, code := sigcheckIn(t, strings.ReplaceAll(sums, "\n", "\r\n"), "csum", "-c")
	if code != 0 || o != "a: OK\nb: OK\n" {
		t.Errorf("CRLF: exit %d %q %q", code, o, e)
	}
}
