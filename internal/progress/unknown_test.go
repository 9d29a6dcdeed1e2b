package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// With no total (standard input), the bar shows bytes and rate, never a
// percentage of a negative size ("0% 191/-0 MiB").
func TestUnknownTotalShowsBytesAndRate(t *testing.T) {
	for _, total := range []int64{-1, 0} {
		var buf bytes.Buffer
		b := New(&buf, "xxh3 -", total, "B")
		b.enabled, b.delay = true, 0
		b.Add(3 << 20)
		time.Sleep(110 * time.Millisecond)
		b.Add(3 << 20)
		out := buf.String()
		if !strings.Contains(out, "xxh3 - 6 MiB, ") || !strings.Contains(out, " MiB/s") || strings.Contains(out, "%") || strings.Contains(out, "-0") {
			t.Errorf("total %d: %q", total, out)
		}
	}
}
