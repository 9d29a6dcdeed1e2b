package csum

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveXXH3Kernel says whether xxh3Blocks runs the AVX-512 kernel; without
// it CopySum streams XXH3 through zeebo/xxh3's Hasher, whose AVX2 path
// beats a scalar loop.
var haveXXH3Kernel = cpu.X86.HasAVX512F

//go:noescape
func xxh3BlocksAVX512(acc *xxh3Acc, data *byte, n int, secret *byte)

// xxh3Blocks consumes p, whole blocks.
func xxh3Blocks(acc *xxh3Acc, p []byte) {
	if n := len(p) / xxh3Block; n > 0 {
		if haveXXH3Kernel {
			xxh3BlocksAVX512(acc, unsafe.SliceData(p), n, &xxh3Secret[0])
			return
		}
		xxh3BlocksGeneric(acc, p, n)
	}
}
