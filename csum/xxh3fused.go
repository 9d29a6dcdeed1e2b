package csum

import "github.com/sigcheck/sigcheck/internal/xxh3k"

// xxh3CopySum copies src into dst in pieces of piece bytes and returns
// XXH3-64 (or, wide, XXH3-128) of src, consuming each piece's whole
// blocks right after its copy (from dst, in cache) — or, with stream,
// right before it (from src, which the non-temporal copy then reads from
// cache, since its stores leave nothing there). It runs internal/xxh3k's
// block kernel: zeebo/xxh3's streaming Hasher, fed pieces, copies each
// through a buffer and ran the fused copy slower than a copy followed by
// one xxh3.Hash. len(src) ≥ xxh3k.LongMin; dst is at least as long.
func xxh3CopySum(dst, src []byte, piece int, stream, wide bool) Value {
	n := len(src)
	blocks := xxh3k.WholeBlocks(n)
	acc := xxh3k.Init
	for off := 0; off < n; off += piece {
		end := min(off+piece, n)
		// The blocks that end in this piece (a piece need not divide
		// the block: hashing from dst then reads the copied bytes of
		// earlier pieces too).
		b0, b1 := off/xxh3k.Block, min(end/xxh3k.Block, blocks)
		if stream {
			xxh3k.Blocks(&acc, src[b0*xxh3k.Block:b1*xxh3k.Block])
			streamCopy(dst[off:end], src[off:end])
			continue
		}
		copy(dst[off:end], src[off:end])
		xxh3k.Blocks(&acc, dst[b0*xxh3k.Block:b1*xxh3k.Block])
	}
	if stream {
		sfence()
	}
	xxh3k.Tail(&acc, src[:n])
	if !wide {
		return Value{Lo: xxh3k.Sum64(&acc, n)}
	}
	lo, hi := xxh3k.Sum128(&acc, n)
	return Value{Lo: lo, Hi: hi}
}
