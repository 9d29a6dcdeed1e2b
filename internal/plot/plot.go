// Package plot draws the sigcheck command's charts: what a person would
// rather look at than read in a table. Measures against message size
// (SizePanels, Lines) are drawn with gonum.org/v1/plot, whose layout keeps
// axis titles, tick labels and legends from colliding, and the horizontal
// bar chart (Bars) on gonum's canvases too: each as SVG, PNG or PDF, with
// the fonts gonum carries, text in SVG drawn as outlines (canvas.go).
//
// It is not a general plotting library: the x axis is always a message
// size, base 2, and the styles are fixed.
package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bar is one bar of a horizontal bar chart. Ref, when not NaN, is drawn as
// a tick across the bar: a reference value to compare it with.
type Bar struct {
	Label string
	Value float64
	Ref   float64
}

// Bars writes a horizontal bar chart of bars in kind ("svg", "png" or
// "pdf"; see Format), scaled to the largest value (or reference), with
// the values printed at the ends of the bars and refLabel naming the
// reference ticks. Every text is measured with the font that draws it,
// so the labels' column and the margins fit them whole.
func Bars(w io.Writer, kind, title, unit, refLabel string, bars []Bar) (err error) {
	defer func() {
		if r := recover(); r != nil { // gonum panics on what it cannot draw
			err = fmt.Errorf("cannot draw the chart: %v", r)
		}
	}()
	// Regular weight only, as the other charts: gonum's PDF canvas
	// (v0.17) registers a bold face under the regular style's name and
	// then cannot find it.
	text := func(size vg.Length) draw.TextStyle {
		ts := gplot.New().Title.TextStyle // the default font and text handler
		ts.Font.Size = size
		ts.YAlign = draw.YCenter
		return ts
	}
	var (
		titleStyle = text(14)
		labelStyle = text(10)
		margin     = vg.Points(8)
		rowH       = vg.Points(17)
		barH       = vg.Points(11)
		plotW      = vg.Points(360)
		gap        = vg.Points(6) // between a label, its bar and its value
	)
	labelStyle.XAlign = draw.XRight
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
	var labelW, valueW vg.Length
	for _, b := range bars {
		labelW = max(labelW, labelStyle.Width(b.Label))
		valueW = max(valueW, labelStyle.Width(format(b.Value)+unit))
	}
	ts := ticks(maxV)
	// The last tick's label is centred on the axis's end.
	valueW = max(valueW, labelStyle.Width(format(ts[len(ts)-1])+unit)/2)
	lineH := labelStyle.FontExtents().Height
	titleH := titleStyle.FontExtents().Height
	top := margin + titleH + vg.Points(4) // the title, then the reference's key
	if refLabel != "" {
		top += lineH + vg.Points(4)
	}
	left := margin + labelW + gap
	width := max(left+plotW+gap+valueW+margin, margin+titleStyle.Width(title)+margin)
	height := top + rowH*vg.Length(len(bars)) + vg.Points(6) + lineH + margin
	c, write, err := newCanvas(kind, width, height)
	if err != nil {
		return err
	}
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	// y from the top down, as one reads the chart.
	at := func(x vg.Length, yDown vg.Length) vg.Point { return vg.Point{X: x, Y: height - yDown} }
	x := func(v float64) vg.Length { return left + vg.Length(v/maxV)*plotW }
	titleStyle.XAlign = draw.XLeft
	c.FillText(titleStyle, at(margin, margin+titleH/2), title)
	red, blue := parseHex("#d04020"), parseHex("#4878a8")
	ref := draw.LineStyle{Color: red, Width: vg.Points(2)}
	if refLabel != "" {
		y := margin + titleH + vg.Points(4) + lineH/2
		c.StrokeLine2(ref, left, height-y, left+vg.Points(14), height-y)
		key := labelStyle
		key.XAlign = draw.XLeft
		c.FillText(key, at(left+vg.Points(20), y), refLabel)
	}
	valueStyle := labelStyle
	valueStyle.XAlign = draw.XLeft
	for i, b := range bars {
		mid := top + rowH*vg.Length(i) + rowH/2
		c.FillText(labelStyle, at(left-gap, mid), b.Label)
		if b.Value > 0 {
			c.SetColor(blue)
			c.Fill(vg.Rectangle{Min: at(left, mid+barH/2), Max: at(x(b.Value), mid-barH/2)}.Path())
		}
		if !math.IsNaN(b.Ref) {
			c.StrokeLine2(ref, x(b.Ref), height-(mid-barH/2-2), x(b.Ref), height-(mid+barH/2+2))
		}
		c.FillText(valueStyle, at(x(b.Value)+gap, mid), format(b.Value)+unit)
	}
	axis := top + rowH*vg.Length(len(bars)) + vg.Points(2)
	black := draw.LineStyle{Color: color.Black, Width: vg.Points(0.75)}
	c.StrokeLine2(black, left, height-axis, left+plotW, height-axis)
	tickStyle := labelStyle
	tickStyle.XAlign = draw.XCenter
	for _, t := range ts {
		c.StrokeLine2(black, x(t), height-axis, x(t), height-axis-vg.Points(3))
		c.FillText(tickStyle, at(x(t), axis+vg.Points(4)+lineH/2), format(t)+unit)
	}
	return write(w)
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
