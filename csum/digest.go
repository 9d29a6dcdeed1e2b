package csum

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"github.com/zeebo/blake3"
)

// The cryptographic digests people exchange files with: SHA-256
// (sha256sum) and BLAKE3 (b3sum). They are here for the command line's
// files and for transfers that want a digest no one can steer; for
// accidental corruption the checksums above are as good and many times
// faster.
//
// Their digests are 256 bits, wider than a Value: a Value holds the
// leftmost 128 bits (Hi the first eight bytes, Lo the next eight, read
// big-endian, so that Format prints the digest's first 32 hex digits),
// which is a truncated digest in the sense of NIST SP 800-107 §5.1. A
// Hash's Sum appends the whole digest, as sha256sum and b3sum print it.

// SHA-256 (FIPS 180-4) from crypto/sha256, which uses the SHA-NI
// instructions on amd64 and the ARMv8 SHA2 ones on arm64.
var sha256Alg = &Algorithm{
	Name: "sha256", Aliases: []string{"sha-256", "sha2-256"}, Size: 32,
	Detects: Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:   "SHA-256 (FIPS 180-4), from crypto/sha256",
	sum: func(p []byte) Value {
		d := sha256.Sum256(p)
		return leftmost128(d[:])
	},
	new: func() Hash { return digestHash{sha256.New()} },
}

// BLAKE3 (O'Connor, Aumasson, Neves, Wilcox-O'Hearn, 2020), 256-bit
// output, unkeyed, from github.com/zeebo/blake3 (AVX-512 and AVX2 kernels,
// checked against the official test vectors).
var blake3Alg = &Algorithm{
	Name: "blake3", Aliases: []string{"b3"}, Size: 32,
	Detects: Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely},
	About:   "BLAKE3, 256 bits, from github.com/zeebo/blake3",
	sum: func(p []byte) Value {
		d := blake3.Sum256(p)
		return leftmost128(d[:])
	},
	new: func() Hash { return digestHash{blake3.New()} },
}

// leftmost128 reads the first 16 bytes of a digest as a Value.
func leftmost128(d []byte) Value {
	return Value{Hi: binary.BigEndian.Uint64(d), Lo: binary.BigEndian.Uint64(d[8:])}
}

// digestHash adapts a hash.Hash with a digest wider than 128 bits.
type digestHash struct{ hash.Hash }

func (h digestHash) Value() Value {
	var b [64]byte
	return leftmost128(h.Sum(b[:0]))
}

func (h digestHash) Sum64() uint64 { return h.Value().Lo }
