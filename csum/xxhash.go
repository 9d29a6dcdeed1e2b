package csum

import (
	"encoding/binary"
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// The classic xxHash functions, XXH32 and XXH64 (Yann Collet, xxHash
// v0.8, doc/xxhash_spec.md), seed 0: what xxhsum prints by default (-H1)
// and with -H0. They are here so that sigcheck reads and writes xxhsum's
// files; XXH3 is faster on every size and is the one transfers use.

// XXH64 from github.com/cespare/xxhash/v2 (used by Prometheus, etcd and
// the Go toolchain's own telemetry; amd64 and arm64 assembly).
var xxh64Alg = &Algorithm{
	Name: "xxh64", Aliases: []string{"xxhash64", "xxhash"}, Size: 8,
	Detects: Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:   "XXH64 (xxHash, xxhsum's default), from github.com/cespare/xxhash/v2",
	sum:     func(p []byte) Value { return Value{Lo: xxhash.Sum64(p)} },
	new:     func() Hash { return hash64{xxhash.New()} },
}

// XXH32, written out from the specification: thirty lines, rather than a
// dependency for them.
var xxh32Alg = &Algorithm{
	Name: "xxh32", Aliases: []string{"xxhash32"}, Size: 4,
	Detects: Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:   "XXH32 (xxHash, xxhsum -H0), 32 bits",
	sum: func(p []byte) Value {
		var c xxh32Core
		c.reset()
		c.consume(p[:len(p)&^15])
		return c.finish(p[len(p)&^15:], uint64(len(p)))
	},
	new: func() Hash { return newStream(&xxh32Core{}, 16, 4) },
}

const (
	xxh32P1 uint32 = 0x9E3779B1
	xxh32P2 uint32 = 0x85EBCA77
	xxh32P3 uint32 = 0xC2B2AE3D
	xxh32P4 uint32 = 0x27D4EB2F
	xxh32P5 uint32 = 0x165667B1
)

// xxh32Core holds the four lanes of XXH32 (spec §2.2, seed 0); consume
// takes whole 16-byte stripes.
type xxh32Core struct{ v [4]uint32 }

func (c *xxh32Core) reset() {
	p1, p2 := xxh32P1, xxh32P2 // wrapping arithmetic, as the spec's uint32
	c.v = [4]uint32{p1 + p2, p2, 0, -p1}
}

func xxh32Round(acc, in uint32) uint32 {
	return bits.RotateLeft32(acc+in*xxh32P2, 13) * xxh32P1
}

func (c *xxh32Core) consume(p []byte) {
	v0, v1, v2, v3 := c.v[0], c.v[1], c.v[2], c.v[3]
	for ; len(p) >= 16; p = p[16:] {
		v0 = xxh32Round(v0, binary.LittleEndian.Uint32(p))
		v1 = xxh32Round(v1, binary.LittleEndian.Uint32(p[4:]))
		v2 = xxh32Round(v2, binary.LittleEndian.Uint32(p[8:]))
		v3 = xxh32Round(v3, binary.LittleEndian.Uint32(p[12:]))
	}
	c.v = [4]uint32{v0, v1, v2, v3}
}

// finish converges the lanes (or, under 16 bytes in all, starts from
// PRIME32_5), adds the length modulo 2^32, the tail and the avalanche
// (spec §2.3–2.5).
func (c *xxh32Core) finish(tail []byte, total uint64) Value {
	h := xxh32P5
	if total >= 16 {
		h = bits.RotateLeft32(c.v[0], 1) + bits.RotateLeft32(c.v[1], 7) +
			bits.RotateLeft32(c.v[2], 12) + bits.RotateLeft32(c.v[3], 18)
	}
	h += uint32(total)
	for ; len(tail) >= 4; tail = tail[4:] {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(tail)*xxh32P3, 17) * xxh32P4
	}
	for _, b := range tail {
		h = bits.RotateLeft32(h+uint32(b)*xxh32P5, 11) * xxh32P1
	}
	h ^= h >> 15
	h *= xxh32P2
	h ^= h >> 13
	h *= xxh32P3
	h ^= h >> 16
	return Value{Lo: uint64(h)}
}
