#include "textflag.h"
#include "xxh3k_amd64.h"

// One stripe at byte OFF of the block at SI.
#define STRIPE(OFF, KEY, ACC, D, P, H) \
	VMOVDQU64 OFF(SI), D; \
	ACCUM(D, KEY, ACC, P, H)

// func blocksAVX512(acc *Acc, data *byte, n int, secret *byte)
//
// Consumes n whole 1024-byte blocks: per block 16 stripes, stripe s
// keyed by secret+8s, then the scramble with secret+128 (BLOCK16).
TEXT ·blocksAVX512(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), AX
	MOVQ data+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ secret+24(FP), DX
	VMOVDQU64 (AX), Z0
	VPXORQ Z1, Z1, Z1
	MOVQ $0x9E3779B1, R8
	VPBROADCASTQ R8, Z31
	VMOVDQU64 0(DX), Z2
	VMOVDQU64 8(DX), Z3
	VMOVDQU64 16(DX), Z4
	VMOVDQU64 24(DX), Z5
	VMOVDQU64 32(DX), Z6
	VMOVDQU64 40(DX), Z7
	VMOVDQU64 48(DX), Z8
	VMOVDQU64 56(DX), Z9
	VMOVDQU64 64(DX), Z10
	VMOVDQU64 72(DX), Z11
	VMOVDQU64 80(DX), Z12
	VMOVDQU64 88(DX), Z13
	VMOVDQU64 96(DX), Z14
	VMOVDQU64 104(DX), Z15
	VMOVDQU64 112(DX), Z16
	VMOVDQU64 120(DX), Z17
	VMOVDQU64 128(DX), Z18
	TESTQ CX, CX
	JZ done

block:
	BLOCK16
	ADDQ $1024, SI
	DECQ CX
	JNZ block

done:
	VMOVDQU64 Z0, (AX)
	VZEROUPPER
	RET

// func stripesAVX512(acc *Acc, data *byte, n int, key *byte)
//
// Consumes n stripes of 64 bytes, stripe s keyed by key+8s, with no
// scramble: the last block's stripes (n < 16) and the last stripe.
TEXT ·stripesAVX512(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), AX
	MOVQ data+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ key+24(FP), DX
	VMOVDQU64 (AX), Z0
	TESTQ CX, CX
	JZ sdone

stripe:
	VMOVDQU64 (SI), Z20
	VMOVDQU64 (DX), Z2
	ACCUM(Z20, Z2, Z0, Z21, Z24)
	ADDQ $64, SI
	ADDQ $8, DX
	DECQ CX
	JNZ stripe

sdone:
	VMOVDQU64 Z0, (AX)
	VZEROUPPER
	RET
