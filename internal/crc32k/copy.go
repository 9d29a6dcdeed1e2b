package crc32k

import (
	"hash/crc32"
	"unsafe"
)

// copyPiece is the piece of CopyUpdate's portable path: copied, then
// checksummed while it is still in the L1 cache.
const copyPiece = 16 << 10

// CopyUpdate copies src into dst and returns Update(crc, src). It panics
// if dst is shorter than src. With the kernel, each 64-byte line is
// loaded once, stored and folded into the CRC in the same pass; without
// it, the copy and the CRC alternate in pieces small enough to stay in
// cache between them. When dst and src overlap, dst ends as copy leaves
// it and the CRC is that of what src held.
func CopyUpdate(crc uint32, dst, src []byte) uint32 {
	n := len(src)
	dst = dst[:n]
	if overlap(dst, src) {
		// copy knows which way round to go; pieces would read what an
		// earlier piece wrote.
		copy(dst, src)
		return Update(crc, dst)
	}
	if useKernel && n >= kernelMin {
		body := n &^ 63
		crc = ^copyKernel(^crc, dst[:body], src[:body], false)
		dst, src = dst[body:], src[body:]
		n -= body
	}
	for off := 0; off < n; off += copyPiece {
		end := min(off+copyPiece, n)
		copy(dst[off:end], src[off:end])
		crc = crc32.Update(crc, table, dst[off:end])
	}
	return crc
}

// CopyUpdateStream is CopyUpdate with non-temporal stores, for copies
// larger than the last-level cache, where an ordinary store first reads
// the line it writes (read-for-ownership): memory then sees one read and
// one write per byte, as for a streaming copy. Without the kernel it is
// CopyUpdate. The stores are ordered (SFENCE) before it returns.
func CopyUpdateStream(crc uint32, dst, src []byte) uint32 {
	n := len(src)
	dst = dst[:n]
	if !useKernel || n < kernelMin+64 || overlap(dst, src) {
		return CopyUpdate(crc, dst, src)
	}
	// Non-temporal stores of whole lines need dst 64-byte aligned.
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst))) & 63)
	crc = CopyUpdate(crc, dst[:head], src[:head])
	body := (n - head) &^ 63
	crc = ^copyKernel(^crc, dst[head:head+body], src[head:head+body], true)
	return CopyUpdate(crc, dst[head+body:], src[head+body:])
}

// overlap reports whether a and b share memory without being the same
// bytes (which the kernel handles: each line is loaded before it is
// stored back).
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa != pb && pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}
