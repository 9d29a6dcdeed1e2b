package gf

// Carry-less (polynomial) multiplication over GF(2) in portable Go.
//
// Go has no intrinsic for PCLMULQDQ, so the product is formed with ordinary
// integer multiplications on operands whose bits are spread four apart: in
// each of the four residue classes of bit positions mod 4 a 32-bit operand
// has 8 bits, so no column of the integer product sums more than 8 terms and
// the carries (at most 3 bits) never reach the next bit of the same class.
// Masking each class back out leaves exactly the XOR of the partial
// products. This is the constant-time "bmul" technique of BearSSL's GHASH
// (ghash_ctmul.c); it costs 16 multiplications and no table, branch or
// data-dependent memory access.

// clmul32 returns the 63-bit carry-less product of a and b.
func clmul32(a, b uint32) uint64 {
	const (
		m0 = 0x11111111
		m1 = 0x22222222
		m2 = 0x44444444
		m3 = 0x88888888
	)
	a0, a1, a2, a3 := uint64(a&m0), uint64(a&m1), uint64(a&m2), uint64(a&m3)
	b0, b1, b2, b3 := uint64(b&m0), uint64(b&m1), uint64(b&m2), uint64(b&m3)
	z0 := a0*b0 ^ a1*b3 ^ a2*b2 ^ a3*b1
	z1 := a0*b1 ^ a1*b0 ^ a2*b3 ^ a3*b2
	z2 := a0*b2 ^ a1*b1 ^ a2*b0 ^ a3*b3
	z3 := a0*b3 ^ a1*b2 ^ a2*b1 ^ a3*b0
	return z0&0x1111111111111111 | z1&0x2222222222222222 |
		z2&0x4444444444444444 | z3&0x8888888888888888
}

// clmul64 returns the 127-bit carry-less product of a and b as (hi, lo),
// by one level of Karatsuba over clmul32: three 32×32 products instead of four.
func clmul64(a, b uint64) (hi, lo uint64) {
	a0, a1 := uint32(a), uint32(a>>32)
	b0, b1 := uint32(b), uint32(b>>32)
	l := clmul32(a0, b0)
	h := clmul32(a1, b1)
	m := clmul32(a0^a1, b0^b1) ^ l ^ h
	return h ^ m>>32, l ^ m<<32
}

// clmulRef is the schoolbook shift-and-XOR product, kept as the reference
// the fast versions are tested against.
func clmulRef(a, b uint64) (hi, lo uint64) {
	for i := range 64 {
		if b>>i&1 == 1 {
			lo ^= a << i
			if i > 0 {
				hi ^= a >> (64 - i)
			}
		}
	}
	return hi, lo
}
