package csum

import (
	"encoding/binary"
	"math/bits"
)

// The word checksums: sum and xor of 64-bit words, Fletcher-64 over 32-bit
// words, and Knuth's multiplicative hash over 64-bit words. Words are
// little-endian and a last partial word is padded with zeros, as the
// reference codes do when they read the buffer as an array of words on
// x86. Each checksums aligned words, so Combine needs len(A) to be a
// multiple of the word size.

var sumAlg = &Algorithm{
	Name: "sum", Size: 8,
	Detects: Detection{Bit1: Always, Bit2: Mostly, Bit3: Mostly, Swap: Never},
	About:   "sum of the 64-bit words modulo 2^64 (the paper's plain sum, widened to 64-bit words)",
	sum:     func(p []byte) Value { return Value{Lo: sumWords(0, p)} },
	new:     func() Hash { return newStream(&sumCore{}, 8, 8) },
	combine: func(a, b Value, _ uint64) Value { return Value{Lo: a.Lo + b.Lo} },
	align:   8,
}

var xorAlg = &Algorithm{
	Name: "xor", Size: 8,
	Detects: Detection{Bit1: Always, Bit2: Mostly, Bit3: Always, Swap: Never},
	About:   "XOR of the 64-bit words (the paper's xor, widened to 64-bit words)",
	sum:     func(p []byte) Value { return Value{Lo: xorWords(0, p)} },
	new:     func() Hash { return newStream(&xorCore{}, 8, 8) },
	combine: func(a, b Value, _ uint64) Value { return Value{Lo: a.Lo ^ b.Lo} },
	align:   8,
}

// tailWord returns the last partial word of p (len(p) % 8 bytes), zero-padded.
func tailWord(p []byte) uint64 {
	var w [8]byte
	copy(w[:], p[len(p)-len(p)%8:])
	return binary.LittleEndian.Uint64(w[:])
}

// sumWords adds the words of p to s, four independent accumulators at a
// time so that the loop runs at the speed of loads, not of one add chain.
func sumWords(s uint64, p []byte) uint64 {
	var a, b, c uint64
	for len(p) >= 32 {
		s += binary.LittleEndian.Uint64(p)
		a += binary.LittleEndian.Uint64(p[8:])
		b += binary.LittleEndian.Uint64(p[16:])
		c += binary.LittleEndian.Uint64(p[24:])
		p = p[32:]
	}
	for len(p) >= 8 {
		s += binary.LittleEndian.Uint64(p)
		p = p[8:]
	}
	if len(p) > 0 {
		s += tailWord(p)
	}
	return s + a + b + c
}

func xorWords(s uint64, p []byte) uint64 {
	var a, b, c uint64
	for len(p) >= 32 {
		s ^= binary.LittleEndian.Uint64(p)
		a ^= binary.LittleEndian.Uint64(p[8:])
		b ^= binary.LittleEndian.Uint64(p[16:])
		c ^= binary.LittleEndian.Uint64(p[24:])
		p = p[32:]
	}
	for len(p) >= 8 {
		s ^= binary.LittleEndian.Uint64(p)
		p = p[8:]
	}
	if len(p) > 0 {
		s ^= tailWord(p)
	}
	return s ^ a ^ b ^ c
}

type sumCore struct{ s uint64 }

func (c *sumCore) consume(p []byte)                   { c.s = sumWords(c.s, p) }
func (c *sumCore) finish(tail []byte, _ uint64) Value { return Value{Lo: sumWords(c.s, tail)} }
func (c *sumCore) reset()                             { c.s = 0 }

type xorCore struct{ s uint64 }

func (c *xorCore) consume(p []byte)                   { c.s = xorWords(c.s, p) }
func (c *xorCore) finish(tail []byte, _ uint64) Value { return Value{Lo: xorWords(c.s, tail)} }
func (c *xorCore) reset()                             { c.s = 0 }

