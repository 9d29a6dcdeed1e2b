package gf

import (
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

func TestClmulMatchesReference(t *testing.T) {
	props := gopter.NewProperties(params(t, 2000))
	props.Property("clmul32 = schoolbook", prop.ForAll(func(a, b uint32) bool {
		hi, lo := clmulRef(uint64(a), uint64(b))
		return hi == 0 && clmul32(a, b) == lo
	}, gen.UInt32(), gen.UInt32()))
	props.Property("clmul64 = schoolbook", prop.ForAll(func(a, b uint64) bool {
		h1, l1 := clmul64(a, b)
		h2, l2 := clmulRef(a, b)
		return h1 == h2 && l1 == l2
	}, gen.UInt64(), gen.UInt64()))
	props.TestingRun(t)
	// Dense operands maximise the column sums the bit spreading must absorb.
	for _, v := range []uint64{^uint64(0), 0x8000000000000001, 0xAAAAAAAAAAAAAAAA} {
		h1, l1 := clmul64(v, v)
		h2, l2 := clmulRef(v, v)
		if h1 != h2 || l1 != l2 {
			t.Fatalf("clmul64(%#x, %#x)", v, v)
		}
	}
}

// CRC generator polynomials (with the x^w term where it fits) and random
// polynomials of every degree, against the schoolbook product.
func TestRingMulMatchesReference(t *testing.T) {
	type mod struct {
		w uint
		p uint64
	}
	mods := []mod{
		{16, 0x11021},            // CRC-16/CCITT, reducible
		{16, 0x18005},            // CRC-16/ARC
		{32, 0x1_04C1_1DB7},      // CRC-32
		{32, 0x1_1EDC_6F41},      // CRC-32C
		{64, 0x42F0E1EBA9EA3693}, // CRC-64/ECMA-182, x^64 implicit
		{64, 0x000000000000001B}, // CRC-64/ISO
		{1, 0b11}, {1, 0b10}, {3, 0b1011},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for w := uint(1); w <= 64; w++ {
		p := rng.Uint64()
		if w < 64 {
			p = p&(1<<w-1) | 1<<w
		}
		mods = append(mods, mod{w, p})
	}
	for _, m := range mods {
		r, err := NewRing(m.w, m.p)
		if err != nil {
			t.Fatalf("NewRing(%d, %#x): %v", m.w, m.p, err)
		}
		mask := ^uint64(0) >> (64 - m.w)
		for range 2000 {
			a, b := rng.Uint64()&mask, rng.Uint64()&mask
			if got, want := r.Mul(a, b), refMulMod(a, b, m.w, m.p); got != want {
				t.Fatalf("w=%d p=%#x: %#x·%#x = %#x, want %#x", m.w, m.p, a, b, got, want)
			}
		}
		// XPow against repeated multiplication by x.
		want := uint64(1) & mask
		if m.w == 1 {
			want = 1
		}
		for n := range uint64(300) {
			if got := r.XPow(n); got != want {
				t.Fatalf("w=%d p=%#x: x^%d = %#x, want %#x", m.w, m.p, n, got, want)
			}
			if got := r.Pow(r.XPow(1), n); got != want {
				t.Fatalf("w=%d p=%#x: Pow(x, %d) = %#x, want %#x", m.w, m.p, n, got, want)
			}
			want = refMulMod(want, 2&mask|refX(m.w, m.p), m.w, m.p)
		}
	}
}

// refX is x reduced modulo p (p = x + c when w = 1).
func refX(w uint, p uint64) uint64 {
	if w == 1 {
		return p & 1
	}
	return 0
}

func TestRingXPowExponentLaw(t *testing.T) {
	r, _ := NewRing(32, 0x1_04C1_1DB7)
	props := gopter.NewProperties(params(t, 500))
	props.Property("x^(m+n) = x^m·x^n", prop.ForAll(func(m, n uint32) bool {
		return r.XPow(uint64(m)+uint64(n)) == r.Mul(r.XPow(uint64(m)), r.XPow(uint64(n)))
	}, gen.UInt32(), gen.UInt32()))
	props.TestingRun(t)
}

func TestNewRingRejects(t *testing.T) {
	for _, c := range []struct {
		w uint
		p uint64
	}{{0, 1}, {65, 1}, {8, 0x300}, {16, 1 << 20}} {
		if _, err := NewRing(c.w, c.p); err == nil {
			t.Errorf("NewRing(%d, %#x) accepted", c.w, c.p)
		}
	}
}
