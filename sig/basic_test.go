package sig

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

// TestBasicCodes re-derives the codes from the rule in basic.go: they are
// part of every signature and of the wire format, and must never change.
func TestBasicCodes(t *testing.T) {
	used := map[uint64]bool{0: true, 63: true}
	for _, bt := range basicTypes {
		h := sha256.Sum256([]byte("sigcheck basic type " + bt.name))
		c := binary.BigEndian.Uint64(h[:8])
		low := c & 63
		for used[low] {
			low = (low + 1) & 63
		}
		used[low] = true
		if want := c&^63 | low; bt.code != want {
			t.Errorf("%s: code %#016x, the rule gives %#016x", bt.name, bt.code, want)
		}
	}
	// The property the rule is for: distinct, non-zero, not all ones at
	// every width from 6 bits up.
	for w := uint(6); w <= 64; w++ {
		mask := ^uint64(0) >> (64 - w)
		seen := map[uint64]string{}
		for _, bt := range basicTypes {
			x := bt.code & mask
			if x == 0 || x == mask {
				t.Errorf("w=%d: %s reduces to %#x", w, bt.name, x)
			}
			if other, dup := seen[x]; dup {
				t.Errorf("w=%d: %s and %s share %#x", w, bt.name, other, x)
			}
			seen[x] = bt.name
		}
	}
}
