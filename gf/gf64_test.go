package gf

import (
	"math/bits"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// mul64Ref multiplies bit by bit, reducing as it goes: the schoolbook
// definition, sharing nothing with Mul64.
func mul64Ref(a, b uint64) uint64 {
	var r uint64
	for range 64 {
		if b&1 == 1 {
			r ^= a
		}
		b >>= 1
		carry := a >> 63
		a <<= 1
		if carry == 1 {
			a ^= Poly64
		}
	}
	return r
}

func pow64Ref(a, n uint64) uint64 {
	r := uint64(1)
	for i := 63; i >= 0; i-- {
		r = mul64Ref(r, r)
		if n>>i&1 == 1 {
			r = mul64Ref(r, a)
		}
	}
	return r
}

// x has order exactly 2^64-1: x^(2^64-1) = 1 and x^((2^64-1)/q) ≠ 1 for
// every prime q dividing it, so p is primitive (and irreducible).
func TestGF64Primitive(t *testing.T) {
	primes := []uint64{3, 5, 17, 257, 641, 65537, 6700417}
	prod := uint64(1)
	for _, q := range primes {
		prod *= q
	}
	if prod != Order64 {
		t.Fatalf("factors multiply to %d", prod)
	}
	if pow64Ref(2, Order64) != 1 {
		t.Fatal("x^(2^64-1) ≠ 1")
	}
	for _, q := range primes {
		if pow64Ref(2, Order64/q) == 1 {
			t.Errorf("x^((2^64-1)/%d) = 1: not primitive", q)
		}
	}
}

func TestGF64Arithmetic(t *testing.T) {
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = 2000
	props := gopter.NewProperties(p)
	props.Property("Mul64 = schoolbook, both kernels", prop.ForAll(
		func(a, b uint64) bool {
			want := mul64Ref(a, b)
			return Mul64(a, b) == want && mul64Generic(a, b) == want && (!useCLMUL || mul64CLMUL(a, b) == want)
		}, gen.UInt64(), gen.UInt64()))
	props.Property("MulX64 = Mul64 by α", prop.ForAll(
		func(a uint64) bool { return MulX64(a) == mul64Ref(a, 2) }, gen.UInt64()))
	props.Property("Exp64 = α^n by squaring", prop.ForAll(
		func(n uint64) bool { return Exp64(n) == pow64Ref(2, n) }, gen.UInt64()))
	props.Property("MulExp64 = a·α^n", prop.ForAll(
		func(a uint64, n uint64, small uint8) bool {
			return MulExp64(a, n) == mul64Ref(a, pow64Ref(2, n)) &&
				MulExp64(a, uint64(small)) == mul64Ref(a, pow64Ref(2, uint64(small)))
		}, gen.UInt64(), gen.UInt64(), gen.UInt8()))
	props.Property("a·Inv64(a) = 1", prop.ForAll(
		func(a uint64) bool { return a == 0 || Mul64(a, Inv64(a)) == 1 }, gen.UInt64()))
	props.TestingRun(t)
	// Edges: every shift below 64, both sides of the byte boundaries of Exp64.
	for n := range uint64(70) {
		if MulExp64(^uint64(0), n) != mul64Ref(^uint64(0), pow64Ref(2, n)) {
			t.Errorf("MulExp64(all ones, %d)", n)
		}
	}
	for k := range 64 {
		for _, n := range []uint64{1 << k, 1<<k - 1, 1<<k + 1} {
			if Exp64(n) != pow64Ref(2, n) {
				t.Errorf("Exp64(%#x)", n)
			}
		}
	}
	if Exp64(Order64) != 1 || Inv64(1) != 1 || Inv64(2) != pow64Ref(2, Order64-1) {
		t.Error("edges of Exp64/Inv64")
	}
	if bits.OnesCount64(Exp64(1<<40)) < 8 {
		t.Error("α^(2^40) looks degenerate")
	}
	defer func() {
		if recover() == nil {
			t.Error("Inv64(0) did not panic")
		}
	}()
	Inv64(0)
}

func BenchmarkGF64(b *testing.B) {
	x, y := uint64(0x0123456789abcdef), uint64(0xfedcba9876543210)
	b.Run("op=mul", func(b *testing.B) {
		for b.Loop() {
			x = Mul64(x, y)
		}
	})
	b.Run("op=mul/kernel=generic", func(b *testing.B) {
		for b.Loop() {
			x = mul64Generic(x, y)
		}
	})
	b.Run("op=exp/n=1e12", func(b *testing.B) {
		for b.Loop() {
			x ^= Exp64(1e12 ^ x&1)
		}
	})
	b.Run("op=inv", func(b *testing.B) {
		for b.Loop() {
			x = Inv64(x | 1)
		}
	})
	sink64 = x
}

var sink64 uint64
