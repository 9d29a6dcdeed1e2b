#include "textflag.h"

// The fused copy+XXH3 kernels: blocksAVX512's accumulation
// (kernel_amd64.s) on stripes loaded from src and stored to dst in the
// same pass, so that each byte is read once. ST is the store: VMOVDQU64,
// or VMOVNTDQ (non-temporal, dst 64-byte aligned).

// One stripe at byte OFF of the block, keyed by KEY, into ACC, with
// scratch registers D, P, H.
#define STRIPE(ST, OFF, KEY, ACC, D, P, H) \
	VMOVDQU64 OFF(SI), D; \
	ST        D, OFF(DI); \
	VPXORQ    KEY, D, P; \
	VPSRLQ    $32, P, H; \
	VPMULUDQ  H, P, P; \
	VPSHUFD   $0x4e, D, D; \
	VPADDQ    D, ACC, ACC; \
	VPADDQ    P, ACC, ACC

// A whole block, then the scramble: acc ^= acc>>47 ^ key;
// acc *= PRIME32_1, as lo·p + (hi·p)<<32.
#define BLOCK(ST) \
	STRIPE(ST, 0, Z2, Z0, Z20, Z21, Z24); \
	STRIPE(ST, 64, Z3, Z1, Z22, Z23, Z25); \
	STRIPE(ST, 128, Z4, Z0, Z20, Z21, Z24); \
	STRIPE(ST, 192, Z5, Z1, Z22, Z23, Z25); \
	STRIPE(ST, 256, Z6, Z0, Z20, Z21, Z24); \
	STRIPE(ST, 320, Z7, Z1, Z22, Z23, Z25); \
	STRIPE(ST, 384, Z8, Z0, Z20, Z21, Z24); \
	STRIPE(ST, 448, Z9, Z1, Z22, Z23, Z25); \
	STRIPE(ST, 512, Z10, Z0, Z20, Z21, Z24); \
	STRIPE(ST, 576, Z11, Z1, Z22, Z23, Z25); \
	STRIPE(ST, 640, Z12, Z0, Z20, Z21, Z24); \
	STRIPE(ST, 704, Z13, Z1, Z22, Z23, Z25); \
	STRIPE(ST, 768, Z14, Z0, Z20, Z21, Z24); \
	STRIPE(ST, 832, Z15, Z1, Z22, Z23, Z25); \
	STRIPE(ST, 896, Z16, Z0, Z20, Z21, Z24); \
	STRIPE(ST, 960, Z17, Z1, Z22, Z23, Z25); \
	VPADDQ     Z1, Z0, Z0; \
	VPXORQ     Z1, Z1, Z1; \
	VPSRLQ     $47, Z0, Z20; \
	VPTERNLOGQ $0x96, Z18, Z20, Z0; \
	VPSRLQ     $32, Z0, Z21; \
	VPMULUDQ   Z31, Z0, Z0; \
	VPMULUDQ   Z31, Z21, Z21; \
	VPSLLQ     $32, Z21, Z21; \
	VPADDQ     Z21, Z0, Z0; \
	ADDQ       $1024, SI; \
	ADDQ       $1024, DI

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

// func copyBlocksAVX512(acc *Acc, dst, src *byte, n int, secret *byte)
//
// Copies n whole 1024-byte blocks from src to dst and consumes them.
TEXT ·copyBlocksAVX512(SB), NOSPLIT, $0-40
	SETUP
	TESTQ CX, CX
	JZ    done

block:
	BLOCK(VMOVDQU64)
	DECQ CX
	JNZ  block

done:
	VMOVDQU64 Z0, (AX)
	VZEROUPPER
	RET

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
	BLOCK(VMOVNTDQ)
	DECQ CX
	JNZ  block
	SFENCE

done:
	VMOVDQU64 Z0, (AX)
	VZEROUPPER
	RET
