package csum

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/internal/xxh3k"
)

// The fused copy+XXH3 equals zeebo/xxh3's one-shot hashes at the edges of
// the block and stripe layout, with ordinary and non-temporal stores, to
// a destination on a 64-byte boundary (the streaming kernel's case) and
// off it (the pieces'). (internal/xxh3k tests its kernels against their
// scalar reference.)
func TestXXH3CopySum(t *testing.T) {
	lengths := []int{xxh3k.LongMin, 1000}
	for k := 1; k <= 4; k++ {
		for _, d := range []int{-64, -1, 0, 1, 64} {
			lengths = append(lengths, k*xxh3k.Block+d)
		}
	}
	lengths = append(lengths, 100_003)
	rng := rand.New(rand.NewPCG(1, 2))
	src := ramp(100_003, func(int) byte { return byte(rng.Uint32()) })
	buf := make([]byte, 100_003+128)
	base := int(-uintptr(unsafe.Pointer(&buf[0])) & 63)
	for _, n := range lengths {
		p := src[:n]
		want64, want128 := xxh3.Hash(p), xxh3.Hash128(p)
		for _, doff := range []int{0, 1, 8} {
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("n=%d/dst+%d/stream=%v", n, doff, stream)
				dst := buf[base+doff : base+doff+n+1]
				dst[n] = 0
				if v := xxh3CopySum(dst, p, stream, false); v != (Value{Lo: want64}) || !bytes.Equal(dst[:n], p) || dst[n] != 0 {
					t.Errorf("%s: XXH3-64 %016x, want %016x (or the copy differs)", name, v.Lo, want64)
				}
				if v := xxh3CopySum(dst, p, stream, true); v != (Value{Lo: want128.Lo, Hi: want128.Hi}) {
					t.Errorf("%s: XXH3-128 %016x%016x, want %016x%016x", name, v.Hi, v.Lo, want128.Hi, want128.Lo)
				}
			}
		}
	}
}

// CopySum with overlapping buffers does what copy does and returns the
// checksum of what src held, for every algorithm, at sizes on both sides
// of the fused kernels' and the streaming copy's thresholds.
func TestCopySumOverlap(t *testing.T) {
	defer func(m int) { streamMin = m }(streamMin)
	streamMin = 64 << 10
	rng := rand.New(rand.NewPCG(3, 4))
	orig := ramp(400_000, func(int) byte { return byte(rng.Uint32()) })
	for _, a := range All() {
		for _, n := range []int{100, 5000, 100_000} {
			for _, shift := range []int{-1000, -1, 1, 1000} {
				buf := bytes.Clone(orig)
				so := 150_000
				want, wantBuf := a.Sum(buf[so:so+n]), bytes.Clone(buf)
				copy(wantBuf[so+shift:so+shift+n], wantBuf[so:so+n])
				if v := a.CopySum(buf[so+shift:so+shift+n], buf[so:so+n]); v != want || !bytes.Equal(buf, wantBuf) {
					t.Errorf("%s: %d bytes to %+d: %s, want %s (or the buffer differs from copy's)", a.Name, n, shift, a.Format(v), a.Format(want))
				}
			}
		}
	}
}
