package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// xxhsumVersion returns the installed xxhsum's version (0.8.1 → 801), or
// skips the test when there is none.
func xxhsumVersion(t *testing.T) int {
	t.Helper()
	path, err := exec.LookPath("xxhsum")
	if err != nil {
		t.Skip("xxhsum is not installed (Debian: apt-get install xxhash); the interchange with it is not tested")
	}
	out, _ := exec.Command(path, "-V").CombinedOutput()
	m := regexp.MustCompile(`xxhsum (\d+)\.(\d+)\.(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("xxhsum -V: %q", out)
	}
	v := 0
	for _, p := range m[1:] {
		n, _ := strconv.Atoi(string(p))
		v = 100*v + n
	}
	return v
}

// xxhsum runs xxhsum and returns its standard output (its standard error
// has progress lines) and exit status.
func xxhsum(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command("xxhsum", args...).Output()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// Each tool's -c accepts the other's files, with the real xxhsum: every
// algorithm xxhsum has, GNU and BSD lines, its little-endian tags; and
// each rejects the other's sums of a changed file.
func TestXXHsumInterchange(t *testing.T) {
	version := xxhsumVersion(t)
	checkDir(t)
	os.WriteFile("big", []byte(strings.Repeat("sigcheck and xxhsum agree. ", 1000)), 0o644)
	files := []string{"a", "b", "big"}

	// sigcheck writes, xxhsum checks.
	type form struct {
		alg string
		tag bool
	}
	forms := []form{{"xxh32", false}, {"xxh64", false}, {"xxh3-128", false},
		{"xxh32", true}, {"xxh64", true}, {"xxh3-128", true}, {"xxh3", true}}
	if version >= 802 { // XXH3_ lines are xxhsum 0.8.2's
		forms = append(forms, form{"xxh3", false})
	} else {
		t.Logf("xxhsum %d.%d.%d reads XXH3-64 in BSD lines only (XXH3_ lines came with 0.8.2)", version/10000, version/100%100, version%100)
	}
	for _, f := range forms {
		args := append([]string{"csum", "-alg", f.alg}, files...)
		if f.tag {
			args = append(args, "-tag")
		}
		sums, e, code := sigcheckIn(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, e)
		}
		writeList(t, "SUMS", sums)
		if out, code := xxhsum(t, "-c", "SUMS"); code != 0 || strings.Count(out, ": OK") != len(files) {
			t.Errorf("xxhsum -c rejects sigcheck's %s (tag %v), exit %d:\n%s\n%s", f.alg, f.tag, code, sums, out)
		}
	}

	// xxhsum writes, sigcheck checks.
	var lists []string
	for _, h := range []string{"0", "1", "2", "3"} {
		for _, extra := range [][]string{nil, {"--tag"}, {"--tag", "--little-endian"}} {
			out, code := xxhsum(t, append(append([]string{"-H" + h}, extra...), files...)...)
			if code != 0 {
				t.Fatalf("xxhsum -H%s %v: %d %s", h, extra, code, out)
			}
			lists = append(lists, out)
			writeList(t, "SUMS", out)
			o, e, code := sigcheckIn(t, "", "csum", "-c", "SUMS")
			if code != 0 || strings.Count(o, ": OK\n") != len(files) {
				t.Errorf("sigcheck -c rejects xxhsum -H%s %v, exit %d:\n%s\n%s%s", h, extra, code, out, o, e)
			}
		}
	}

	// A changed file: both say FAILED, both exit 1.
	ours, _, _ := sigcheckIn(t, "", "csum", "-alg", "xxh64", "a", "b")
	writeList(t, "OURS", ours)
	os.WriteFile("b", []byte("changed\n"), 0o644)
	writeList(t, "THEIRS", strings.Join(lists, ""))
	if o, _, code := sigcheckIn(t, "", "csum", "-c", "-quiet", "THEIRS"); code != exitNegative || strings.Count(o, "b: FAILED\n") != len(lists) {
		t.Errorf("sigcheck -c of a changed file after xxhsum: exit %d\n%s", code, o)
	}
	if out, code := xxhsum(t, "-c", "OURS"); code != 1 || !strings.Contains(out, "b: FAILED") {
		t.Errorf("xxhsum -c of a changed file after sigcheck: exit %d\n%s", code, out)
	}
}
