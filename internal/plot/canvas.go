package plot

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Text in an SVG figure is drawn as the outlines of the glyphs that the
// layout measured. gonum lays text out with the widths of the Liberation
// fonts it carries, while an SVG names a font that the viewer must have:
// where Liberation Serif is missing a viewer substitutes another (DejaVu
// Serif on a bare Debian, some 15 % wider), and titles, tick labels and
// legends overrun their room and are cut at the figure's edge. Outlines
// are drawn alike by every viewer. Each glyph is defined once, in the
// font's units, and placed with <use>; each string is also kept as a
// transparent <text> at its place, so that the figure's words can still
// be searched, selected and read by a screen reader. (Embedding the font
// as @font-face data would keep the text but add 400 KB a face, and
// librsvg, the renderer of ImageMagick and GNOME, ignores it.) PNG and
// PDF need nothing of the kind: vgimg rasterizes with the same font and
// vgpdf embeds it. But vgpdf (v0.17) writes strings in code page 1252
// while Go's are UTF-8, so "µs" came out as "Âµs" and "–" as three
// letters, wider than the layout's room: in PDF too text is drawn as
// outlines (not selectable there; vgpdf cannot write invisible text).

// newCanvas returns a canvas of width × height in format ("svg", "png"
// or "pdf") and a function that writes it out.
func newCanvas(format string, width, height vg.Length) (draw.Canvas, func(io.Writer) error, error) {
	switch format {
	case "svg":
		c := &outlined{Canvas: vgsvg.New(width, height), ids: map[glyphKey]int{}}
		return draw.New(c), c.writeTo, nil
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))
		return draw.New(c), writer(vgimg.PngCanvas{Canvas: c}), nil
	case "pdf":
		c := pathsPDF{vgpdf.New(width, height)}
		return draw.New(c), writer(c), nil
	}
	return draw.Canvas{}, nil, fmt.Errorf("%q: %w", format, ErrFormat)
}

func writer(c io.WriterTo) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	}
}

// outlined is an SVG canvas that draws text as glyph outlines. vgsvg
// writes each string as a <text> element, at its place among the
// drawing's groups and transforms; FillString hands it a marker instead
// of the string, and writeTo puts the glyphs and the string there.
type outlined struct {
	*vgsvg.Canvas
	ids    map[glyphKey]int // the glyphs defined, by font and index
	glyphs []string         // each one's path data, in font units, y down
	runs   []run            // the strings drawn, by marker
}

type glyphKey struct {
	font  string
	index sfnt.GlyphIndex
}

// run is one string: its glyphs, where they go, and the string itself.
type run struct {
	text  string
	x, y  float64 // the baseline's start, in points
	scale float64 // points per font unit
	ids   []int
	dx    []int // each glyph's offset along the baseline, in font units
}

// Markers are private-use runes, which html.EscapeString (vgsvg's) keeps.
var marked = regexp.MustCompile("<text ([^>]*)>\uE000([0-9]+)\uE001</text>")

var fillColor = regexp.MustCompile(`fill:(#[0-9A-Fa-f]{6})`)

// FillString lays str out as gonum measured it (font.Face.Width:
// advances and kerning in font units) and leaves a marker for writeTo.
func (c *outlined) FillString(f font.Face, pt vg.Point, str string) {
	if f.Font.Size == 0 || str == "" {
		return
	}
	r := run{text: str, x: pt.X.Points(), y: pt.Y.Points(), scale: f.Font.Size.Points() / float64(f.Face.UnitsPerEm())}
	if err := c.layout(f, &r); err != nil {
		panic(fmt.Errorf("plot: the glyphs of %q: %v", str, err)) // the drawing functions recover it into an error
	}
	c.runs = append(c.runs, r)
	c.Canvas.FillString(f, pt, fmt.Sprintf("\uE000%d\uE001", len(c.runs)-1))
}

func (c *outlined) layout(f font.Face, r *run) error {
	return glyphs(f, r.text, func(idx sfnt.GlyphIndex, x fixed.Int26_6, outline func() (sfnt.Segments, error)) error {
		key := glyphKey{f.Font.Name(), idx}
		id, ok := c.ids[key]
		if !ok {
			segs, err := outline()
			if err != nil {
				return err
			}
			id = len(c.glyphs)
			c.ids[key] = id
			c.glyphs = append(c.glyphs, pathData(segs))
		}
		if c.glyphs[id] != "" { // a space has no outline
			r.ids, r.dx = append(r.ids, id), append(r.dx, int(x))
		}
		return nil
	})
}

// glyphs lays str out in f as gonum measures it (font.Face.Width:
// advances and kerning in font units) and calls each with every glyph,
// its offset from the start in font units, and a function that loads its
// outline in font units, y down.
func glyphs(f font.Face, str string, each func(idx sfnt.GlyphIndex, x fixed.Int26_6, outline func() (sfnt.Segments, error)) error) error {
	var (
		buf  sfnt.Buffer
		ppem = fixed.Int26_6(f.Face.UnitsPerEm()) // so that a 26.6 value is a font unit
		x    fixed.Int26_6
		prev sfnt.GlyphIndex
	)
	for i, ch := range []rune(str) {
		idx, err := f.Face.GlyphIndex(&buf, ch)
		if err != nil {
			return err
		}
		if i > 0 {
			k, err := f.Face.Kern(&buf, prev, idx, ppem, xfont.HintingNone)
			if err != nil && !errors.Is(err, sfnt.ErrNotFound) {
				return err
			}
			x += k
		}
		outline := func() (sfnt.Segments, error) { return f.Face.LoadGlyph(&buf, idx, ppem, nil) }
		if err := each(idx, x, outline); err != nil {
			return err
		}
		adv, err := f.Face.GlyphAdvance(&buf, idx, ppem, xfont.HintingNone)
		if err != nil {
			return err
		}
		x += adv
		prev = idx
	}
	return nil
}

