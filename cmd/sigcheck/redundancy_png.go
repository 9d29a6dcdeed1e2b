package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"strings"

	"github.com/sigcheck/sigcheck/channel/replicate"
)

// The taint heatmap of sigcheck redundancy taint, drawn with the standard
// library alone: ranks down, steps across, a cell per (rank, step)
// coloured by taint, the corrupt messages of each step as bars under it,
// labelled axes and a legend, text in a 5×7 pixel font of its own.

var (
	colClean    = color.RGBA{0xf2, 0xf2, 0xf2, 0xff}
	colIndirect = color.RGBA{0xf5, 0xa6, 0x23, 0xff}
	colDirect   = color.RGBA{0xc6, 0x28, 0x28, 0xff}
	colBar      = color.RGBA{0x1f, 0x5f, 0xbf, 0xff}
	colInk      = color.RGBA{0x20, 0x20, 0x20, 0xff}
	colGrid     = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

func writeTaintPNG(w io.Writer, title string, taint [][]replicate.Taint, bad []int) error {
	ranks, steps := len(taint), len(bad)
	if ranks == 0 || steps == 0 {
		return fmt.Errorf("no taint to draw")
	}
	cw := max(2, min(12, 900/steps)) // cell width
	ch := max(6, min(22, 400/ranks)) // cell height
	const scale = 2                  // font pixels per dot
	const left, top = 110, 60
	barH := 80
	width := left + steps*cw + 70
	mapH := ranks * ch
	height := top + mapH + 50 + barH + 50 + 60
	img := image.NewRGBA(image.Rect(0, 0, max(width, 760), height))
	fill(img, img.Bounds(), color.White)
	text(img, 10, 12, title, scale, colInk)
	// The map.
	for v := range ranks {
		for s := range steps {
			c := colClean
			switch taint[v][s] {
			case replicate.Direct:
				c = colDirect
			case replicate.Indirect:
				c = colIndirect
			}
			x, y := left+s*cw, top+v*ch
			fill(img, image.Rect(x, y, x+cw, y+ch), c)
			if ch >= 8 {
				fill(img, image.Rect(x, y+ch-1, x+cw, y+ch), colGrid)
			}
		}
	}
	// Rank axis: a label every few ranks.
	every := max(1, (ranks*18+mapH-1)/mapH)
	for v := 0; v < ranks; v += every {
		label := fmt.Sprint(v)
		text(img, left-8-len(label)*6*scale, top+v*ch+(ch-7*scale)/2, label, scale, colInk)
	}
	vtext(img, 12, top+mapH/2+30, "RANK", scale, colInk)
	// Step axis under the map, and again under the bars.
	stepTicks := func(y int) {
		tick := niceTick(steps, steps*cw/70)
		for s := 0; s < steps; s += tick {
			x := left + s*cw + cw/2
			fill(img, image.Rect(x, y, x+1, y+5), colInk)
			label := fmt.Sprint(s)
			text(img, x-len(label)*3*scale, y+8, label, scale, colInk)
		}
	}
	stepTicks(top + mapH + 2)
	text(img, left+steps*cw+8, top+mapH+8, "STEP", scale, colInk)
	// Bars: corrupt messages per step.
	by := top + mapH + 50
	most := 1
	for _, b := range bad {
		most = max(most, b)
	}
	fill(img, image.Rect(left, by+barH, left+steps*cw, by+barH+1), colInk)
	for s, b := range bad {
		h := b * barH / most
		fill(img, image.Rect(left+s*cw, by+barH-h, left+s*cw+max(1, cw-1), by+barH), colBar)
	}
	text(img, left-8-len(fmt.Sprint(most))*6*scale, by-2, fmt.Sprint(most), scale, colInk)
	text(img, left-8-6*scale, by+barH-7*scale, "0", scale, colInk)
	vtext(img, 12, by+barH, "MSGS", scale, colInk)
	stepTicks(by + barH + 2)
	text(img, left+steps*cw+8, by+barH+8, "STEP", scale, colInk)
	// Legend, two by two.
	for i, item := range []struct {
		c    color.Color
		name string
	}{{colDirect, "tainted: bit flipped here"}, {colIndirect, "tainted: got corrupt data"}, {colClean, "clean"}, {colBar, "corrupt messages per step"}} {
		x, y := 10+(i%2)*380, height-52+(i/2)*22
		fill(img, image.Rect(x, y, x+14, y+14), colInk)
		fill(img, image.Rect(x+1, y+1, x+13, y+13), item.c)
		text(img, x+20, y, item.name, scale, colInk)
	}
	return png.Encode(w, img)
}

// niceTick is a step between labels of 1, 2, 5 × 10^k, about n labels.
func niceTick(steps, n int) int {
	n = max(1, n)
	for _, base := range []int{1, 10, 100, 1000, 10000} {
		for _, m := range []int{1, 2, 5} {
			if t := base * m; steps/t <= n {
				return t
			}
		}
	}
	return steps
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.Set(x, y, c)
		}
	}
}

// text draws s (upper-cased) with its top-left corner at (x, y).
func text(img *image.RGBA, x, y int, s string, scale int, c color.Color) {
	for _, r := range strings.ToUpper(s) {
		g, ok := font5x7[r]
		if !ok {
			g = font5x7['?']
		}
		for row, bits := range g {
			for col, b := range bits {
				if b == '#' {
					fill(img, image.Rect(x+col*scale, y+row*scale, x+(col+1)*scale, y+(row+1)*scale), c)
				}
			}
		}
		x += 6 * scale
	}
}

// vtext draws s upwards, its baseline on x, ending at y (an axis label).
func vtext(img *image.RGBA, x, y int, s string, scale int, c color.Color) {
	for i, r := range strings.ToUpper(s) {
		g, ok := font5x7[r]
		if !ok {
			g = font5x7['?']
		}
		for row, bits := range g {
			for col, b := range bits {
				if b == '#' {
					px := x + row*scale
					py := y - i*6*scale - col*scale
					fill(img, image.Rect(px, py-scale, px+scale, py), c)
				}
			}
		}
	}
}

var font5x7 = map[rune][7]string{
	' ': {".....", ".....", ".....", ".....", ".....", ".....", "....."},
	'?': {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."},
	'.': {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."},
	',': {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."},
	':': {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."},
	'-': {".....", ".....", ".....", "#####", ".....", ".....", "....."},
	'(': {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."},
	')': {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."},
	'/': {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."},
	'=': {".....", ".....", "#####", ".....", "#####", ".....", "....."},
	'0': {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
	'1': {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'2': {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
	'3': {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."},
	'4': {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
	'5': {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
	'6': {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
	'7': {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
	'8': {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
	'9': {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
	'A': {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},
	'B': {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."},
	'C': {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."},
	'D': {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."},
	'E': {"#####", "#....", "#....", "####.", "#....", "#....", "#####"},
	'F': {"#####", "#....", "#....", "####.", "#....", "#....", "#...."},
	'G': {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"},
	'H': {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"},
	'I': {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'J': {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."},
	'K': {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"},
	'L': {"#....", "#....", "#....", "#....", "#....", "#....", "#####"},
	'M': {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"},
	'N': {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"},
	'O': {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},
	'P': {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."},
	'Q': {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"},
	'R': {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"},
	'S': {".####", "#....", "#....", ".###.", "....#", "....#", "####."},
	'T': {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."},
	'U': {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."},
	'V': {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."},
	'W': {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."},
	'X': {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"},
	'Y': {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."},
	'Z': {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"},
}
