// Package progress draws a progress bar on a terminal for work that takes
// more than a second: nothing for quick work, nothing when the output is a
// file or a pipe, and at most ten redraws a second.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Bar is a progress bar. Its methods are safe for concurrent use and do
// nothing on a nil *Bar.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	unit    string // "B" for bytes (shown in MiB), "" for plain counts
	total   int64
	done    int64
	start   time.Time
	last    time.Time
	drawn   bool
	delay   time.Duration
	enabled bool
}

// New returns a bar for total units of work, drawn on w only if w is a
// terminal. unit "B" shows bytes as MiB; anything else shows counts.
func New(w io.Writer, label string, total int64, unit string) *Bar {
	return &Bar{w: w, label: label, unit: unit, total: total, start: time.Now(),
		delay: time.Second, enabled: IsTerminal(w)}
}

// IsTerminal reports whether w is a terminal (a character device).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// SetTotal changes the amount of work, when it is only known once begun.
func (b *Bar) SetTotal(total int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.total = total
	b.mu.Unlock()
}

// Add records n more units done.
func (b *Bar) Add(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	now := time.Now()
	if !b.enabled || now.Sub(b.start) < b.delay || now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last = now
	b.draw(now)
}

// Clear erases the bar, if it was drawn, so that other output (a row of
// results as it comes) takes its place on the terminal; the next Add
// draws it again below.
func (b *Bar) Clear() { b.Done() }

// Done clears the bar, if it was drawn.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
		b.drawn = false
	}
}

func (b *Bar) draw(now time.Time) {
	if b.total <= 0 { // an unknown amount (standard input): what is done, and how fast
		rate := float64(b.done) / max(now.Sub(b.start).Seconds(), 1e-3)
		count := fmt.Sprintf("%d, %.0f/s", b.done, rate)
		if b.unit == "B" {
			count = fmt.Sprintf("%.0f MiB, %.0f MiB/s", float64(b.done)/(1<<20), rate/(1<<20))
		}
		fmt.Fprintf(b.w, "\r\033[K%s %s", b.label, count)
		b.drawn = true
		return
	}
	const width = 30
	frac := 0.0
	if b.total > 0 {
		frac = min(1, float64(b.done)/float64(b.total))
	}
	fill := int(frac * width)
	elapsed := now.Sub(b.start)
	eta := ""
	if frac > 0 && frac < 1 {
		left := time.Duration(float64(elapsed) * (1 - frac) / frac)
		eta = fmt.Sprintf(", %s left", left.Round(time.Second))
	}
	count := fmt.Sprintf("%d/%d", b.done, b.total)
	if b.unit == "B" {
		count = fmt.Sprintf("%.0f/%.0f MiB", float64(b.done)/(1<<20), float64(b.total)/(1<<20))
	}
	fmt.Fprintf(b.w, "\r\033[K%s [%s%s] %3.0f%% %s%s", b.label,
		strings.Repeat("=", fill), strings.Repeat(" ", width-fill), 100*frac, count, eta)
	b.drawn = true
}
