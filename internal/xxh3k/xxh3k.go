// Package xxh3k computes XXH3's long-input hash (inputs over 240 bytes,
// seed 0) from its parts — whole blocks as they come, then the tail —
// with an AVX-512 kernel of its own, for csum's fused copy+checksum:
// github.com/zeebo/xxh3, which does all one-shot hashing in this module,
// has a streaming Hasher that copies every write after the first through
// a 1 KiB buffer and handles one block per call, so that fed in pieces it
// hashed at a third of its one-shot speed.
//
// The layout is the xxHash specification's (XXH3, long inputs): the input
// is consumed in blocks of 1024 bytes, each 16 stripes of 64 bytes with
// stripe s keyed by the secret at 8·s, and the eight accumulators are
// scrambled after every block with the secret's last 64 bytes. The last,
// partial block is consumed stripe by stripe without a scramble, then the
// input's last 64 bytes (which may overlap it) with the secret at 121,
// and the accumulators are merged with the secret at 11 into the 64-bit
// hash (and at 117 into the high half of the 128-bit one).
//
// CopyBlocks and CopyBlocksStream fuse a copy with the block kernel: each
// stripe is loaded once, stored to the destination (with non-temporal
// stores for the streaming one) and accumulated, so that csum's copy+XXH3
// costs about what the copy alone does; a copy and the block kernel
// taking turns in 2 KiB pieces ran at 0.61–0.79 of the copy at 1 MiB.
//
// Leaves hashes a Merkle tree's leaves, seeded XXH3-64 of consecutive
// segments, in one call of a kernel of its own (leaves_amd64.s): the
// block and stripe kernels above, called per 2 KiB leaf with a seeded
// secret, took 57 ns against zeebo's 54, the calls and the scalar tail
// and merge costing as much as they saved; Leaves takes 35.
//
// Without AVX-512 (Available false) the same functions run a scalar loop,
// which is the kernels' reference in the tests; csum then streams through
// zeebo/xxh3, whose AVX2 and NEON paths beat it.
package xxh3k

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

const (
	Block   = 1024 // bytes consumed between two scrambles
	Stripe  = 64
	LongMin = 241 // shorter inputs take XXH3's other paths

	secretSize = 192

	prime32_1 = 0x9E3779B1
	prime32_2 = 0x85EBCA77
	prime32_3 = 0xC2B2AE3D
	prime64_1 = 0x9E3779B185EBCA87
	prime64_2 = 0xC2B2AE3D27D4EB4F
	prime64_3 = 0x165667B19E3779F9
	prime64_4 = 0x85EBCA77C2B2AE63
	prime64_5 = 0x27D4EB2F165667C5
)

// secret is an XXH3 secret (the kernels take any, which their tests use).
type secret [secretSize]byte

// defaultSecret is XXH3's default secret (kSecret in xxhash.h).
var defaultSecret = secret{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

// Acc is the state of a long-input XXH3 between blocks.
type Acc [8]uint64

// Init is the state before the first block.
var Init = Acc{prime32_3, prime64_1, prime64_2, prime64_3, prime64_4, prime32_2, prime64_5, prime32_1}

// Blocks consumes the whole blocks of p (len(p) is meant to be a multiple
// of Block; a remainder is ignored).
func Blocks(acc *Acc, p []byte) {
	if n := len(p) / Block; n > 0 {
		blocks(acc, p, n, &defaultSecret)
	}
}

// CopyBlocks copies the whole blocks of src into dst, which must be at
// least as long and must not overlap src other than exactly, and consumes
// them as Blocks would: with the kernel, in one pass that loads each
// stripe once, stores it and accumulates it.
func CopyBlocks(acc *Acc, dst, src []byte) {
	if n := len(src) / Block; n > 0 {
		copyBlocks(acc, dst[:n*Block], src[:n*Block], n, &defaultSecret, false)
	}
}

// CopyBlocksStream is CopyBlocks with non-temporal stores, for copies
// larger than the caches (where an ordinary store first reads the line it
// writes), ordered before it returns. dst must be 64-byte aligned.
// Without the kernel it is CopyBlocks.
func CopyBlocksStream(acc *Acc, dst, src []byte) {
	if uintptr(unsafe.Pointer(unsafe.SliceData(dst)))&63 != 0 {
		panic("xxh3k: CopyBlocksStream: dst is not 64-byte aligned")
	}
	if n := len(src) / Block; n > 0 {
		copyBlocks(acc, dst[:n*Block], src[:n*Block], n, &defaultSecret, true)
	}
}

// Tail consumes what follows the last whole block of the input p (all of
// it, len(p) ≥ LongMin), whose whole blocks acc has consumed: the stripes
// of the last block, then the last stripe.
func Tail(acc *Acc, p []byte) { tail(acc, p, &defaultSecret) }

// tail is Tail with the secret s.
func tail(acc *Acc, p []byte, s *secret) {
	n := len(p)
	start := (n - 1) / Block * Block
	if k := (n - 1 - start) / Stripe; k > 0 {
		stripes(acc, p[start:], k, s[:])
	}
	stripes(acc, p[n-Stripe:], 1, s[secretSize-Stripe-7:])
}

// WholeBlocks is the number of blocks of an n-byte input that Blocks
// consumes; Tail does the rest.
func WholeBlocks(n int) int { return (n - 1) / Block }

// Sum64 is the XXH3-64 of the n-byte input whose blocks and tail acc has
// consumed.
func Sum64(acc *Acc, n int) uint64 { return merge(acc, defaultSecret[11:], uint64(n)*prime64_1) }

// Sum128 is its XXH3-128.
func Sum128(acc *Acc, n int) (lo, hi uint64) {
	return Sum64(acc, n), merge(acc, defaultSecret[secretSize-Stripe-11:], ^(uint64(n) * prime64_2))
}

func merge(acc *Acc, k []byte, start uint64) uint64 {
	r := start
	for i := range 4 {
		hi, lo := bits.Mul64(acc[2*i]^binary.LittleEndian.Uint64(k[16*i:]), acc[2*i+1]^binary.LittleEndian.Uint64(k[16*i+8:]))
		r += hi ^ lo
	}
	r ^= r >> 37
	r *= 0x165667919E3779F9
	return r ^ r>>32
}

// stripesGeneric accumulates n stripes of p, stripe i keyed by k[8i:].
func stripesGeneric(acc *Acc, p []byte, n int, k []byte) {
	for s := range n {
		d, ks := p[s*Stripe:], k[8*s:]
		for i := range 8 {
			v := binary.LittleEndian.Uint64(d[8*i:])
			dk := v ^ binary.LittleEndian.Uint64(ks[8*i:])
			acc[i^1] += v
			acc[i] += (dk & 0xFFFFFFFF) * (dk >> 32)
		}
	}
}

// blocksGeneric consumes n whole blocks of p.
func blocksGeneric(acc *Acc, p []byte, n int, s *secret) {
	for b := range n {
		stripesGeneric(acc, p[b*Block:], Block/Stripe, s[:])
		for i := range 8 {
			a := acc[i]
			a ^= a >> 47
			a ^= binary.LittleEndian.Uint64(s[secretSize-Stripe+8*i:])
			acc[i] = a * prime32_1
		}
	}
}

// copyBlocksGeneric copies and consumes n whole blocks, block by block so
// that each is hashed from the cache.
func copyBlocksGeneric(acc *Acc, dst, src []byte, n int, s *secret) {
	for b := range n {
		copy(dst[b*Block:(b+1)*Block], src[b*Block:(b+1)*Block])
		blocksGeneric(acc, dst[b*Block:], 1, s)
	}
}
