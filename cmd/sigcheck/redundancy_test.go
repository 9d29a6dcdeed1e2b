package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func redundancy(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"redundancy"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRedundancyProtect(t *testing.T) {
	code, out, _ := redundancy(t, "protect", "-ranks", "4", "-grid", "16", "-steps", "30", "-runs", "3", "-rate", "0.05")
	if code != 0 || !strings.Contains(out, "3 runs: 3 bit-identical, 0 aborted") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestRedundancyProtectCopiedHalosJSON(t *testing.T) {
	code, out, _ := redundancy(t, "protect", "-ranks", "4", "-grid", "16", "-steps", "30", "-check", "0", "-runs", "3", "-rate", "0.05", "-copy-halos", "-json", "-protocol", "alltoall")
	var res struct {
		Runs []struct {
			Injected, Corrected uint64
			Identical           bool
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Runs) != 3 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for i, r := range res.Runs {
		if !r.Identical || r.Injected != r.Corrected {
			t.Errorf("run %d: %+v", i, r)
		}
	}
}

func TestRedundancyAbort(t *testing.T) {
	code, out, _ := redundancy(t, "abort", "-ranks", "4", "-grid", "16", "-steps", "40", "-runs", "4", "-rate", "0.1")
	if code != 0 || !strings.Contains(out, "0 wrong") || !strings.Contains(out, "no majority") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestRedundancyTaint(t *testing.T) {
	img := filepath.Join(t.TempDir(), "taint.png")
	code, out, _ := redundancy(t, "taint", "-ranks", "6", "-grid", "24", "-steps", "40", "-rank", "1", "-step", "5", "-png", img)
	if code != 0 || !strings.Contains(out, "X") || !strings.Contains(out, "injected: 1") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
}

func TestRedundancyBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"nope"}, {"protect", "-r", "9"}, {"protect", "-protocol", "x"}, {"taint", "-rank", "99"},
		{"protect", "-png", "x.png"}, {"protect", "-rate", "2"}, {"protect", "-bogus"}, {},
	} {
		code, out, errOut := redundancy(t, args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if code, out, _ := redundancy(t, "-h"); code != 0 || !strings.Contains(out, "taint") {
		t.Errorf("-h: exit %d, %q", code, out)
	}
}

// taint -png draws a raster heatmap and writes PNG only: a name that says
// another format (it wrote PNG into t.svg) is refused before the run, in
// one line, leaving no file behind; .PNG is a PNG name too.
func TestRedundancyTaintPNGOnly(t *testing.T) {
	dir := t.TempDir()
	small := []string{"taint", "-ranks", "4", "-grid", "16", "-steps", "12", "-rank", "1", "-step", "3"}
	for _, name := range []string{"t.svg", "t.pdf", "t.gif", "t", "t.png.txt"} {
		path := filepath.Join(dir, name)
		code, out, errOut := redundancy(t, append(small, "-png", path)...)
		want := "sigcheck redundancy: -png " + path + ": the heatmap is PNG only: want a name ending .png (sigcheck redundancy -h for help)\n"
		if code != exitUsage || out != "" || errOut != want {
			t.Errorf("-png %s: exit %d, stdout %.80q, stderr %q; want exit 2, %q", name, code, out, errOut, want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("-png %s: a file was left: %v", name, err)
		}
	}
	path := filepath.Join(dir, "T.PNG")
	if code, _, errOut := redundancy(t, append(small, "-png", path)...); code != exitOK {
		t.Fatalf("-png T.PNG: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("-png T.PNG: %v, starts %q", err, b[:min(8, len(b))])
	}
}
