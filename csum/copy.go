package csum

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/sigcheck/sigcheck/internal/crc32k"
	"github.com/sigcheck/sigcheck/internal/xxh3k"
)

// CopyChunk is the piece size of Copy and CopySum below 8 MiB: large
// enough that the per-piece overhead vanishes, small enough that a piece
// stays in the L1/L2 caches between its copy and its checksum.
const CopyChunk = 32 << 10

// Copy copies src into dst and returns the number of bytes copied, like
// copy(dst, src), choosing by size the faster of two ways measured on this
// project's machines: below 8 MiB, ordinary stores in CopyChunk pieces
// (Go's copy of 1 MiB or more switches to non-temporal stores, which makes
// a 1 MiB copy 20 % slower while both buffers fit in cache); from 8 MiB,
// non-temporal stores (which skip reading each destination line before
// writing it: 15 GB/s against 9 GB/s for ordinary stores at 64 MiB).
// BenchmarkSum's copy rows compare them with copy itself.
func Copy(dst, src []byte) int {
	n := min(len(dst), len(src))
	if haveStreamingCopy && n >= streamMin {
		streamCopy(dst[:n], src[:n])
		sfence()
		return n
	}
	for off := 0; off < n; off += CopyChunk {
		end := min(off+CopyChunk, n)
		copy(dst[off:end], src[off:end])
	}
	return n
}

// xxh3FusedMin is the size from which CopySum of XXH3 runs the fused
// kernel rather than a copy and zeebo/xxh3's one-shot hash (measured: at
// 8 KiB a tie, at 32 KiB 0.85 µs against 1.3).
const xxh3FusedMin = 16 << 10

// streamMin is the size from which CopySum writes with non-temporal
// stores: past it, source and destination no longer fit in the last-level
// cache together. (Go's own copy switches at 1 MiB; measured here,
// BenchmarkStreamMin, ordinary stores are as fast up to 4 MiB and the
// streaming ones 40 % faster at 16 MiB.)
var streamMin = 8 << 20

// streamPiece is the piece size of the streaming CopySum: small, so that
// reading (and checksumming) one piece and writing the previous one
// overlap (BenchmarkStreamPiece: 1 KiB beats 4 KiB by 20–50 %).
var streamPiece = 1 << 10

// CopySum copies src into dst and returns the checksum of the copy, in one
// pass over memory. It panics if dst is shorter than src. The checksum is
// the same as Sum(src); if dst and src overlap, dst ends as copy leaves
// it, and the checksum is of what src held.
//
// Below 8 MiB each CopyChunk piece is checksummed right after it is
// copied, while it is in cache. From 8 MiB, where the plain copy's stores
// cost a read of each destination line first (read-for-ownership), each
// 1 KiB piece is checksummed as it is read and then written with
// non-temporal stores (on amd64), while the next piece is prefetched:
// memory sees one read and one write per byte, as it does for Go's copy of
// large buffers, and the checksum rides on the read.
//
// Algorithms whose state starts from the total length (MurmurHash64A,
// SuperFastHash) stream too, since the length is known here.
//
// CRC-32C (on CPUs with AVX-512 VPCLMULQDQ) and XXH3 from 16 KiB (on
// CPUs with AVX-512) run fused kernels of their own, internal/crc32k's
// and internal/xxh3k's, which load each line once, store it and fold or
// accumulate it in the same loop, with non-temporal stores from 8 MiB:
// at 1 MiB both run at 0.95 of the plain copy (BenchmarkGoals), where the
// copy and the checksum taking turns in pieces made 0.46 (CRC-32C) and
// 0.80 (XXH3); from memory, at 64 MiB, at par with it.
func (a *Algorithm) CopySum(dst, src []byte) Value {
	return a.copySum(dst, src, haveStreamingCopy && len(src) >= streamMin)
}

// coldMin is the size from which CopySumCold streams: below it a piece
// costs more to set up than the stores save.
const coldMin = 4 << 10

// CopySumCold is CopySum for a destination that is not in cache and will
// not be read soon, such as a copy kept in case it is needed again: it
// writes with non-temporal stores from 4 KiB (on amd64), where CopySum
// waits for 8 MiB, so that the copy neither reads each destination line
// first nor pushes the caller's data out of the cache. The checksum and
// the copy are CopySum's.
func (a *Algorithm) CopySumCold(dst, src []byte) Value {
	return a.copySum(dst, src, haveStreamingCopy && len(src) >= coldMin)
}

func (a *Algorithm) copySum(dst, src []byte, stream bool) Value {
	if len(dst) < len(src) {
		panic("csum: CopySum: dst shorter than src")
	}
	n := len(src)
	if overlapping(dst[:n], src) {
		// Pieces, and the fused kernels' lines, would read what an
		// earlier store wrote; copy knows which way round to go.
		v := a.sum(src)
		copy(dst, src)
		return v
	}
	if a == crc32cAlg && crc32k.Available {
		if stream {
			return Value{Lo: uint64(crc32k.CopyUpdateStream(0, dst, src))}
		}
		return Value{Lo: uint64(crc32k.CopyUpdate(0, dst, src))}
	}
	if a.xxh3 != 0 && xxh3k.Available && n >= xxh3FusedMin {
		return xxh3CopySum(dst, src, stream, a.xxh3 == 128)
	}
	if n <= CopyChunk {
		copy(dst, src)
		return a.sum(dst[:n])
	}
	h := a.NewFor(int64(n))
	if stream {
		for off := 0; off < n; off += streamPiece {
			end := min(off+streamPiece, n)
			h.Write(src[off:end])
			streamCopy(dst[off:end], src[off:end])
		}
		sfence()
		return h.Value()
	}
	for off := 0; off < n; off += CopyChunk {
		end := min(off+CopyChunk, n)
		copy(dst[off:end], src[off:end])
		h.Write(dst[off:end])
	}
	return h.Value()
}

// overlapping reports whether a and b share memory without being the same
// bytes.
func overlapping(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa != pb && pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// parallelMin is the size below which SumParallel does not split: under
// it, starting goroutines costs more than the cores save.
const parallelMin = 512 << 10

// SumParallel returns Sum(p), computed in pieces on all cores and joined
// with Combine when the algorithm combines and p is large (512 KiB or
// more); otherwise it is Sum(p). It starts at most GOMAXPROCS goroutines,
// all finished when it returns.
func (a *Algorithm) SumParallel(p []byte) Value {
	workers := runtime.GOMAXPROCS(0)
	if a.combine == nil || workers < 2 || len(p) < parallelMin {
		return a.sum(p)
	}
	// Pieces are multiples of 4 KiB, hence of every CombineAlign.
	piece := (len(p)/workers + 4095) &^ 4095
	n := (len(p) + piece - 1) / piece
	sums := make([]Value, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sums[i] = a.sum(p[i*piece : min((i+1)*piece, len(p))])
		})
	}
	wg.Wait()
	acc := sums[0]
	for i := 1; i < n; i++ {
		acc = a.combine(acc, sums[i], uint64(min((i+1)*piece, len(p))-i*piece))
	}
	return acc
}
