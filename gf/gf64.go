package gf

import (
	"math/bits"
	"sync"
)

// GF(2^64), for checksums whose multiplier must have an order beyond any
// count a uint64 can hold. The small fields of Field repeat with period
// 2^w-1, so a checksum Σ x_i·α^(n-i) over them forgets a run as soon as its
// length is a multiple of that period; here the period is 2^64-1.
//
// The field is GF(2)[x]/(p) with p = x^64 + x^4 + x^3 + x + 1, and α = x.
// p is primitive (the reciprocal of the taps 64, 63, 61, 60 of Xilinx's
// XAPP052 LFSR table; TestGF64Primitive checks that x has order exactly
// 2^64-1 = 3·5·17·257·641·65537·6700417), so α^n = 1 only for n ≡ 0
// (mod 2^64-1). Elements are uint64 values read as binary polynomials.
//
// Multiplication is a carry-less product, PCLMULQDQ on amd64 (gf64_amd64.s)
// or the portable one of clmul.go elsewhere, followed by a reduction that
// costs a few shifts, since p's low part has degree 4.

// Poly64 is the low part of GF(2^64)'s polynomial p = x^64 + Poly64.
const Poly64 = 0x1B

// Order64 is the order of GF(2^64)'s multiplicative group, 2^64-1.
const Order64 = ^uint64(0)

// reduce64 returns (hi·x^64 + lo) mod p.
func reduce64(hi, lo uint64) uint64 {
	// x^64 ≡ x^4 + x^3 + x + 1. hi·(x^4+x^3+x+1) spills the top bits of
	// hi into t (degree < 4), and t·x^64 folds back once more.
	t := hi>>63 ^ hi>>61 ^ hi>>60
	lo ^= hi ^ hi<<1 ^ hi<<3 ^ hi<<4
	return lo ^ t ^ t<<1 ^ t<<3 ^ t<<4
}

// Mul64 returns a·b in GF(2^64).
func Mul64(a, b uint64) uint64 {
	if useCLMUL {
		return mul64CLMUL(a, b)
	}
	return mul64Generic(a, b)
}

// mul64Generic is Mul64 in portable Go, the reference for mul64CLMUL.
func mul64Generic(a, b uint64) uint64 {
	hi, lo := clmul64(a, b)
	return reduce64(hi, lo)
}

// MulX64 returns a·α in GF(2^64): one shift and a conditional XOR, the
// step of a Horner checksum.
func MulX64(a uint64) uint64 {
	return a<<1 ^ Poly64&-(a>>63)
}

// MulExp64 returns a·α^n in GF(2^64). Below n = 64 it is a shift and a
// reduction; above, one product with Exp64(n).
func MulExp64(a, n uint64) uint64 {
	switch {
	case n == 0 || a == 0:
		return a
	case n < 64:
		return reduce64(a>>(64-n), a<<n)
	}
	return Mul64(a, Exp64(n))
}

// gf64Tables holds α^(b·2^(8k)) for each byte b of an exponent (Exp64), and
// the GF(2)-linear maps a → a^(2^j) for the j that Inv64's addition chain
// needs, byte by byte.
type gf64Tables struct {
	exp [8][256]uint64
	sq  [5][8][256]uint64 // a^(2^j) for j = sqShifts[i]
}

var sqShifts = [5]uint{1, 3, 6, 12, 24}

var gf64 = sync.OnceValue(func() *gf64Tables {
	t := new(gf64Tables)
	base := uint64(2) // α^(2^(8k))
	for k := range 8 {
		t.exp[k][0] = 1
		for b := 1; b < 256; b++ {
			t.exp[k][b] = Mul64(t.exp[k][b-1], base)
		}
		base = Mul64(t.exp[k][255], base)
	}
	for i, j := range sqShifts {
		// (x^e)^(2^j) = x^(e·2^j); squaring is linear, so a byte's image is
		// the XOR of its bits' images.
		var basis [64]uint64
		for e := range 64 {
			basis[e] = expTables(&t.exp, uint64(e)<<j)
		}
		for k := range 8 {
			for b := 1; b < 256; b++ {
				low := b & -b
				t.sq[i][k][b] = t.sq[i][k][b^low] ^ basis[8*k+bits.TrailingZeros(uint(low))]
			}
		}
	}
	return t
})

func expTables(t *[8][256]uint64, n uint64) uint64 {
	// The non-zero bytes' powers, multiplied pairwise: the products of a
	// level are independent, so the CPU overlaps them, and the chain is
	// ⌈log2⌉ of the bytes long instead of one product per byte.
	var v [8]uint64
	c := 0
	for k := 0; n != 0; k++ {
		if b := byte(n); b != 0 {
			v[c] = t[k][b]
			c++
		}
		n >>= 8
	}
	if c == 0 {
		return 1
	}
	for c > 1 {
		h := c / 2
		for i := range h {
			v[i] = Mul64(v[2*i], v[2*i+1])
		}
		if c&1 == 1 {
			v[h] = v[c-1]
		}
		c -= h
	}
	return v[0]
}

// Exp64 returns α^n in GF(2^64): one table load per non-zero byte of n and
// a product for each after the first.
func Exp64(n uint64) uint64 { return expTables(&gf64().exp, n) }

// sq64 returns a^(2^sqShifts[i]).
func (t *gf64Tables) sq64(i int, a uint64) uint64 {
	s := &t.sq[i]
	return s[0][byte(a)] ^ s[1][byte(a>>8)] ^ s[2][byte(a>>16)] ^ s[3][byte(a>>24)] ^
		s[4][byte(a>>32)] ^ s[5][byte(a>>40)] ^ s[6][byte(a>>48)] ^ s[7][byte(a>>56)]
}

// Inv64 returns 1/a in GF(2^64), a^(2^64-2), by Itoh and Tsujii's addition
// chain: a_k = a^(2^k-1) and a_(i+j) = a_i^(2^j)·a_j along 1, 2, 3, 6, 12,
// 24, 48, 60, 63, then one squaring; 8 products and 9 table-driven
// multi-squarings. Inv64(0) panics with ErrDivByZero.
func Inv64(a uint64) uint64 {
	if a == 0 {
		panic(ErrDivByZero)
	}
	t := gf64()
	a1 := a
	a2 := Mul64(t.sq64(0, a1), a1)
	a3 := Mul64(t.sq64(0, a2), a1)
	a6 := Mul64(t.sq64(1, a3), a3)
	a12 := Mul64(t.sq64(2, a6), a6)
	a24 := Mul64(t.sq64(3, a12), a12)
	a48 := Mul64(t.sq64(4, a24), a24)
	a60 := Mul64(t.sq64(3, a48), a12)
	a63 := Mul64(t.sq64(1, a60), a3)
	return t.sq64(0, a63)
}
