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
