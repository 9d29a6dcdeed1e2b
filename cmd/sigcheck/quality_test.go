package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// quality -plot writes the format its file's name says (once it wrote
// SVG into q.png), and refuses a name it cannot honour before measuring,
// in one line, leaving no file behind.
func TestQualityPlotFormats(t *testing.T) {
	dir := t.TempDir()
	for name, magic := range map[string]string{"q.png": "\x89PNG\r\n\x1a\n", "q.svg": "<?xml", "q.PDF": "%PDF"} {
		path := filepath.Join(dir, name)
		if _, e, code := sigcheck(t, "quality", "-algs", "gfd:w=8,m=2,crc32c", "-plot", path); code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, e)
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("%s: %v, starts %q, want %q", name, err, b[:min(8, len(b))], magic)
		}
		if name == "q.svg" && !bytes.Contains(b, []byte(">gfd:w=8,m=2 (16 bits)<")) {
			t.Errorf("%s: no bar named gfd:w=8,m=2 (16 bits)", name)
		}
	}
	for _, name := range []string{"q.gif", "q", "q.svg.txt"} {
		path := filepath.Join(dir, name)
		o, e, code := sigcheck(t, "quality", "-plot", path)
		want := "sigcheck quality: -plot " + path + ": unknown image format (want .svg, .png or .pdf) (sigcheck quality -h for help)\n"
		if code != exitUsage || e != want || o != "" {
			t.Errorf("-plot %s: exit %d, stderr %q, stdout %.80q; want exit 2, %q", name, code, e, o, want)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("-plot %s: a file was left: %v", name, err)
		}
	}
}
