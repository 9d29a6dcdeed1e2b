package xxh3k

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// aligned64 returns n bytes starting on a 64-byte boundary, plus off.
func aligned64(n, off int) []byte {
	b := make([]byte, n+off+64)
	skip := int(-uintptr(unsafe.Pointer(&b[0])) & 63)
	return b[skip+off : skip+off+n]
}

// The fused copies equal a copy followed by Blocks (with the kernel, and
// with the scalar loop), from random states: the accumulators and every
// copied byte, with nothing written past the whole blocks.
func TestCopyBlocks(t *testing.T) {
	kernels := []bool{false}
	if Available {
		kernels = append(kernels, true)
	}
	defer func(k bool) { Available = k }(Available)
	props := gopter.NewProperties(params(200))
	props.Property("CopyBlocks(Stream) = copy, then Blocks", prop.ForAll(func(n, soff, doff int, seed uint64, stream bool) bool {
		src := random(n+soff, seed)[soff:]
		rng := rand.New(rand.NewPCG(seed, 9))
		var start Acc
		for i := range start {
			start[i] = rng.Uint64()
		}
		whole := n / Block * Block
		want := start
		Available = false
		blocksGeneric(&want, src, n/Block, &defaultSecret)
		for _, k := range kernels {
			Available = k
			if stream {
				doff = 0
			}
			dst := aligned64(n+1, doff)
			dst[whole] = 0x5A
			acc := start
			if stream {
				CopyBlocksStream(&acc, dst, src)
			} else {
				CopyBlocks(&acc, dst, src)
			}
			if acc != want || !bytes.Equal(dst[:whole], src[:whole]) || dst[whole] != 0x5A {
				t.Logf("kernel=%v stream=%v n=%d soff=%d doff=%d", k, stream, n, soff, doff)
				return false
			}
		}
		return true
	}, gen.IntRange(0, 9*Block+100), gen.IntRange(0, 63), gen.IntRange(0, 63), gen.UInt64(), gen.Bool()))
	props.TestingRun(t)
}

func TestCopyBlocksStreamUnaligned(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("CopyBlocksStream to an unaligned dst did not panic")
		}
	}()
	acc := Init
	CopyBlocksStream(&acc, aligned64(2*Block, 8), random(2*Block, 1))
}
