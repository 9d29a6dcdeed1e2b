package plot

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Panels are drawn with gonum.org/v1/plot, the Go ecosystem's plotting
// library: it lays out axes, ticks, titles and legends so that they do
// not collide, and writes SVG, PNG and PDF from one drawing.

// Panel is one chart of a figure: series against message size (bytes, a
// base-2 logarithmic axis labelled B, KiB, MiB).
type Panel struct {
	Title  string
	YLabel string // the measure and its unit: "latency (µs)"
	LogY   bool   // a logarithmic y axis (values ≤ 0 are left out)
	Series []Series
	// Zero draws a line at y = 0 (for overheads, which noise can make
	// negative).
	Zero bool
}

// ErrNoData is returned for panels with nothing to draw: no series with
// a point of positive size (and, on a log axis, positive value).
var ErrNoData = errors.New("nothing to draw")

// ErrFormat is returned for a file name whose extension is none of
// .svg, .png and .pdf.
var ErrFormat = errors.New("unknown image format (want .svg, .png or .pdf)")

// Format returns the image format named by path's extension: "svg",
// "png" or "pdf", or ErrFormat.
func Format(path string) (string, error) {
	switch f := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); f {
	case "svg", "png", "pdf":
		return f, nil
	}
	return "", fmt.Errorf("%s: %w", path, ErrFormat)
}

// SizePanels writes a figure of panels side by side, under title, in
// format (see Format). Series with the same name have the same colour in
// every panel, and one legend names them: in the first panel's top left
// corner for up to four series, in a column of its own at the right for
// more, where it never covers a line.
func SizePanels(w io.Writer, format, title string, panels []Panel) error {
	return sizePanels(w, format, title, panels, SizeLabel)
}

