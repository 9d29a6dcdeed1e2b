package xxh3k

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Available says whether the AVX-512 kernels run here.
var Available = cpu.X86.HasAVX512F

//go:noescape
func blocksAVX512(acc *Acc, data *byte, n int, secret *byte)

//go:noescape
func stripesAVX512(acc *Acc, data *byte, n int, key *byte)

func blocks(acc *Acc, p []byte, n int, s *secret) {
	if Available {
		blocksAVX512(acc, unsafe.SliceData(p), n, &s[0])
		return
	}
	blocksGeneric(acc, p, n, s)
}

func stripes(acc *Acc, p []byte, n int, k []byte) {
	if Available {
		stripesAVX512(acc, unsafe.SliceData(p), n, unsafe.SliceData(k))
		return
	}
	stripesGeneric(acc, p, n, k)
}

//go:noescape
func copyBlocksAVX512(acc *Acc, dst, src *byte, n int, secret *byte)

//go:noescape
func copyBlocksNTAVX512(acc *Acc, dst, src *byte, n int, secret *byte)

func copyBlocks(acc *Acc, dst, src []byte, n int, s *secret, nt bool) {
	switch {
	case !Available:
		copyBlocksGeneric(acc, dst, src, n, s)
	case nt:
		copyBlocksNTAVX512(acc, unsafe.SliceData(dst), unsafe.SliceData(src), n, &s[0])
	default:
		copyBlocksAVX512(acc, unsafe.SliceData(dst), unsafe.SliceData(src), n, &s[0])
	}
}

//go:noescape
func leavesAVX512(out *uint64, data *byte, seg, n int, seed uint64, secret *byte, init *Acc)

func leaves(out []uint64, data []byte, seg int, seed uint64) {
	if !Available {
		leavesGeneric(out, data, seg, seed)
		return
	}
	if len(out) > 0 {
		leavesAVX512(&out[0], unsafe.SliceData(data), seg, len(out), seed, &defaultSecret[0], &Init)
	}
}
