package csum

import (
	"encoding/binary"
	"hash"
	"hash/adler32"
)

// Adler-32 (RFC 1950 §8.2, as zlib computes it), from hash/adler32.
var adler32Alg = &Algorithm{
	Name: "adler32", Aliases: []string{"adler", "adler-32"}, Size: 4,
	Detects: Detection{Bit1: Always, Bit2: Always, Bit3: Likely, Swap: Mostly},
	About:   "Adler-32 (RFC 1950), from hash/adler32",
	sum:     func(p []byte) Value { return Value{Lo: uint64(adler32.Checksum(p))} },
	new:     func() Hash { return hash32{adler32.New(), 4} },
	combine: adlerCombine,
	align:   1,
}

const adlerMod = 65521

// adlerCombine joins two Adler-32 sums: A counts from 1, so A(A‖B) =
// A(A) + A(B) - 1, and each byte of B adds A's running total once more to
// B: B(A‖B) = B(A) + B(B) + |B|·(A(A) - 1), all modulo 65521.
func adlerCombine(x, y Value, lenB uint64) Value {
	xa, xb := x.Lo&0xffff, x.Lo>>16&0xffff
	ya, yb := y.Lo&0xffff, y.Lo>>16&0xffff
	a := (xa + ya + adlerMod - 1) % adlerMod
	b := (xb + yb + (lenB%adlerMod)*((xa+adlerMod-1)%adlerMod)) % adlerMod
	return Value{Lo: b<<16 | a}
}

// hash32 adapts a hash.Hash32 of the standard library to Hash.
type hash32 struct {
	hash.Hash32
	size int
}

func (h hash32) Sum64() uint64 { return uint64(h.Sum32()) }
func (h hash32) Value() Value  { return Value{Lo: uint64(h.Sum32())} }

// hash64 adapts a hash.Hash64 of the standard library to Hash.
type hash64 struct{ hash.Hash64 }

func (h hash64) Value() Value { return Value{Lo: h.Sum64()} }

// Bob Jenkins' one-at-a-time hash (Dr. Dobb's, 1997; the form and test
// vectors of Wikipedia's "Jenkins hash function").
var oaatAlg = &Algorithm{
	Name: "oaat", Aliases: []string{"jenkins", "one-at-a-time"}, Size: 4,
	Detects: Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:   "Bob Jenkins' one-at-a-time hash, 32 bits",
	sum:     func(p []byte) Value { return Value{Lo: uint64(oaatFinal(oaatUpdate(0, p)))} },
	new:     func() Hash { return newStream(&oaatCore{}, 1, 4) },
}

func oaatUpdate(h uint32, p []byte) uint32 {
	for _, b := range p {
		h += uint32(b)
		h += h << 10
		h ^= h >> 6
	}
	return h
}

func oaatFinal(h uint32) uint32 {
	h += h << 3
	h ^= h >> 11
	h += h << 15
	return h
}

type oaatCore struct{ h uint32 }

func (c *oaatCore) consume(p []byte)                { c.h = oaatUpdate(c.h, p) }
func (c *oaatCore) finish(_ []byte, _ uint64) Value { return Value{Lo: uint64(oaatFinal(c.h))} }
func (c *oaatCore) reset()                          { c.h = 0 }