func sizePanels(w io.Writer, format, title string, panels []Panel, label func(int64) string) (err error) {
	defer func() {
		// gonum panics on what it cannot draw (a log axis through 0); the
		// points are filtered so that it should not, and if it still
		// does, the caller gets an error, not a crash after a long run.
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot draw the figure: %v", r)
		}
	}()
	type style struct {
		c      color.Color
		dashes []vg.Length
	}
	styles := map[string]style{}
	legend := gplot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(9)
	var names []string
	for _, pn := range panels {
		for _, s := range pn.Series {
			if _, ok := styles[s.Name]; !ok {
				i := len(styles)
				st := style{c: parseHex(palette[i%len(palette)])}
				if i >= len(palette) {
					st.dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				}
				styles[s.Name] = st
				names = append(names, s.Name)
			}
		}
	}
	side := len(names) > 4
	inLegend := map[string]bool{}
	type entry struct {
		name   string
		thumbs []gplot.Thumbnailer
	}
	var entries []entry // the legend's, in order
	var plots []*gplot.Plot
	for _, pn := range panels {
		p := gplot.New()
		p.Title.Text = pn.Title
		p.Title.TextStyle.Font.Size = vg.Points(11)
		p.X.Label.Text = "message size"
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = sizeTicks{label}
		p.Y.Label.Text = pn.YLabel
		if pn.LogY {
			// The values' logarithms on a linear axis, labelled as the
			// values: gonum's LogScale centres the axis title at the
			// arithmetic mean of the range, which on a log axis sits near
			// the top and shrinks the panel to make room for it.
			p.Y.Tick.Marker = logTicks{}
		} else {
			p.Y.Tick.Marker = linTicks{}
		}
		p.Add(plotter.NewGrid())
		lo, hi := math.Inf(1), math.Inf(-1) // the sizes drawn
		for _, s := range pn.Series {
			var pts plotter.XYs
			for j, x := range s.X {
				y := s.Y[j]
				if x <= 0 || math.IsNaN(y) || math.IsInf(y, 0) || pn.LogY && y <= 0 {
					continue
				}
				if pn.LogY {
					y = math.Log10(y)
				}
				pts = append(pts, plotter.XY{X: x, Y: y})
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
			if len(pts) == 0 {
				continue
			}
			st := styles[s.Name]
			line, points, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			line.Color, line.Width, line.Dashes = st.c, vg.Points(1.5), st.dashes
			points.Color, points.Radius = st.c, vg.Points(2)
			p.Add(line, points)
			if !inLegend[s.Name] {
				legend.Add(s.Name, line, points)
				entries = append(entries, entry{s.Name, []gplot.Thumbnailer{line, points}})
				inLegend[s.Name] = true
			}
		}
		if lo > hi {
			continue // nothing to draw in this panel (a run stopped before its second layer)
		}
		if pn.Zero {
			if zero, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 0}, {X: hi, Y: 0}}); err == nil {
				zero.Color = color.Gray{Y: 0x60}
				zero.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
				p.Add(zero)
			}
		}
		if len(plots) == 0 && !side {
			p.Legend = legend
			p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), -vg.Points(6)
		}
		if lo == hi {
			// One size: a range around it, or gonum widens 1..1 to 0..2
			// and a log axis cannot reach 0.
			p.X.Min, p.X.Max = lo/2, hi*2
		}
		if pn.LogY {
			padLog(&p.Y)
		} else if p.Y.Min > 0 {
			p.Y.Min = 0 // a linear axis of positive values starts at 0, or its slopes mislead
		}
		plots = append(plots, p)
	}
	if len(plots) == 0 {
		return ErrNoData
	}
	const panelW, panelH, titleH = 4.2 * vg.Inch, 3.4 * vg.Inch, 0.35 * vg.Inch
	// More names than one column holds go in several, side by side: a
	// column longer than the figure would be cut at its bottom.
	var (
		columns []gplot.Legend
		colW    []vg.Length
		legendW vg.Length
	)
	if side {
		const legendTop = 30 // points below the title: where the panels' plotting areas start
		perColumn := max(1, int((panelH-vg.Points(legendTop+18))/(legend.TextStyle.Rectangle("Xg").Max.Y+legend.Padding)))
		for i, e := range entries {
			if i%perColumn == 0 {
				l := gplot.NewLegend()
				l.TextStyle = legend.TextStyle
				l.Left, l.Top, l.YOffs = true, true, -vg.Points(legendTop)
				columns, colW = append(columns, l), append(colW, 0)
			}
			columns[len(columns)-1].Add(e.name, e.thumbs...)
			colW[len(colW)-1] = max(colW[len(colW)-1], legend.TextStyle.Width(e.name)+legend.ThumbnailWidth+vg.Points(16))
		}
		legendW = vg.Points(8)
		for _, w := range colW {
			legendW += w
		}
	}
	ts := gplot.New().Title.TextStyle
	ts.Font.Size = vg.Points(13)
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
	// A figure is at least as wide as its title; the panels share what
	// the legend leaves.
	width, height := max(panelW*vg.Length(len(plots))+legendW, ts.Width(title)+vg.Points(24)), panelH+titleH
	dc, write, err := newCanvas(format, width, height)
	if err != nil {
		return err
	}
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc.FillText(ts, vg.Point{X: width / 2, Y: height - vg.Points(6)}, title)
	body := draw.Crop(dc, 0, -legendW, 0, -titleH)
	x := width - legendW + vg.Points(8)
	for i, l := range columns {
		l.Draw(draw.Crop(dc, x, 0, 0, -titleH))
		x += colW[i]
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(14), PadLeft: vg.Points(6),
		PadRight: vg.Points(10), PadBottom: vg.Points(4)}
	for i, p := range plots {
		p.Draw(tiles.At(body, i, 0))
	}
	return write(w)
}

