package csum

import (
	"encoding/binary"
	"math/bits"
)

// The fused copy+XXH3 below computes XXH3's long-input hash (inputs over
// 240 bytes, seed 0) block by block as the copy goes, with an AVX-512
// block kernel of its own (xxh3fused_amd64.s). It exists because the
// streaming Hasher of github.com/zeebo/xxh3 copies every write after the
// first through a 1 KiB buffer and handles one block per call: fed in
// pieces it hashed at 35 GB/s where one xxh3.Hash call over the same
// bytes runs at 90, and the fused copy+XXH3 was slower than a copy
// followed by one xxh3.Hash call. One-shot hashing stays with zeebo/xxh3.
//
// The layout is the one of the xxHash specification (XXH3, "long
// inputs"): the input is consumed in blocks of 1024 bytes, each 16
// stripes of 64 bytes with stripe s keyed by the secret at 8·s, and the
// eight accumulators are scrambled after every block with the secret's
// last 64 bytes. The last, partial block is consumed stripe by stripe
// without a scramble, then the input's last 64 bytes (which may overlap
// it) with the secret at 121, and the accumulators are merged into the
// 64-bit hash, or twice into the 128-bit one.

const (
	xxh3Block      = 1024
	xxh3Stripe     = 64
	xxh3LongMin    = 241 // shorter inputs take XXH3's other paths
	xxh3SecretSize = 192

	xxPrime32_1 = 0x9E3779B1
	xxPrime32_2 = 0x85EBCA77
	xxPrime32_3 = 0xC2B2AE3D
	xxPrime64_1 = 0x9E3779B185EBCA87
	xxPrime64_2 = 0xC2B2AE3D27D4EB4F
	xxPrime64_3 = 0x165667B19E3779F9
	xxPrime64_4 = 0x85EBCA77C2B2AE63
	xxPrime64_5 = 0x27D4EB2F165667C5
)

// xxh3Secret is XXH3's default secret (kSecret in xxhash.h).
var xxh3Secret = [xxh3SecretSize]byte{
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

// xxh3Acc is the state of a long-input XXH3 between blocks.
type xxh3Acc [8]uint64

var xxh3Init = xxh3Acc{xxPrime32_3, xxPrime64_1, xxPrime64_2, xxPrime64_3, xxPrime64_4, xxPrime32_2, xxPrime64_5, xxPrime32_1}

// xxh3Stripes accumulates n stripes of data, stripe s keyed by the secret
// at off+8·s (scalar; the kernel's reference and its fallback).
func xxh3Stripes(acc *xxh3Acc, data []byte, n, off int) {
	for s := range n {
		d, k := data[s*xxh3Stripe:], xxh3Secret[off+8*s:]
		for i := range 8 {
			v := binary.LittleEndian.Uint64(d[8*i:])
			dk := v ^ binary.LittleEndian.Uint64(k[8*i:])
			acc[i^1] += v
			acc[i] += (dk & 0xFFFFFFFF) * (dk >> 32)
		}
	}
}

// xxh3Scramble is XXH3's scramble after each block.
func xxh3Scramble(acc *xxh3Acc) {
	for i := range 8 {
		a := acc[i]
		a ^= a >> 47
		a ^= binary.LittleEndian.Uint64(xxh3Secret[xxh3SecretSize-xxh3Stripe+8*i:])
		acc[i] = a * xxPrime32_1
	}
}

// xxh3BlocksGeneric consumes n whole blocks (scalar).
func xxh3BlocksGeneric(acc *xxh3Acc, data []byte, n int) {
	for b := range n {
		xxh3Stripes(acc, data[b*xxh3Block:], xxh3Block/xxh3Stripe, 0)
		xxh3Scramble(acc)
	}
}

// xxh3Tail consumes what follows the last whole block of a message of n
// bytes whose bytes are in p (p[:n], n ≥ xxh3LongMin) and returns the
// final accumulators.
func xxh3Tail(acc xxh3Acc, p []byte) xxh3Acc {
	n := len(p)
	start := (n - 1) / xxh3Block * xxh3Block
	xxh3Stripes(&acc, p[start:], (n-1-start)/xxh3Stripe, 0)
	xxh3Stripes(&acc, p[n-xxh3Stripe:], 1, xxh3SecretSize-xxh3Stripe-7)
	return acc
}

func xxh3Merge(acc *xxh3Acc, off int, start uint64) uint64 {
	r := start
	for i := range 4 {
		k := xxh3Secret[off+16*i:]
		hi, lo := bits.Mul64(acc[2*i]^binary.LittleEndian.Uint64(k), acc[2*i+1]^binary.LittleEndian.Uint64(k[8:]))
		r += hi ^ lo
	}
	r ^= r >> 37
	r *= 0x165667919E3779F9
	return r ^ r>>32
}

// xxh3Final turns the final accumulators of an n-byte input into XXH3-64
// (wide false) or XXH3-128.
func xxh3Final(acc *xxh3Acc, n int, wide bool) Value {
	lo := xxh3Merge(acc, 11, uint64(n)*xxPrime64_1)
	if !wide {
		return Value{Lo: lo}
	}
	return Value{Lo: lo, Hi: xxh3Merge(acc, xxh3SecretSize-xxh3Stripe-11, ^(uint64(n) * xxPrime64_2))}
}

// xxh3CopySum copies src into dst in pieces of piece bytes (a multiple of
// the block) and returns XXH3-64 or XXH3-128 of src, hashing each piece's
// whole blocks right after its copy (from dst, in cache) — or, with
// stream, right before it (from src, which the non-temporal copy then
// reads from cache, since its stores leave nothing in it). len(src) must
// be at least xxh3LongMin and dst at least as long.
func xxh3CopySum(dst, src []byte, piece int, stream, wide bool) Value {
	n := len(src)
	blocks := (n - 1) / xxh3Block // the whole blocks that are scrambled
	acc := xxh3Init
	for off := 0; off < n; off += piece {
		end := min(off+piece, n)
		b0, b1 := off/xxh3Block, min(end/xxh3Block, blocks)
		if stream {
			if b1 > b0 {
				xxh3Blocks(&acc, src[b0*xxh3Block:b1*xxh3Block])
			}
			streamCopy(dst[off:end], src[off:end])
			continue
		}
		copy(dst[off:end], src[off:end])
		if b1 > b0 {
			xxh3Blocks(&acc, dst[b0*xxh3Block:b1*xxh3Block])
		}
	}
	if stream {
		sfence()
	}
	acc = xxh3Tail(acc, src[:n])
	return xxh3Final(&acc, n, wide)
}