// pathsPDF is a PDF canvas that fills text's glyph outlines.
type pathsPDF struct{ *vgpdf.Canvas }

func (c pathsPDF) FillString(f font.Face, pt vg.Point, str string) {
	if f.Font.Size == 0 {
		return
	}
	scale := f.Font.Size.Points() / float64(f.Face.UnitsPerEm()) // points per font unit
	var path vg.Path
	err := glyphs(f, str, func(_ sfnt.GlyphIndex, x fixed.Int26_6, outline func() (sfnt.Segments, error)) error {
		segs, err := outline()
		if err != nil {
			return err
		}
		at := func(p fixed.Point26_6) vg.Point {
			return vg.Point{X: pt.X + vg.Length(float64(x+p.X)*scale), Y: pt.Y - vg.Length(float64(p.Y)*scale)}
		}
		for i, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if i > 0 {
					path.Close()
				}
				path.Move(at(s.Args[0]))
			case sfnt.SegmentOpLineTo:
				path.Line(at(s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(at(s.Args[0]), at(s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(at(s.Args[0]), at(s.Args[1]), at(s.Args[2]))
			}
		}
		if len(segs) > 0 {
			path.Close()
		}
		return nil
	})
	if err != nil {
		panic(fmt.Errorf("plot: the glyphs of %q: %v", str, err)) // the drawing functions recover it into an error
	}
	if len(path) > 0 {
		c.Canvas.Fill(path)
	}
}

// pathData writes a glyph's outline as SVG path data, in font units.
func pathData(segs sfnt.Segments) string {
	var b strings.Builder
	pt := func(p fixed.Point26_6) { fmt.Fprintf(&b, "%d %d", p.X, p.Y) }
	for i, s := range segs {
		switch s.Op {
		case sfnt.SegmentOpMoveTo:
			if i > 0 {
				b.WriteString("Z")
			}
			b.WriteString("M")
			pt(s.Args[0])
		case sfnt.SegmentOpLineTo:
			b.WriteString("L")
			pt(s.Args[0])
		case sfnt.SegmentOpQuadTo:
			b.WriteString("Q")
			pt(s.Args[0])
			b.WriteString(" ")
			pt(s.Args[1])
		case sfnt.SegmentOpCubeTo:
			b.WriteString("C")
			pt(s.Args[0])
			b.WriteString(" ")
			pt(s.Args[1])
			b.WriteString(" ")
			pt(s.Args[2])
		}
	}
	if len(segs) > 0 {
		b.WriteString("Z")
	}
	return b.String()
}

func (c *outlined) writeTo(w io.Writer) error {
	var b bytes.Buffer
	if _, err := c.Canvas.WriteTo(&b); err != nil {
		return err
	}
	svg := b.Bytes()
	var bad error
	svg = marked.ReplaceAllFunc(svg, func(m []byte) []byte {
		sub := marked.FindSubmatch(m)
		i, err := strconv.Atoi(string(sub[2]))
		if err != nil || i >= len(c.runs) {
			bad = fmt.Errorf("plot: a text marker %q that was not drawn", sub[2])
			return m
		}
		r := c.runs[i]
		fill := "#000000" // vgsvg leaves out the default
		if f := fillColor.FindSubmatch(sub[1]); f != nil {
			fill = string(f[1])
		}
		var out bytes.Buffer
		// Font units, y down, to the canvas's points, y up.
		fmt.Fprintf(&out, `<g fill="%s" transform="translate(%.5g %.5g) scale(%.5g %.5g)">`, fill, r.x, r.y, r.scale, -r.scale)
		for k, id := range r.ids {
			fmt.Fprintf(&out, `<use xlink:href="#g%d" x="%d"/>`, id, r.dx[k])
		}
		fmt.Fprintf(&out, "</g>\n<text fill-opacity=\"0\" %s>%s</text>", sub[1], html.EscapeString(r.text))
		return out.Bytes()
	})
	if bad != nil {
		return bad
	}
	// The glyphs, defined at the top of the document.
	var defs bytes.Buffer
	defs.WriteString("<defs>\n")
	for id, d := range c.glyphs {
		if d != "" {
			fmt.Fprintf(&defs, "<path id=\"g%d\" d=\"%s\"/>\n", id, d)
		}
	}
	defs.WriteString("</defs>\n")
	start := bytes.Index(svg, []byte("<svg"))
	end := bytes.IndexByte(svg[max(start, 0):], '>')
	if start < 0 || end < 0 {
		return errors.New("plot: vgsvg wrote no <svg> element")
	}
	at := start + end + 1
	if at < len(svg) && svg[at] == '\n' {
		at++
	}
	if _, err := w.Write(svg[:at]); err != nil {
		return err
	}
	if _, err := defs.WriteTo(w); err != nil {
		return err
	}
	_, err := w.Write(svg[at:])
	return err
}
