package plot

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

// manySeries is a chart with more names than one legend column holds
// (sigcheck bench csum draws 38).
func manySeries(n int) []Panel {
	var ss []Series
	for i := range n {
		s := Series{Name: fmt.Sprintf("copy+series-%02d", i)}
		for e := 6; e <= 26; e += 4 {
			x := math.Ldexp(1, e)
			s.X, s.Y = append(s.X, x), append(s.Y, float64(i+1)*math.Log2(x))
		}
		ss = append(ss, s)
	}
	return []Panel{{YLabel: "GB/s", Series: ss}}
}

func longBars() []Bar {
	var bars []Bar
	for i, l := range []string{"mmm-bs1:w=16,m=1, 256–10^6 elements", "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", "i", "gfd:w=64,m=1 (64 bits)"} {
		bars = append(bars, Bar{Label: l, Value: 100 * float64(i) / 3, Ref: 5})
	}
	return bars
}

// In SVG every text is drawn as glyph outlines, defined once and placed
// with <use>, so that a viewer without the Liberation fonts draws what
// gonum measured; the strings stay in the document as transparent text.
func TestSVGTextIsOutlined(t *testing.T) {
	figures := map[string]func(*bytes.Buffer) error{
		"bars": func(b *bytes.Buffer) error {
			return Bars(b, "svg", "Collisions on 7072 type signatures", "%", "random mapping", longBars())
		},
		"panels": func(b *bytes.Buffer) error { return SizePanels(b, "svg", "sigcheck run bw", samplePanels()) },
		"legend": func(b *bytes.Buffer) error { return SizePanels(b, "svg", "Checksum bandwidth", manySeries(40)) },
	}
	for name, draw := range figures {
		var b bytes.Buffer
		if err := draw(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		svg := b.String()
		if strings.ContainsAny(svg, "\uE000\uE001") {
			t.Errorf("%s: a text marker is left in the SVG", name)
		}
		texts := regexp.MustCompile(`<text [^>]*>`).FindAllString(svg, -1)
		if len(texts) == 0 {
			t.Errorf("%s: no text kept", name)
		}
		for _, tx := range texts {
			if !strings.HasPrefix(tx, `<text fill-opacity="0" `) {
				t.Errorf("%s: visible text, drawn in whatever font the viewer has: %s", name, tx)
			}
		}
		defined := map[string]bool{}
		for _, m := range regexp.MustCompile(`<path id="(g[0-9]+)" d="M[^"]+Z"/>`).FindAllStringSubmatch(svg, -1) {
			defined[m[1]] = true
		}
		uses := regexp.MustCompile(`<use xlink:href="#(g[0-9]+)"`).FindAllStringSubmatch(svg, -1)
		if len(uses) < 3*len(defined) || len(defined) < 10 {
			t.Errorf("%s: %d glyphs placed, %d defined", name, len(uses), len(defined))
		}
		for _, u := range uses {
			if !defined[u[1]] {
				t.Errorf("%s: glyph %s used, not defined", name, u[1])
			}
		}
	}
}

// Nothing is cut at a figure's edges: its outermost rows and columns of
// pixels are background. Bars sizes its label column and margins from
// the font's widths; a legend longer than the figure is tall goes on in
// a second column.
func TestNothingAtTheEdges(t *testing.T) {
	figures := map[string]func(*bytes.Buffer) error{
		"bars": func(b *bytes.Buffer) error {
			return Bars(b, "png", "A title longer than the chart is wide, whole", "%", "ref", longBars()[2:3])
		},
		"bars2":  func(b *bytes.Buffer) error { return Bars(b, "png", "Collisions", "%", "random mapping", longBars()) },
		"legend": func(b *bytes.Buffer) error { return SizePanels(b, "png", "Checksum bandwidth", manySeries(40)) },
	}
	for name, draw := range figures {
		var b bytes.Buffer
		if err := draw(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p := os.Getenv("SIGCHECK_PLOT_OUT"); p != "" { // to look at them
			os.WriteFile(p+"-"+name+".png", b.Bytes(), 0o644)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		r := img.Bounds()
		edges := map[string]image.Rectangle{
			"left": image.Rect(r.Min.X, r.Min.Y, r.Min.X+2, r.Max.Y), "right": image.Rect(r.Max.X-2, r.Min.Y, r.Max.X, r.Max.Y),
			"top": image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+2), "bottom": image.Rect(r.Min.X, r.Max.Y-2, r.Max.X, r.Max.Y),
		}
		for edge, e := range edges {
			for y := e.Min.Y; y < e.Max.Y; y++ {
				for x := e.Min.X; x < e.Max.X; x++ {
					if cr, cg, cb, _ := img.At(x, y).RGBA(); cr < 0xf000 || cg < 0xf000 || cb < 0xf000 {
						t.Errorf("%s: drawn at the %s edge (%d, %d) of %v", name, edge, x, y, r)
						goto next
					}
				}
			}
		next:
		}
	}
}

// In PDF text is drawn as outlines too: gonum's PDF canvas wrote Go's
// UTF-8 strings as code page 1252 ("µs" as "Âµs", "–" as three letters),
// so no font goes into the file and no string through it.
func TestPDFTextIsOutlined(t *testing.T) {
	panels := samplePanels()
	panels[0].YLabel = "latency (µs), size ÷ bandwidth, 1–64"
	for name, draw := range map[string]func(*bytes.Buffer) error{
		"bars": func(b *bytes.Buffer) error {
			return Bars(b, "pdf", "Collisions, 1–64 elements", "%", "random mapping", longBars())
		},
		"panels": func(b *bytes.Buffer) error { return SizePanels(b, "pdf", "sigcheck run bw", panels) },
	} {
		var b bytes.Buffer
		if err := draw(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.HasPrefix(b.Bytes(), []byte("%PDF")) {
			t.Fatalf("%s: not a PDF: %q", name, b.Bytes()[:8])
		}
		if bytes.Contains(b.Bytes(), []byte("/FontFile")) || bytes.Contains(b.Bytes(), []byte("/Type /Font")) {
			t.Errorf("%s: a font in the PDF: its text went through gonum's code page 1252", name)
		}
	}
}
