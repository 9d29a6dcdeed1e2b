//go:build !amd64

package xxh3k

// Available is false: the scalar loops run.
var Available = false

func blocks(acc *Acc, p []byte, n int, s *secret) { blocksGeneric(acc, p, n, s) }
func stripes(acc *Acc, p []byte, n int, k []byte) { stripesGeneric(acc, p, n, k) }

func copyBlocks(acc *Acc, dst, src []byte, n int, s *secret, nt bool) {
	copyBlocksGeneric(acc, dst, src, n, s)
}

func leaves(out []uint64, data []byte, seg int, seed uint64) { leavesGeneric(out, data, seg, seed) }
