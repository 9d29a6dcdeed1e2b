package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestBarDrawsOnlyOnTerminalsAfterTheDelay(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "hashing", 100, "")
	b.Add(50)
	b.Done()
	if buf.Len() != 0 || IsTerminal(&buf) {
		t.Fatalf("drew on a buffer: %q", buf.String())
	}
	// Forced on, as on a terminal, with no delay.
	b = New(&buf, "hashing", 4<<20, "B")
	b.enabled, b.delay = true, 0
	b.Add(1 << 20)
	time.Sleep(110 * time.Millisecond)
	b.Add(1 << 20)
	out := buf.String()
	if !strings.Contains(out, "hashing [") || !strings.Contains(out, "50%") || !strings.Contains(out, "2/4 MiB") {
		t.Errorf("bar %q", out)
	}
	b.Done()
	if !strings.HasSuffix(buf.String(), "\r\033[K") {
		t.Error("Done did not clear the bar")
	}
	var nilBar *Bar
	nilBar.Add(1)
	nilBar.Done()
}

// Clear erases a drawn bar so a line of output can take its place, and
// the next Add draws it again.
func TestClearThenRedraw(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, "run", 10, "")
	b.enabled, b.delay = true, 0
	b.Add(1)
	b.Clear()
	if !strings.HasSuffix(buf.String(), "\r\033[K") {
		t.Fatalf("Clear left %q", buf.String())
	}
	buf.Reset()
	b.Clear() // nothing drawn: nothing written
	time.Sleep(110 * time.Millisecond)
	b.Add(1)
	if !strings.Contains(buf.String(), "2/10") {
		t.Errorf("no redraw after Clear: %q", buf.String())
	}
}
