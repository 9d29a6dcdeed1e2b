package csum

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/zeebo/xxh3"
)

// The block kernel against the scalar reference, from random states.
func TestXXH3Kernel(t *testing.T) {
	if !haveXXH3Kernel {
		t.Skip("no AVX-512 here: CopySum streams through zeebo/xxh3")
	}
	props := gopter.NewProperties(params(200))
	props.Property("AVX-512 blocks = scalar blocks", prop.ForAll(func(blocks int, seed uint64) bool {
		rng := rand.New(rand.NewPCG(seed, 7))
		p := ramp(blocks*xxh3Block, func(int) byte { return byte(rng.Uint32()) })
		var a xxh3Acc
		for i := range a {
			a[i] = rng.Uint64()
		}
		b := a
		xxh3Blocks(&a, p)
		xxh3BlocksGeneric(&b, p, blocks)
		return a == b
	}, gen.IntRange(0, 9), gen.UInt64()))
	props.TestingRun(t)
}

// The fused copy+XXH3 equals zeebo/xxh3's one-shot hashes at every edge
// of the block and stripe layout, for pieces that do and do not divide
// the block, with ordinary and non-temporal copies, with the kernel and
// with the scalar reference.
func TestXXH3CopySum(t *testing.T) {
	lengths := []int{xxh3LongMin, 255, 256, 1000}
	for k := 1; k <= 5; k++ {
		for _, d := range []int{-65, -64, -63, -1, 0, 1, 63, 64, 65} {
			lengths = append(lengths, k*xxh3Block+d)
		}
	}
	lengths = append(lengths, 100_003, 1<<17)
	rng := rand.New(rand.NewPCG(1, 2))
	src := ramp(1<<17, func(int) byte { return byte(rng.Uint32()) })
	kernels := []bool{false}
	if haveXXH3Kernel {
		kernels = append(kernels, true)
	}
	defer func(k bool) { haveXXH3Kernel = k }(haveXXH3Kernel)
	for _, kernel := range kernels {
		haveXXH3Kernel = kernel
		for _, n := range lengths {
			p := src[:n]
			want64, want128 := xxh3.Hash(p), xxh3.Hash128(p)
			for _, piece := range []int{xxh3Block, 1536, 4096, CopyChunk} {
				for _, stream := range []bool{false, true} {
					name := fmt.Sprintf("kernel=%v/n=%d/piece=%d/stream=%v", kernel, n, piece, stream)
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
}
