package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

func TestBarsIsWellFormedSVG(t *testing.T) {
	var b bytes.Buffer
	bars := []Bar{{"a <b>", 3.5, 2}, {"c", 0, math.NaN()}, {"d & e", 12, 1}}
	if err := Bars(&b, "svg", "Title & co", "%", "reference", bars); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	texts := []string{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			texts = append(texts, string(cd))
		}
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"Title & co", "a <b>", "d & e", "12.0%", "3.50%", "reference"} {
		if !strings.Contains(all, want) {
			t.Errorf("texts %q lack %q", all, want)
		}
	}
}

// Bars writes the format it is asked for, and refuses others.
func TestBarsFormats(t *testing.T) {
	bars := []Bar{{"gfd:w=64,m=1 (64 bits)", 0, 0}, {"crc16-arc, 256–10^6 elements", 12.3, 5.4}}
	for format, magic := range map[string]string{"svg": "<?xml", "png": "\x89PNG\r\n\x1a\n", "pdf": "%PDF"} {
		var b bytes.Buffer
		if err := Bars(&b, format, "Collisions", "%", "random mapping", bars); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !bytes.HasPrefix(b.Bytes(), []byte(magic)) {
			t.Errorf("%s starts %q", format, b.Bytes()[:min(8, b.Len())])
		}
	}
	if err := Bars(io.Discard, "gif", "x", "%", "", bars); !errors.Is(err, ErrFormat) {
		t.Errorf("gif: %v", err)
	}
}

func TestTicks(t *testing.T) {
	for _, max := range []float64{0.003, 1, 7, 30.8, 99, 1e6} {
		ts := ticks(max)
		if len(ts) < 2 || len(ts) > 7 || ts[0] != 0 || ts[len(ts)-1] > max*1.0001 {
			t.Errorf("ticks(%g) = %v", max, ts)
		}
	}
}

func TestLinesIsWellFormedSVG(t *testing.T) {
	var b bytes.Buffer
	series := []Series{
		{"xxh3 <fast>", []float64{64, 4096, 1 << 20}, []float64{8, 33, 40}},
		{"copy", []float64{64, 4096, 1 << 20}, []float64{12, 80, 27}},
	}
	if err := Lines(&b, "Bandwidth", "GB/s", func(x float64) string { return fmt.Sprintf("<%g>", x) }, series); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	d := xml.NewDecoder(&b)
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
	}
	for _, want := range []string{"Bandwidth", "GB/s", "xxh3 &lt;fast&gt;", "&lt;1024&gt;", "copy"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %q in the chart", want)
		}
	}
	var one bytes.Buffer
	if err := Lines(&one, "one point", "GB/s", func(float64) string { return "x" }, []Series{{"a", []float64{5}, []float64{0}}}); err != nil || !strings.Contains(one.String(), "<svg") {
		t.Errorf("single point: %v", err)
	}
}
