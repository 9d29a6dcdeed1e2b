// Package gf is arithmetic in the binary fields GF(2^w), 2 ≤ w ≤ 32, and in
// the polynomial rings GF(2)[x]/(p) that CRCs live in.
//
// It is the bottom of sigcheck: the gfd datatype signatures of package sig
// are checksums over GF(2^w) (Langou et al., "Hash functions for datatype
// signatures in MPI", §3.4), and the CRC signatures are polynomials modulo
// the CRC's generator, whose concatenation is one multiplication in a Ring.
//
// How each operation is done:
//
//   - w ≤ 16: log/exp tables (2^w entries each, the exp table doubled so a
//     sum of two logarithms needs no reduction). Mul, Div, Inv, Exp and Log
//     are one to three loads.
//   - w > 16: no 2^w-entry table. Mul is a carry-less 32×32 product formed
//     with integer multiplications (see clmul.go) and reduced modulo p with
//     four 256-entry tables; Inv is the extended Euclidean algorithm; Exp
//     multiplies four byte-indexed tables of powers of α; Log solves the
//     discrete logarithm by Pohlig–Hellman (see dlog.go).
//   - Region operations (MulSlice, MulSliceXor) on GF(2^8) with 0x11D are
//     the SIMD kernels of github.com/klauspost/reedsolomon; other fields
//     use split tables.
//
// GF(2^64) has functions of its own (Mul64, Exp64, Inv64; gf64.go), for
// the default signature algebra of package sig, whose multiplier must have
// an order beyond any element count: products are PCLMULQDQ on amd64 and
// the portable carry-less product of clmul.go elsewhere.
//
// What it is not: a Reed–Solomon codec (use reedsolomon) or a general
// GF(p^k) library. Elements are plain uint32 values so that a checksum can
// hold several of them side by side in one word.
package gf
