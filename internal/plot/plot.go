// Package plot draws the sigcheck command's charts: what a person would
// rather look at than read in a table. Measures against message size
// (SizePanels, Lines) are drawn with gonum.org/v1/plot, whose layout keeps
// axis titles, tick labels and legends from colliding, as SVG, PNG or PDF;
// the horizontal bar chart (Bars) is a small hand-written SVG.
//
// It is not a general plotting library: the x axis is always a message
// size, base 2, and the styles are fixed.
package plot

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Bar is one bar of a horizontal bar chart. Ref, when not NaN, is drawn as
// a tick across the bar: a reference value to compare it with.
type Bar struct {
	Label string
	Value float64
	Ref   float64
}

// Bars writes a horizontal bar chart of bars, scaled to the largest value
// (or reference), with the values printed at the ends of the bars.
func Bars(w io.Writer, title, unit, refLabel string, bars []Bar) error {
	const (
		rowH    = 22
		plotW   = 480
		valueW  = 80
		top     = 50
		bottom  = 40
		barH    = 14
		fontCSS = "font-family:sans-serif;font-size:12px"
	)
	labelW := 100
	for _, b := range bars {
		labelW = max(labelW, 7*len([]rune(b.Label))+16) // about 7 px a character at 12 px
	}
	maxV := 0.0
	for _, b := range bars {
		maxV = math.Max(maxV, b.Value)
		if !math.IsNaN(b.Ref) {
			maxV = math.Max(maxV, b.Ref)
		}
	}
	if maxV <= 0 {
		maxV = 1
	}
	width := labelW + plotW + valueW
	height := top + rowH*len(bars) + bottom
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" style="%s">`+"\n",
		width, height, width, height, fontCSS)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&s, `<text x="%d" y="24" style="font-size:15px;font-weight:bold">%s</text>`+"\n", 10, html.EscapeString(title))
	x := func(v float64) float64 { return float64(labelW) + v/maxV*plotW }
	for i, b := range bars {
		y := top + i*rowH
		fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-8, y+barH-2, html.EscapeString(b.Label))
		fmt.Fprintf(&s, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#4878a8"/>`+"\n", labelW, y, x(b.Value)-float64(labelW), barH)
		if !math.IsNaN(b.Ref) {
			fmt.Fprintf(&s, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#d04020" stroke-width="2"/>`+"\n",
				x(b.Ref), x(b.Ref), y-3, y+barH+3)
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%d">%s</text>`+"\n", x(b.Value)+6, y+barH-2, format(b.Value)+unit)
	}
	axisY := top + rowH*len(bars) + 4
	fmt.Fprintf(&s, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>`+"\n", labelW, labelW+plotW, axisY, axisY)
	for _, t := range ticks(maxV) {
		fmt.Fprintf(&s, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="black"/>`+"\n", x(t), x(t), axisY, axisY+4)
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(t), axisY+16, format(t)+unit)
	}
	if refLabel != "" {
		fmt.Fprintf(&s, `<line x1="%d" x2="%d" y1="36" y2="36" stroke="#d04020" stroke-width="2"/>`+"\n", labelW, labelW+14)
		fmt.Fprintf(&s, `<text x="%d" y="40">%s</text>`+"\n", labelW+20, html.EscapeString(refLabel))
	}
	s.WriteString("</svg>\n")
	_, err := io.WriteString(w, s.String())
	return err
}

// ticks returns about five round values from 0 to max.
func ticks(max float64) []float64 {
	step := math.Pow(10, math.Floor(math.Log10(max/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if max/(step*m) <= 6 {
			step *= m
			break
		}
	}
	var t []float64
	for v := 0.0; v <= max*1.0001; v += step {
		t = append(t, v)
	}
	return t
}

func format(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Series is one line of a line chart.
type Series struct {
	Name string
	X, Y []float64
}

// palette cycles through distinguishable colours for the lines.
var palette = []string{"#4878a8", "#d04020", "#40a040", "#a040a0", "#e0a020", "#20a0a0",
	"#805020", "#606060", "#c06090", "#90b020", "#2040c0", "#c02060", "#50c0f0", "#000000"}

// Lines writes an SVG line chart of series against message size (a
// base-2 logarithmic x axis whose labels xTick writes), with yUnit as the
// y axis title: one panel of SizePanels, drawn by gonum.
func Lines(w io.Writer, title, yUnit string, xTick func(float64) string, series []Series) error {
	return sizePanels(w, "svg", title, []Panel{{YLabel: yUnit, Series: series}},
		func(n int64) string { return xTick(float64(n)) })
}
