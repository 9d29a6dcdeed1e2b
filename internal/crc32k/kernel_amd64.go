package crc32k

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Available says whether the VPCLMULQDQ kernel runs here: it needs
// AVX-512 (F and VL, with the operating system saving the registers,
// which x/sys/cpu checks), its 512-bit carry-less multiply, and SSE4.2's
// CRC32 instruction for the last reduction.
var Available = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPCLMULQDQ && cpu.X86.HasSSE42

// useKernel is Available unless a test turns the kernel off to check the
// portable path.
var useKernel = Available

// kernelMin is the shortest input given to the kernel: at 64 bytes
// hash/crc32's CRC32-instruction loop is as fast (8.8 ns against 9.0,
// BenchmarkUpdate), at 128 the kernel is faster (10.4 ns against 14.4).
const kernelMin = 128

// updateAVX512 folds the n bytes at p (n a positive multiple of 64) into
// the CRC-32C register crc (not complemented) and returns the register.
//
//go:noescape
func updateAVX512(crc uint32, p *byte, n int, k *[kernelConstWords]uint64) uint32

func updateKernel(crc uint32, p []byte) uint32 {
	return updateAVX512(crc, unsafe.SliceData(p), len(p), &kernelConsts)
}

//go:noescape
func copyUpdateAVX512(crc uint32, dst, src *byte, n int, k *[kernelConstWords]uint64) uint32

//go:noescape
func copyUpdateNTAVX512(crc uint32, dst, src *byte, n int, k *[kernelConstWords]uint64) uint32

// copyKernel copies src (a positive multiple of 64 bytes) into dst, as
// long, folding it into the register crc; nt asks for non-temporal stores,
// dst then 64-byte aligned.
func copyKernel(crc uint32, dst, src []byte, nt bool) uint32 {
	if nt {
		return copyUpdateNTAVX512(crc, unsafe.SliceData(dst), unsafe.SliceData(src), len(src), &kernelConsts)
	}
	return copyUpdateAVX512(crc, unsafe.SliceData(dst), unsafe.SliceData(src), len(src), &kernelConsts)
}
