package plot

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"os"
	"strings"
	"testing"
)

func samplePanels() []Panel {
	var lat, bw []Series
	for i, name := range []string{"none", "checksum", "merkle"} {
		l, b := Series{Name: name}, Series{Name: name}
		for e := 0; e <= 26; e++ {
			x := math.Ldexp(1, e)
			t := 2 + float64(i) + x/(10e3-2e3*float64(i))
			l.X, l.Y = append(l.X, x), append(l.Y, t)
			b.X, b.Y = append(b.X, x), append(b.Y, x/t/1e3)
		}
		lat, bw = append(lat, l), append(bw, b)
	}
	over := []Series{{Name: "checksum", X: lat[1].X}, {Name: "merkle", X: lat[2].X}}
	for k := range over {
		for j := range lat[0].Y {
			over[k].Y = append(over[k].Y, 100*(lat[k+1].Y[j]/lat[0].Y[j]-1))
		}
	}
	return []Panel{
		{Title: "latency", YLabel: "one-way latency (µs)", LogY: true, Series: lat},
		{Title: "bandwidth", YLabel: "bandwidth (GB/s)", LogY: true, Series: bw},
		{Title: "overhead", YLabel: "overhead (%)", Zero: true, Series: over},
	}
}

func TestSizePanels(t *testing.T) {
	for _, f := range []string{"svg", "png", "pdf"} {
		var b bytes.Buffer
		if err := SizePanels(&b, f, "sigcheck run latency, 2 ranks, local", samplePanels()); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch f {
		case "svg":
			s := b.String()
			for _, want := range []string{"<svg", "merkle", "1 KiB", "1 MiB", "overhead (%)", "GB/s", "µs"} {
				if !strings.Contains(s, want) {
					t.Errorf("svg lacks %q", want)
				}
			}
		case "png":
			if p := os.Getenv("SIGCHECK_PLOT_OUT"); p != "" { // to look at it
				os.WriteFile(p, b.Bytes(), 0o644)
			}
			img, err := png.Decode(&b)
			if err != nil {
				t.Fatal(err)
			}
			if r := img.Bounds(); r.Dx() < 3*r.Dy() {
				t.Errorf("png %v: want three panels side by side", r)
			}
		case "pdf":
			if !bytes.HasPrefix(b.Bytes(), []byte("%PDF")) {
				t.Errorf("pdf starts %q", b.Bytes()[:8])
			}
		}
	}
	// Values a log axis cannot show, a single size, an empty series:
	// drawn (what can be), never a panic.
	odd := []Panel{{Title: "odd", YLabel: "x", LogY: true, Series: []Series{
		{Name: "a", X: []float64{1024}, Y: []float64{0}},
		{Name: "b", X: []float64{1024}, Y: []float64{3}},
		{Name: "c"},
	}}}
	if err := SizePanels(&bytes.Buffer{}, "svg", "odd", odd); err != nil {
		t.Error(err)
	}
	if err := SizePanels(&bytes.Buffer{}, "gif", "x", odd); !errors.Is(err, ErrFormat) {
		t.Errorf("gif: %v", err)
	}
	if _, err := Format("run.jpeg"); !errors.Is(err, ErrFormat) {
		t.Errorf("Format(run.jpeg): %v", err)
	}
	if f, err := Format("a/run.SVG"); f != "svg" || err != nil {
		t.Errorf("Format(a/run.SVG) = %q, %v", f, err)
	}
}

func TestSizeTicks(t *testing.T) {
	ticks := sizeTicks{SizeLabel}.Ticks(1, 64<<20)
	var labels []string
	for _, tk := range ticks {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if len(ticks) != 27 || strings.Join(labels, ",") != "1 B,1 KiB,1 MiB" {
		t.Errorf("%d ticks, labels %q", len(ticks), labels)
	}
	for _, r := range [][2]float64{{1, 2}, {64, 64}, {1024, 1 << 30}, {3, 5000}, {1024, 128 << 10}} {
		n := 0
		for _, tk := range (sizeTicks{SizeLabel}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				n++
			}
		}
		if n > 5 || n < 1 {
			t.Errorf("%v: %d labels", r, n)
		}
	}
}

func TestLinTicks(t *testing.T) {
	var labels []string
	for _, tk := range (linTicks{}).Ticks(-31, 267) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, ","); got != "0,100,200" && got != "0,50,100,150,200,250" {
		t.Errorf("labels %s", got)
	}
	for _, r := range [][2]float64{{0, 1}, {-0.3, 0.7}, {12, 13}, {-500, 2e4}} {
		n := 0
		for _, tk := range (linTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				n++
				if len(tk.Label) > 6 {
					t.Errorf("%v: label %q", r, tk.Label)
				}
			}
		}
		if n < 2 || n > 7 {
			t.Errorf("%v: %d labels", r, n)
		}
	}
}

// Panels with nothing drawable are left out, and a figure with nothing
// at all is ErrNoData; a single size (a run stopped after its first
// row) draws; nothing panics.
func TestSizePanelsLeaveOutEmpty(t *testing.T) {
	one := Series{Name: "none", X: []float64{1}, Y: []float64{2.5}}
	var b bytes.Buffer
	err := SizePanels(&b, "png", "cut short", []Panel{
		{Title: "latency", YLabel: "µs", LogY: true, Series: []Series{one}},
		{Title: "overhead", YLabel: "%", Zero: true, Series: []Series{{Name: "checksum"}}},
		{Title: "overhead", YLabel: "%", Zero: true, Series: []Series{{Name: "merkle", X: []float64{1}, Y: []float64{-12}}}},
		{Title: "zeros", YLabel: "GB/s", LogY: true, Series: []Series{{Name: "none", X: []float64{0, 4}, Y: []float64{1, 0}}}},
	})
	if err != nil {
		t.Fatal(err) // gonum's panic on a one-size log axis came out here
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() > 3*r.Dy() || r.Dx() < r.Dy() {
		t.Errorf("%v: want the two panels that have data", r)
	}
	if err := SizePanels(&bytes.Buffer{}, "svg", "empty", []Panel{{Title: "x", Series: []Series{{Name: "a"}}}}); !errors.Is(err, ErrNoData) {
		t.Errorf("empty: %v", err)
	}
	if err := SizePanels(&bytes.Buffer{}, "svg", "none", nil); !errors.Is(err, ErrNoData) {
		t.Errorf("no panels: %v", err)
	}
}
