package csum

import (
	"hash/crc64"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/gf"
	"github.com/sigcheck/sigcheck/internal/crc32k"
)

// CRC-32C (Castagnoli; CRC-32/ISCSI in the CRC RevEng catalogue) from
// internal/crc32k: an AVX-512 VPCLMULQDQ folding kernel where the CPU has
// one, else hash/crc32, which uses the SSE4.2 CRC32 instruction with a
// three-way interleaved loop on amd64, and the ARMv8 CRC instructions on
// arm64.
var crc32cAlg = &Algorithm{
	Name: "crc32c", Aliases: []string{"crc-32c", "crc-32/iscsi", "crc-32/castagnoli", "castagnoli"}, Size: 4,
	Detects: Detection{Bit1: Always, Bit2: Always, Bit3: Always, Swap: Likely},
	About:   "CRC-32C (Castagnoli), AVX-512 VPCLMULQDQ kernel (internal/crc32k) or hash/crc32",
	sum:     func(p []byte) Value { return Value{Lo: uint64(crc32k.Checksum(p))} },
	new:     func() Hash { return hash32{crc32k.New(), 4} },
	combine: func(a, b Value, lenB uint64) Value { return Value{Lo: crc32cMath.Combine(a.Lo, b.Lo, lenB)} },
	align:   1,
}

var crc32cMath = mustCRC(gf.NewCRC(32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true))

// CRC-64/XZ (the ECMA-182 polynomial, reflected, init and xorout all ones;
// check value 0x995DC9BBDF1939FA) from hash/crc64 with its ECMA table: what
// xz --check=crc64, Go's hash/crc64 and 7-Zip call CRC-64, hence the alias
// "crc64". It is not CRC-64/ECMA-182 (unreflected, init and xorout zero),
// which the CRC catalogue also calls CRC-64: that one is crc64-ecma.
var crc64Alg = &Algorithm{
	Name: "crc64-xz", Aliases: []string{"crc64", "crc-64/xz", "crc-64/go-ecma"}, Size: 8,
	Detects: Detection{Bit1: Always, Bit2: Always, Bit3: Always, Swap: Likely},
	About:   "CRC-64/XZ (ECMA-182 polynomial, reflected; xz's crc64), from hash/crc64",
	sum:     func(p []byte) Value { return Value{Lo: crc64.Checksum(p, ecma)} },
	new:     func() Hash { return hash64{crc64.New(ecma)} },
	combine: func(a, b Value, lenB uint64) Value { return Value{Lo: crc64Math.Combine(a.Lo, b.Lo, lenB)} },
	align:   1,
}

var (
	ecma      = crc64.MakeTable(crc64.ECMA)
	crc64Math = mustCRC(gf.NewCRC(64, 0x42F0E1EBA9EA3693, ^uint64(0), ^uint64(0), true))
)

func mustCRC(c *gf.CRC, err error) *gf.CRC {
	if err != nil {
		panic(err)
	}
	return c
}

// XXH3, 64 and 128 bits, seed 0 (Yann Collet's xxHash v0.8), from
// github.com/zeebo/xxh3, which dispatches to AVX-512, AVX2, SSE2 or NEON
// kernels at run time and is checked against the C library.
var xxh3Alg = &Algorithm{
	Name: "xxh3", Aliases: []string{"xxh3-64", "xxh3_64", "xxh3_64bits"}, Size: 8,
	Detects: Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:   "XXH3-64 (xxHash), from github.com/zeebo/xxh3",
	sum:     func(p []byte) Value { return Value{Lo: xxh3.Hash(p)} },
	new:     func() Hash { return xxh3Hash{xxh3.New()} },
	xxh3:    64,
}

var xxh3_128Alg = &Algorithm{
	Name: "xxh3-128", Aliases: []string{"xxh128", "xxh3_128"}, Size: 16,
	Detects: Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:   "XXH3-128 (xxHash), from github.com/zeebo/xxh3",
	sum: func(p []byte) Value {
		v := xxh3.Hash128(p)
		return Value{Hi: v.Hi, Lo: v.Lo}
	},
	new:  func() Hash { return xxh3Hash128{xxh3.New128()} },
	xxh3: 128,
}

type xxh3Hash struct{ *xxh3.Hasher }

func (h xxh3Hash) Value() Value { return Value{Lo: h.Sum64()} }

type xxh3Hash128 struct{ *xxh3.Hasher128 }

func (h xxh3Hash128) Value() Value {
	v := h.Sum128()
	return Value{Hi: v.Hi, Lo: v.Lo}
}

func (h xxh3Hash128) Sum64() uint64 { return h.Sum128().Lo }
