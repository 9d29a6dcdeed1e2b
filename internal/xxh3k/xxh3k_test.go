package xxh3k

import (
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/zeebo/xxh3"
)

func random(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

func params(n int) *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = n
	return p
}

// The kernels against the scalar reference, from random states and
// secrets.
func TestKernels(t *testing.T) {
	if !Available {
		t.Skip("no AVX-512 here: the scalar loops are all there is")
	}
	props := gopter.NewProperties(params(300))
	props.Property("AVX-512 = scalar", prop.ForAll(func(nblocks, nstripes, off int, seed uint64) bool {
		p := random(nblocks*Block+nstripes*Stripe, seed)
		s := seedSecret(seed) // any secret will do; this one is XXH3's own
		rng := rand.New(rand.NewPCG(seed, 8))
		var a Acc
		for i := range a {
			a[i] = rng.Uint64()
		}
		b := a
		blocks(&a, p, nblocks, s)
		blocksGeneric(&b, p, nblocks, s)
		k := s[off:]
		stripes(&a, p[nblocks*Block:], nstripes, k)
		stripesGeneric(&b, p[nblocks*Block:], nstripes, k)
		return a == b
	}, gen.IntRange(0, 5), gen.IntRange(0, 16), gen.IntRange(0, secretSize-Stripe-8*15), gen.UInt64()))
	props.TestingRun(t)
}

// The lengths at every edge of the block and stripe layout.
func edges() []int {
	n := []int{LongMin, 255, 256, 1000}
	for k := 1; k <= 5; k++ {
		for _, d := range []int{-65, -64, -63, -1, 0, 1, 63, 64, 65} {
			n = append(n, k*Block+d)
		}
	}
	return append(n, 100_003, 1<<17)
}

// Blocks, Tail and the sums equal zeebo/xxh3's one-shot hashes, with the
// kernels and with the scalar loops.
func TestSums(t *testing.T) {
	src := random(1<<17, 1)
	kernels := []bool{false}
	if Available {
		kernels = append(kernels, true)
	}
	defer func(k bool) { Available = k }(Available)
	for _, kernel := range kernels {
		Available = kernel
		for _, n := range edges() {
			p := src[:n]
			acc := Init
			Blocks(&acc, p[:WholeBlocks(n)*Block])
			Tail(&acc, p)
			if got, want := Sum64(&acc, n), xxh3.Hash(p); got != want {
				t.Errorf("kernel=%v n=%d: XXH3-64 %016x, want %016x", kernel, n, got, want)
			}
			lo, hi := Sum128(&acc, n)
			if want := xxh3.Hash128(p); lo != want.Lo || hi != want.Hi {
				t.Errorf("kernel=%v n=%d: XXH3-128 %016x%016x, want %016x%016x", kernel, n, hi, lo, want.Hi, want.Lo)
			}
		}
	}
}
