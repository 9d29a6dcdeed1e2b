// Package crc32k computes CRC-32C (Castagnoli; CRC-32/ISCSI in the CRC
// RevEng catalogue) with a carry-less multiplication kernel on CPUs with
// AVX-512 VPCLMULQDQ, for csum's one-shot, streaming and fused
// copy+checksum CRC-32C.
//
// hash/crc32 has a VPCLMULQDQ kernel for the IEEE polynomial only; for
// Castagnoli it runs three interleaved streams of the SSE4.2 CRC32
// instruction, which at one 8-byte word per cycle and stream tops out
// near 20 GB/s. The kernel here folds four 64-byte registers, 256 bytes
// a step, the technique of Gopal et al., "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ Instruction" (Intel, 2009), on
// 512-bit registers, and lets the CRC32 instruction do the final
// reduction from 128 to 32 bits (as corsix/fast-crc32 does) instead of a
// Barrett reduction.
//
// The folding, for the reflected polynomial: a 128-bit lane holds 16
// message bytes whose first bit is the coefficient of the highest power.
// Its first 8 bytes A stand for A·x^64, the other 8 B for B; moving the
// lane F bits further down the message multiplies it by x^F, and
// A·x^(64+F) + B·x^F ≡ A·k1 + B·k2 (mod P) with k1 = x^(64+F) mod P and
// k2 = x^F mod P, two carry-less products of 64 by 32 bits whose sum has
// fewer than 128 bits and is xored into the lane F bits on. A carry-less
// product of bit-reflected operands lands one bit off, and the constants
// are kept in 32 bits rather than 64, hence x^(F+31) and x^(F−33) in
// kernelConsts (checked by TestConsts against a plain shift-and-reduce).
//
// Without the kernel (Available false: another architecture, a CPU
// without AVX-512 VPCLMULQDQ) everything runs hash/crc32, which is the
// portable path (slicing-by-8) and, on arm64, ppc64le, s390x and
// loong64, their CRC instructions: a table loop of our own would only be
// slower than it everywhere.
package crc32k

import (
	"hash"
	"hash/crc32"
)

// Size is the size of a CRC-32C in bytes.
const Size = 4

// table is hash/crc32's Castagnoli table, which also selects its SSE4.2
// and arm64 paths for the parts the kernel does not take.
var table = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of p.
func Checksum(p []byte) uint32 { return Update(0, p) }

// Update returns the CRC-32C of the bytes whose CRC-32C is crc followed by
// p (as crc32.Update with the Castagnoli table does).
func Update(crc uint32, p []byte) uint32 {
	if useKernel && len(p) >= kernelMin {
		body := len(p) &^ 63
		crc = ^updateKernel(^crc, p[:body])
		p = p[body:]
	}
	return crc32.Update(crc, table, p)
}

// digest is a running CRC-32C.
type digest struct{ crc uint32 }

// New returns a running CRC-32C, a hash.Hash32 whose Sum appends the
// checksum big-endian, as hash/crc32's does.
func New() hash.Hash32 { return &digest{} }

func (d *digest) Size() int      { return Size }
func (d *digest) BlockSize() int { return 1 }
func (d *digest) Reset()         { d.crc = 0 }
func (d *digest) Sum32() uint32  { return d.crc }

func (d *digest) Write(p []byte) (int, error) {
	d.crc = Update(d.crc, p)
	return len(p), nil
}

func (d *digest) Sum(in []byte) []byte {
	s := d.crc
	return append(in, byte(s>>24), byte(s>>16), byte(s>>8), byte(s))
}
