package csum

import (
	"unsafe"

	"github.com/sigcheck/sigcheck/internal/xxh3k"
)

// xxh3CopySum copies src into dst and returns XXH3-64 (or, wide,
// XXH3-128) of src, with internal/xxh3k's fused kernel: its whole blocks
// are loaded once, stored and accumulated in one pass (with non-temporal
// stores when stream asks for them and dst is 64-byte aligned), and the
// tail, under a block, is copied and hashed after. zeebo/xxh3's streaming
// Hasher, fed pieces, copies each through a buffer and ran the fused copy
// slower than a copy followed by one xxh3.Hash; a copy and the block
// kernel taking turns in 2 KiB pieces reached 0.61–0.79 of the plain copy
// at 1 MiB, the fused kernel 0.9 (BenchmarkGoals). len(src) ≥
// xxh3k.LongMin; dst is at least as long.
func xxh3CopySum(dst, src []byte, stream, wide bool) Value {
	n := len(src)
	body := xxh3k.WholeBlocks(n) * xxh3k.Block
	acc := xxh3k.Init
	switch {
	case !stream:
		xxh3k.CopyBlocks(&acc, dst, src[:body])
	case uintptr(unsafe.Pointer(unsafe.SliceData(dst)))&63 == 0:
		xxh3k.CopyBlocksStream(&acc, dst, src[:body])
	default:
		// Non-temporal stores want whole aligned lines, which this dst
		// does not have at the block's offsets: each piece is hashed from
		// src, which streamCopy then reads from the cache.
		for off := 0; off < body; off += streamPiece {
			end := min(off+streamPiece, body)
			xxh3k.Blocks(&acc, src[off/xxh3k.Block*xxh3k.Block:end/xxh3k.Block*xxh3k.Block])
			streamCopy(dst[off:end], src[off:end])
		}
		sfence()
	}
	copy(dst[body:n], src[body:n])
	xxh3k.Tail(&acc, src[:n])
	if !wide {
		return Value{Lo: xxh3k.Sum64(&acc, n)}
	}
	lo, hi := xxh3k.Sum128(&acc, n)
	return Value{Lo: lo, Hi: hi}
}