// FNV-1a, 64 bits (Fowler, Noll, Vo; draft-eastlake-fnv), from hash/fnv
// for streaming and the same loop inline for the one-shot.
var fnv1a64Alg = &Algorithm{
	Name: "fnv1a64", Aliases: []string{"fnv1a", "fnv-1a", "fnv"}, Size: 8,
	Detects: Detection{Bit1: Always, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:   "FNV-1a, 64 bits, byte at a time (Fowler–Noll–Vo)",
	sum: func(p []byte) Value {
		h := uint64(fnvOffset)
		for _, b := range p {
			h = (h ^ uint64(b)) * fnvPrime
		}
		return Value{Lo: h}
	},
	new: func() Hash { return newStream(&fnvCore{}, 1, 8) },
}

const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

type fnvCore struct{ h uint64 }

func (c *fnvCore) consume(p []byte) {
	h := c.h
	for _, b := range p {
		h = (h ^ uint64(b)) * fnvPrime
	}
	c.h = h
}
func (c *fnvCore) finish(_ []byte, _ uint64) Value { return Value{Lo: c.h} }
func (c *fnvCore) reset()                          { c.h = fnvOffset }

// MurmurHash64A, the 64-bit member of Austin Appleby's MurmurHash2 family
// (MurmurHash2.cpp in SMHasher), seed 0. (Not MurmurHash2A, the 32-bit
// incremental variant of the same file, whose name it once carried.) Its state starts from the total
// length, so New keeps the data until Sum; CopySum streams it.
var murmur64aAlg = &Algorithm{
	Name: "murmur64a", Aliases: []string{"murmurhash64a", "murmur2-64a"}, Size: 8,
	Detects:  Detection{Bit1: Always, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:    "MurmurHash64A (MurmurHash2, 64-bit), seed 0 (Appleby)",
	sum:      func(p []byte) Value { return murmurSized(uint64(len(p))).sumAll(p) },
	newSized: func(total int) Hash { return newStream(murmurSized(uint64(total)), 8, 8) },
}

const (
	murmurM = 0xc6a4a7935bd1e995
	murmurR = 47
)

type murmurCore struct {
	h, total, seed uint64 // seed is always 0 but in TestMurmur64ASMHasherVerification
}

func murmurSized(total uint64) *murmurCore { return &murmurCore{total: total} }

func (c *murmurCore) sumAll(p []byte) Value {
	c.reset()
	c.consume(p[:len(p)&^7])
	return c.finish(p[len(p)&^7:], uint64(len(p)))
}

func (c *murmurCore) consume(p []byte) {
	h := c.h
	for ; len(p) >= 8; p = p[8:] {
		k := binary.LittleEndian.Uint64(p) * murmurM
		k ^= k >> murmurR
		h = (h ^ k*murmurM) * murmurM
	}
	c.h = h
}

func (c *murmurCore) finish(tail []byte, _ uint64) Value {
	h := c.h
	if len(tail) > 0 {
		h = (h ^ tailWord(tail)) * murmurM
	}
	h ^= h >> murmurR
	h *= murmurM
	h ^= h >> murmurR
	return Value{Lo: h}
}

func (c *murmurCore) reset() { c.h = c.seed ^ c.total*murmurM }

// Paul Hsieh's SuperFastHash (azillionmonkeys.com/qed/hash.html, the
// current reference code, which reads the tail bytes as signed chars). Its
// state also starts from the total length.
var superfastAlg = &Algorithm{
	Name: "superfast", Aliases: []string{"hsieh", "superfasthash"}, Size: 4,
	Detects:  Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:    "Paul Hsieh's SuperFastHash, 32 bits",
	sum:      func(p []byte) Value { return superfastSized(uint64(len(p))).sumAll(p) },
	newSized: func(total int) Hash { return newStream(superfastSized(uint64(total)), 4, 4) },
}

type superfastCore struct {
	h     uint32
	total uint64
}

func superfastSized(total uint64) *superfastCore { return &superfastCore{total: total} }

func (c *superfastCore) sumAll(p []byte) Value {
	c.reset()
	c.consume(p[:len(p)&^3])
	return c.finish(p[len(p)&^3:], uint64(len(p)))
}

func (c *superfastCore) consume(p []byte) {
	h := c.h
	for ; len(p) >= 4; p = p[4:] {
		h += uint32(binary.LittleEndian.Uint16(p))
		tmp := uint32(binary.LittleEndian.Uint16(p[2:]))<<11 ^ h
		h = h<<16 ^ tmp
		h += h >> 11
	}
	c.h = h
}

func (c *superfastCore) finish(tail []byte, total uint64) Value {
	if total == 0 {
		return Value{} // the reference returns 0 for no data
	}
	h := c.h
	switch len(tail) {
	case 3:
		h += uint32(binary.LittleEndian.Uint16(tail))
		h ^= h << 16
		h ^= uint32(int32(int8(tail[2]))) << 18
		h += h >> 11
	case 2:
		h += uint32(binary.LittleEndian.Uint16(tail))
		h ^= h << 11
		h += h >> 17
	case 1:
		h += uint32(int32(int8(tail[0])))
		h ^= h << 10
		h += h >> 1
	}
	h ^= h << 3
	h += h >> 5
	h ^= h << 4
	h += h >> 17
	h ^= h << 25
	h += h >> 6
	return Value{Lo: uint64(h)}
}

func (c *superfastCore) reset() { c.h = uint32(c.total) }
