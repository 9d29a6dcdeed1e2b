package gf

import (
	"fmt"
	"math/bits"
)

// Ring is the ring of binary polynomials modulo a polynomial p of degree w,
// GF(2)[x]/(p), for 1 ≤ w ≤ 64. An element is a polynomial of degree < w
// held in the low w bits of a uint64 (bit i is the coefficient of x^i).
//
// When p is primitive the ring is the field GF(2^w); Field builds on Ring
// for w > 16. When p is not even irreducible (CRC-16/CCITT's 0x1021 is
// (x+1) times a primitive polynomial) Ring is still the arithmetic a CRC
// needs: the CRC of A‖B is derived from the CRCs of A and B by one
// multiplication by x^(8·len(B)) mod p, which is what XPow computes.
//
// A Ring is immutable and safe for concurrent use.
type Ring struct {
	w    uint
	low  uint64 // p without its x^w term: x^w ≡ low (mod p)
	mask uint64 // 2^w - 1

	// red[k][b] = b(x)·x^(w+8k) mod p. The part of a product at and above
	// x^w is at most w-1 bits; its bytes are folded back below x^w with
	// one lookup each, so a reduction is ⌈(w-1)/8⌉ loads and XORs.
	red  [8][256]uint64
	nred int

	// xpow[k] = x^(2^k) mod p, so XPow(n) is a product over the set bits of n.
	xpow [64]uint64
}

// NewRing returns GF(2)[x]/(p) for the polynomial p of degree w. The x^w
// term of p may be given or left implicit; for w = 64 it must be left
// implicit, since it does not fit. Any other bit at or above w is an error.
func NewRing(w uint, p uint64) (*Ring, error) {
	if w < 1 || w > 64 {
		return nil, fmt.Errorf("gf: ring degree %d out of range [1, 64]", w)
	}
	r := &Ring{w: w, mask: ^uint64(0) >> (64 - w)}
	if w < 64 {
		if p>>w > 1 {
			return nil, fmt.Errorf("gf: polynomial %#x has degree above %d", p, w)
		}
		p &= r.mask
	}
	r.low = p

	// base = x^(w+i) mod p for i = 0, 1, ...: multiply by x, reduce.
	base := r.low
	r.nred = (int(w) - 1 + 7) / 8
	for k := range r.nred {
		var pow [8]uint64
		for i := range 8 {
			pow[i] = base
			base = r.timesX(base)
		}
		for b := 1; b < 256; b++ {
			// b = (b with its lowest set bit cleared) + that bit.
			i := bits.TrailingZeros(uint(b))
			r.red[k][b] = r.red[k][b&(b-1)] ^ pow[i]
		}
	}

	r.xpow[0] = r.reduceSmall(2) // x, or its reduction when w = 1
	for k := 1; k < 64; k++ {
		r.xpow[k] = r.Mul(r.xpow[k-1], r.xpow[k-1])
	}
	return r, nil
}

// W returns the degree of the modulus.
func (r *Ring) W() uint { return r.w }

// Poly returns the modulus without its x^w term (for w < 64, OR in 1<<w
// for the full polynomial).
func (r *Ring) Poly() uint64 { return r.low }

// timesX returns a·x mod p.
func (r *Ring) timesX(a uint64) uint64 {
	top := a >> (r.w - 1) & 1
	a = a << 1 & r.mask
	if top == 1 {
		a ^= r.low
	}
	return a
}

// reduceSmall reduces a value of at most w+1 bits (used once, for x when w = 1).
func (r *Ring) reduceSmall(a uint64) uint64 {
	if r.w < 64 && a>>r.w&1 == 1 {
		return a&r.mask ^ r.low
	}
	return a & r.mask
}

// fold returns hi(x)·x^w mod p for hi of at most w-1 bits.
func (r *Ring) fold(hi uint64) uint64 {
	var acc uint64
	for k := 0; k < r.nred; k++ {
		acc ^= r.red[k][hi>>(8*k)&0xff]
	}
	return acc
}

// Mul returns a·b mod p. The arguments must be reduced (less than 2^w).
func (r *Ring) Mul(a, b uint64) uint64 {
	if r.w <= 32 {
		prod := clmul32(uint32(a), uint32(b))
		if r.w == 32 {
			// Unrolled: the common case of CRC-32 and GF(2^32).
			hi := prod >> 32
			return prod&0xffffffff ^ r.red[0][hi&0xff] ^ r.red[1][hi>>8&0xff] ^
				r.red[2][hi>>16&0xff] ^ r.red[3][hi>>24]
		}
		return prod&r.mask ^ r.fold(prod>>r.w)
	}
	hi, lo := clmul64(a, b)
	if r.w == 64 {
		return lo ^ r.fold(hi)
	}
	// Bits w..127 of the product, of which at most w-1 are set.
	top := lo>>r.w | hi<<(64-r.w)
	return lo&r.mask ^ r.fold(top)
}

// XPow returns x^n mod p, in popcount(n) multiplications.
func (r *Ring) XPow(n uint64) uint64 {
	acc := uint64(1)
	for n != 0 {
		k := bits.TrailingZeros64(n)
		acc = r.Mul(acc, r.xpow[k])
		n &= n - 1
	}
	return acc
}

// Pow returns a^n mod p by square-and-multiply.
func (r *Ring) Pow(a, n uint64) uint64 {
	acc := uint64(1)
	for ; n != 0; n >>= 1 {
		if n&1 == 1 {
			acc = r.Mul(acc, a)
		}
		a = r.Mul(a, a)
	}
	return acc
}