// Fletcher-64 (J. G. Fletcher, "An arithmetic checksum for serial
// transmissions", IEEE Trans. Commun. 1982; the 64-bit form over 32-bit
// words as Wikipedia's "Fletcher's checksum" gives it, with its test
// vectors): s1 = Σ words, s2 = Σ s1, both modulo 2^32-1; the value is
// s2<<32 | s1.
var fletcher64Alg = &Algorithm{
	Name: "fletcher64", Aliases: []string{"fletcher", "fletcher-64"}, Size: 8,
	Detects: Detection{Bit1: Always, Bit2: Always, Bit3: Likely, Swap: Likely},
	About:   "Fletcher-64: sums of 32-bit words and of those sums, modulo 2^32-1 (Fletcher 1982)",
	sum: func(p []byte) Value {
		var c fletcherCore
		c.consume(p[:len(p)&^3])
		return c.finish(p[len(p)&^3:], uint64(len(p)))
	},
	new:     func() Hash { return newStream(&fletcherCore{}, 4, 8) },
	combine: fletcherCombine,
	align:   4,
}

const fletcherMod = 1<<32 - 1

type fletcherCore struct{ s1, s2 uint64 }

// fletcherBlock is the number of words after which the sums are reduced:
// with s1 < 2^32 at the start, s2 stays below 2^64 for 65536 more words.
const fletcherBlock = 1 << 16

func (c *fletcherCore) consume(p []byte) {
	s1, s2 := c.s1, c.s2
	for len(p) > 0 {
		n := min(len(p)/4, fletcherBlock)
		blk := p[:4*n]
		for i := 0; i+4 <= len(blk); i += 4 {
			s1 += uint64(binary.LittleEndian.Uint32(blk[i:]))
			s2 += s1
		}
		p = p[4*n:]
		s1 %= fletcherMod
		s2 %= fletcherMod
	}
	c.s1, c.s2 = s1, s2
}

func (c *fletcherCore) finish(tail []byte, _ uint64) Value {
	s1, s2 := c.s1, c.s2
	if len(tail) > 0 {
		var w [4]byte
		copy(w[:], tail)
		s1 = (s1 + uint64(binary.LittleEndian.Uint32(w[:]))) % fletcherMod
		s2 = (s2 + s1) % fletcherMod
	}
	return Value{Lo: s2<<32 | s1}
}

func (c *fletcherCore) reset() { c.s1, c.s2 = 0, 0 }

// fletcherCombine: B's n words each add A's s1 once more to s2.
func fletcherCombine(a, b Value, lenB uint64) Value {
	a1, a2 := a.Lo&fletcherMod, a.Lo>>32
	b1, b2 := b.Lo&fletcherMod, b.Lo>>32
	n := (lenB/4 + min(lenB%4, 1)) % fletcherMod
	s1 := (a1 + b1) % fletcherMod
	hi, lo := bits.Mul64(n, a1)
	_, s2 := bits.Div64(hi, lo, fletcherMod)
	s2 = (s2 + a2 + b2) % fletcherMod
	return Value{Lo: s2<<32 | s1}
}

// Knuth's multiplicative hashing (TAOCP vol. 3, §6.4): multiplication by
// A = ⌊2^64/φ⌋ rounded to odd, applied as a running hash over 64-bit
// words, h = (h ⊕ w)·A, and finally over the length in bytes. Each step is
// a bijection of h, so any change confined to one word changes the value.
// But a product only carries upward: bit 63 of a word reaches bit 63 of h
// alone, so flips of bit 63 in two words cancel (about 1 pair in 4000).
var knuthAlg = &Algorithm{
	Name: "knuth", Size: 8,
	Detects: Detection{Bit1: Always, Bit2: Mostly, Bit3: Mostly, Swap: Likely},
	About:   "Knuth's multiplicative hash (TAOCP 6.4) over 64-bit words and the length",
	sum: func(p []byte) Value {
		var c knuthCore
		c.consume(p[:len(p)&^7])
		return c.finish(p[len(p)&^7:], uint64(len(p)))
	},
	new: func() Hash { return newStream(&knuthCore{}, 8, 8) },
}

const knuthA = 0x9E3779B97F4A7C15

type knuthCore struct{ h uint64 }

func (c *knuthCore) consume(p []byte) {
	h := c.h
	for ; len(p) >= 8; p = p[8:] {
		h = (h ^ binary.LittleEndian.Uint64(p)) * knuthA
	}
	c.h = h
}

func (c *knuthCore) finish(tail []byte, total uint64) Value {
	h := c.h
	if len(tail) > 0 {
		h = (h ^ tailWord(tail)) * knuthA
	}
	return Value{Lo: (h ^ total) * knuthA}
}

func (c *knuthCore) reset() { c.h = 0 }
