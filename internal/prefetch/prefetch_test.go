package prefetch

import "testing"

// Prefetching is a hint: whatever the slice, it must not fault or change
// a byte.
func TestBytesChangesNothing(t *testing.T) {
	b := make([]byte, 4096+13)
	for i := range b {
		b[i] = byte(i * 7)
	}
	for _, s := range [][]byte{nil, b[:0], b[:1], b[5:70], b[4000:], b} {
		Bytes(s)
	}
	for i := range b {
		if b[i] != byte(i*7) {
			t.Fatalf("byte %d changed", i)
		}
	}
}
