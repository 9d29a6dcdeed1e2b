#include "textflag.h"
#include "xxh3k_amd64.h"

// The fused copy+XXH3 kernels: blocksAVX512's accumulation
// (kernel_amd64.s) on stripes loaded from src and stored to dst in the
// same pass, so that each byte is read once. ST is the store: VMOVDQU64,
// or VMOVNTDQ (non-temporal, dst 64-byte aligned).

// One stripe at byte OFF of the block, loaded from SI and stored to DI
// by ST (defined before each kernel).
#define STRIPE(OFF, KEY, ACC, D, P, H) \
	VMOVDQU64 OFF(SI), D; \
	ST        D, OFF(DI); \
	ACCUM(D, KEY, ACC, P, H)

// Loads the accumulators into Z0 (Z1 zero), the prime into Z31, the 16
// stripe keys into Z2–Z17 and the scramble key into Z18.
#define SETUP \
	MOVQ         acc+0(FP), AX; \
	MOVQ         dst+8(FP), DI; \
	MOVQ         src+16(FP), SI; \
	MOVQ         n+24(FP), CX; \
	MOVQ         secret+32(FP), DX; \
	VMOVDQU64    (AX), Z0; \
	VPXORQ       Z1, Z1, Z1; \
	MOVQ         $0x9E3779B1, R8; \
	VPBROADCASTQ R8, Z31; \
	VMOVDQU64    0(DX), Z2; \
	VMOVDQU64    8(DX), Z3; \
	VMOVDQU64    16(DX), Z4; \
	VMOVDQU64    24(DX), Z5; \
	VMOVDQU64    32(DX), Z6; \
	VMOVDQU64    40(DX), Z7; \
	VMOVDQU64    48(DX), Z8; \
	VMOVDQU64    56(DX), Z9; \
	VMOVDQU64    64(DX), Z10; \
	VMOVDQU64    72(DX), Z11; \
	VMOVDQU64    80(DX), Z12; \
	VMOVDQU64    88(DX), Z13; \
	VMOVDQU64    96(DX), Z14; \
	VMOVDQU64    104(DX), Z15; \
	VMOVDQU64    112(DX), Z16; \
	VMOVDQU64    120(DX), Z17; \
	VMOVDQU64    128(DX), Z18

#define ST VMOVDQU64

// func copyBlocksAVX512(acc *Acc, dst, src *byte, n int, secret *byte)
//
// Copies n whole 1024-byte blocks from src to dst and consumes them.
TEXT ·copyBlocksAVX512(SB), NOSPLIT, $0-40
	SETUP
	TESTQ CX, CX
	JZ    done

block:
	BLOCK16
	ADDQ $1024, SI
	ADDQ $1024, DI
	DECQ CX
	JNZ  block

done:
	VMOVDQU64 Z0, (AX)
	VZEROUPPER
	RET

#undef ST
#define ST VMOVNTDQ

// func copyBlocksNTAVX512(acc *Acc, dst, src *byte, n int, secret *byte)
//
// copyBlocksAVX512 with non-temporal stores (dst 64-byte aligned), for
// copies larger than the caches, prefetching the source 2 KiB ahead; it
// ends with SFENCE, so that the stores are ordered before any later one.
TEXT ·copyBlocksNTAVX512(SB), NOSPLIT, $0-40
	SETUP
	TESTQ CX, CX
	JZ    done

block:
	PREFETCHT0 2048(SI)
	PREFETCHT0 2112(SI)
	PREFETCHT0 2176(SI)
	PREFETCHT0 2240(SI)
	PREFETCHT0 2304(SI)
	PREFETCHT0 2368(SI)
	PREFETCHT0 2432(SI)
	PREFETCHT0 2496(SI)
	PREFETCHT0 2560(SI)
	PREFETCHT0 2624(SI)
	PREFETCHT0 2688(SI)
	PREFETCHT0 2752(SI)
	PREFETCHT0 2816(SI)
	PREFETCHT0 2880(SI)
	PREFETCHT0 2944(SI)
	PREFETCHT0 3008(SI)
	BLOCK16
	ADDQ $1024, SI
	ADDQ $1024, DI
	DECQ CX
	JNZ  block
	SFENCE

done:
	VMOVDQU64 Z0, (AX)
	VZEROUPPER
	RET
