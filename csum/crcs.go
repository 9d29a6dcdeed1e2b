package csum

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/sigcheck/sigcheck/gf"
)

// The catalogue CRCs that people exchange, beside the two the transfers
// use (crc32c, crc64-xz): CRC-32 as zlib, gzip, PNG and Ethernet compute
// it, and CRC-64/ECMA-182 as the CRC catalogue defines it. Each name is
// the catalogue's, and each has the catalogue's check value (the CRC of
// "123456789") as its known answer.

// CRC-32/ISO-HDLC (the CRC-32 of zlib, gzip, PNG, Ethernet; check value
// 0xCBF43926) from hash/crc32, which uses PCLMULQDQ folding on amd64 and
// the ARMv8 CRC instructions on arm64.
var crc32Alg = &Algorithm{
	Name: "crc32", Aliases: []string{"crc-32", "crc-32/iso-hdlc", "crc32-ieee"}, Size: 4,
	Detects: Detection{Bit1: Always, Bit2: Always, Bit3: Always, Swap: Likely},
	About:   "CRC-32 (ISO-HDLC: zlib, gzip, PNG), from hash/crc32",
	sum:     func(p []byte) Value { return Value{Lo: uint64(crc32.ChecksumIEEE(p))} },
	new:     func() Hash { return hash32{crc32.NewIEEE(), 4} },
	combine: func(a, b Value, lenB uint64) Value { return Value{Lo: crc32Math.Combine(a.Lo, b.Lo, lenB)} },
	align:   1,
}

var crc32Math = mustCRC(gf.NewCRC(32, 0x04C11DB7, 0xFFFFFFFF, 0xFFFFFFFF, true))

// CRC-64/ECMA-182 (ECMA-182 Annex B; check value 0x6C40DF5F0B497347): the
// same polynomial as CRC-64/XZ, but unreflected, with init and xorout zero.
// The standard library has no unreflected CRC-64, so this is a
// slicing-by-8 table loop of its own, checked against a bit-at-a-time one.
var crc64ecmaAlg = &Algorithm{
	Name: "crc64-ecma", Aliases: []string{"crc-64/ecma-182", "crc64-ecma-182"}, Size: 8,
	Detects: Detection{Bit1: Always, Bit2: Always, Bit3: Always, Swap: Likely},
	About:   "CRC-64/ECMA-182 (unreflected, init 0), slicing-by-8",
	sum:     func(p []byte) Value { return Value{Lo: crc64ecmaUpdate(0, p)} },
	new:     func() Hash { return &crc64ecmaHash{} },
	combine: func(a, b Value, lenB uint64) Value { return Value{Lo: crc64ecmaMath.Combine(a.Lo, b.Lo, lenB)} },
	align:   1,
}

const crc64ecmaPoly = 0x42F0E1EBA9EA3693

var (
	crc64ecmaMath  = mustCRC(gf.NewCRC(64, crc64ecmaPoly, 0, 0, false))
	crc64ecmaTable = makeCRC64MSBTable(crc64ecmaPoly)
)

// makeCRC64MSBTable returns the slicing-by-8 tables of an unreflected
// CRC-64: t[0][b] is the register after shifting byte b through it, and
// t[k][b] the same followed by k zero bytes, so that eight bytes are
// folded with eight independent lookups.
func makeCRC64MSBTable(poly uint64) *[8][256]uint64 {
	t := new([8][256]uint64)
	for i := range 256 {
		c := uint64(i) << 56
		for range 8 {
			if c&(1<<63) != 0 {
				c = c<<1 ^ poly
			} else {
				c <<= 1
			}
		}
		t[0][i] = c
	}
	for k := 1; k < 8; k++ {
		for i := range 256 {
			c := t[k-1][i]
			t[k][i] = c<<8 ^ t[0][c>>56]
		}
	}
	return t
}

// crc64ecmaUpdate runs the CRC register over p (init and xorout are zero,
// so the register is the value).
func crc64ecmaUpdate(crc uint64, p []byte) uint64 {
	t := crc64ecmaTable
	for len(p) >= 8 {
		crc ^= binary.BigEndian.Uint64(p)
		crc = t[7][crc>>56] ^ t[6][crc>>48&0xff] ^ t[5][crc>>40&0xff] ^ t[4][crc>>32&0xff] ^
			t[3][crc>>24&0xff] ^ t[2][crc>>16&0xff] ^ t[1][crc>>8&0xff] ^ t[0][crc&0xff]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc>>56)^b] ^ crc<<8
	}
	return crc
}

type crc64ecmaHash struct{ crc uint64 }

func (h *crc64ecmaHash) Write(p []byte) (int, error) {
	h.crc = crc64ecmaUpdate(h.crc, p)
	return len(p), nil
}
func (h *crc64ecmaHash) Sum(b []byte) []byte { return binary.BigEndian.AppendUint64(b, h.crc) }
func (h *crc64ecmaHash) Reset()              { h.crc = 0 }
func (h *crc64ecmaHash) Size() int           { return 8 }
func (h *crc64ecmaHash) BlockSize() int      { return 8 }
func (h *crc64ecmaHash) Sum64() uint64       { return h.crc }
func (h *crc64ecmaHash) Value() Value        { return Value{Lo: h.crc} }