// padLog widens an axis of decimal logarithms to whole powers of ten
// around its data (a decade when the data are one value), so that there
// are labelled ticks at both ends, and leaves room above the lines for
// the legend.
func padLog(a *gplot.Axis) {
	if math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || a.Min > a.Max {
		a.Min, a.Max = 0, 1 // no data
		return
	}
	lo, hi := math.Floor(a.Min), math.Ceil(a.Max)
	if hi-lo < 1 {
		hi = lo + 1
	}
	a.Min, a.Max = lo, hi+0.1*(hi-lo)+0.2
}

// sizeTicks labels a base-2 size axis with powers of two (1 B, 4 KiB,
// 1 MiB), every k-th one labelled so that at most five labels show — a
// panel is about 250 points wide and "128 KiB" about 40, so five never
// overlap (eight did) — and the others as minor ticks.
type sizeTicks struct{ label func(int64) string }

func (st sizeTicks) Ticks(min, max float64) []gplot.Tick {
	if !(min > 0 && max >= min) {
		return nil
	}
	lo, hi := int(math.Floor(math.Log2(min))), int(math.Ceil(math.Log2(max)))
	step := 1
	for (hi-lo)/step > 4 {
		step++
	}
	// Label powers that are multiples of step, so that 1 KiB, 1 MiB
	// come up when step divides 10.
	for _, s := range []int{step, 2, 5, 10} {
		if s >= step && 10%s == 0 {
			step = s
			break
		}
	}
	var t []gplot.Tick
	for e := lo; e <= hi; e++ {
		v := math.Ldexp(1, e)
		if v < min*0.999 || v > max*1.001 {
			continue
		}
		label := ""
		if e%step == 0 {
			label = st.label(int64(v))
		}
		t = append(t, gplot.Tick{Value: v, Label: label})
	}
	return t
}

// linTicks marks a linear axis at about five round values (1, 2 or 5
// times a power of ten apart), labelled without needless decimals.
type linTicks struct{}

func (linTicks) Ticks(lo, hi float64) []gplot.Tick {
	min, max := lo, hi
	if !(max > min) || math.IsInf(min, 0) || math.IsInf(max, 0) {
		return nil
	}
	span := max - min
	step := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 6 {
			step *= m
			break
		}
	}
	prec := int(math.Max(0, -math.Floor(math.Log10(step)+1e-9)))
	var t []gplot.Tick
	for i := math.Ceil(min / step); i*step <= max+step*1e-9; i++ {
		v := i*step + 0 // + 0: no "-0"
		t = append(t, gplot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if h := v + step/2; h <= max { // a minor tick halfway
			t = append(t, gplot.Tick{Value: h})
		}
	}
	return t
}

// logTicks marks an axis of decimal logarithms: the powers of ten in
// range labelled as values (1, 10, 100, 0.01), and 2× and 5× between
// them. Over more than eight decades, every other power is labelled.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []gplot.Tick {
	if !(max >= min) || math.IsInf(min, 0) || math.IsInf(max, 0) {
		return nil
	}
	every := 1.0
	if max-min > 8 {
		every = 2
	}
	var t []gplot.Tick
	for e := math.Floor(min); e <= math.Ceil(max); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := e + math.Log10(m)
			if v < min-1e-9 || v > max+1e-9 {
				continue
			}
			label := ""
			if m == 1 && math.Mod(e, every) == 0 {
				label = formatPow10(e)
			}
			t = append(t, gplot.Tick{Value: v, Label: label})
		}
	}
	return t
}

func formatPow10(e float64) string {
	if e >= 0 && e <= 6 || e < 0 && e >= -3 {
		return fmt.Sprint(math.Pow(10, e))
	}
	return fmt.Sprintf("1e%d", int(e))
}

// SizeLabel writes a byte count in binary units: 512 B, 4 KiB, 64 MiB.
func SizeLabel(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func parseHex(s string) color.Color {
	var r, g, b uint8
	fmt.Sscanf(s, "#%02x%02x%02x", &r, &g, &b)
	return color.RGBA{R: r, G: g, B: b, A: 0xff}
}
