package csum

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/internal/xxh3k"
)

// The fused copy+XXH3 equals zeebo/xxh3's one-shot hashes at the edges of
// the block and stripe layout, for pieces that do and do not divide the
// block, with ordinary and non-temporal copies. (internal/xxh3k tests its
// kernels against their scalar reference.)
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
	for _, n := range lengths {
		p := src[:n]
		want64, want128 := xxh3.Hash(p), xxh3.Hash128(p)
		for _, piece := range []int{xxh3k.Block, 1536, xxh3Piece, CopyChunk} {
			for _, stream := range []bool{false, true} {
				name := fmt.Sprintf("n=%d/piece=%d/stream=%v", n, piece, stream)
				dst := make([]byte, n+1)
				if v := xxh3CopySum(dst, p, piece, stream, false); v != (Value{Lo: want64}) || !bytes.Equal(dst[:n], p) || dst[n] != 0 {
					t.Errorf("%s: XXH3-64 %016x, want %016x (or the copy differs)", name, v.Lo, want64)
				}
				if v := xxh3CopySum(dst, p, piece, stream, true); v != (Value{Lo: want128.Lo, Hi: want128.Hi}) {
					t.Errorf("%s: XXH3-128 %016x%016x, want %016x%016x", name, v.Hi, v.Lo, want128.Hi, want128.Lo)
				}
			}
		}
	}
}
