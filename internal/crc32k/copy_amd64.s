#include "textflag.h"

// The fused copy+CRC kernels: updateAVX512's folding (kernel_amd64.s,
// which explains the constants at k) on registers loaded from src and
// stored to dst in the same pass, so that each byte is read once. ST is
// the store: VMOVDQU64, or VMOVNTDQ (non-temporal, dst 64-byte aligned).

// Load and store the first 256 bytes into Z0–Z3, the register xored in.
#define FIRST4(ST) \
	VMOVD     AX, X4; \
	VMOVDQU64 0(SI), Z0; \
	VMOVDQU64 64(SI), Z1; \
	VMOVDQU64 128(SI), Z2; \
	VMOVDQU64 192(SI), Z3; \
	ST        Z0, 0(DI); \
	ST        Z1, 64(DI); \
	ST        Z2, 128(DI); \
	ST        Z3, 192(DI); \
	VPXORQ    Z4, Z0, Z0; \
	ADDQ      $256, SI; \
	ADDQ      $256, DI; \
	SUBQ      $256, CX

// Fold Z0–Z3 by 2048 bits (Z16) onto the next 256 bytes, stored on.
#define STEP4(ST) \
	VMOVDQU64  0(SI), Z8; \
	VMOVDQU64  64(SI), Z9; \
	VMOVDQU64  128(SI), Z10; \
	VMOVDQU64  192(SI), Z11; \
	ST         Z8, 0(DI); \
	ST         Z9, 64(DI); \
	ST         Z10, 128(DI); \
	ST         Z11, 192(DI); \
	VPCLMULQDQ $0x00, Z16, Z0, Z4; \
	VPCLMULQDQ $0x11, Z16, Z0, Z0; \
	VPCLMULQDQ $0x00, Z16, Z1, Z5; \
	VPCLMULQDQ $0x11, Z16, Z1, Z1; \
	VPCLMULQDQ $0x00, Z16, Z2, Z6; \
	VPCLMULQDQ $0x11, Z16, Z2, Z2; \
	VPCLMULQDQ $0x00, Z16, Z3, Z7; \
	VPCLMULQDQ $0x11, Z16, Z3, Z3; \
	VPTERNLOGD $0x96, Z8, Z4, Z0; \
	VPTERNLOGD $0x96, Z9, Z5, Z1; \
	VPTERNLOGD $0x96, Z10, Z6, Z2; \
	VPTERNLOGD $0x96, Z11, Z7, Z3; \
	ADDQ       $256, SI; \
	ADDQ       $256, DI; \
	SUBQ       $256, CX

// Z0 = Z0·x^1536 + Z1·x^1024 + Z2·x^512 + Z3.
#define JOIN4 \
	VBROADCASTI32X4 16(DX), Z17; \
	VBROADCASTI32X4 32(DX), Z18; \
	VPCLMULQDQ $0x00, Z17, Z0, Z4; \
	VPCLMULQDQ $0x11, Z17, Z0, Z5; \
	VPCLMULQDQ $0x00, Z18, Z1, Z6; \
	VPCLMULQDQ $0x11, Z18, Z1, Z7; \
	VPCLMULQDQ $0x00, Z19, Z2, Z8; \
	VPCLMULQDQ $0x11, Z19, Z2, Z9; \
	VPTERNLOGD $0x96, Z4, Z5, Z3; \
	VPTERNLOGD $0x96, Z6, Z7, Z3; \
	VPTERNLOGD $0x96, Z8, Z9, Z3; \
	VMOVDQA64  Z3, Z0

// The first 64 bytes into Z0, when there are fewer than 256.
#define FIRST1(ST) \
	VMOVD     AX, X4; \
	VMOVDQU64 0(SI), Z0; \
	ST        Z0, 0(DI); \
	VPXORQ    Z4, Z0, Z0; \
	ADDQ      $64, SI; \
	ADDQ      $64, DI; \
	SUBQ      $64, CX

// Fold Z0 by 512 bits (Z19) onto the next 64 bytes.
#define STEP1(ST) \
	VMOVDQU64  0(SI), Z8; \
	ST         Z8, 0(DI); \
	VPCLMULQDQ $0x00, Z19, Z0, Z4; \
	VPCLMULQDQ $0x11, Z19, Z0, Z0; \
	VPTERNLOGD $0x96, Z8, Z4, Z0; \
	ADDQ       $64, SI; \
	ADDQ       $64, DI; \
	SUBQ       $64, CX

// Z0's four lanes onto the last, then the CRC32 instruction: the register
// in CX.
#define REDUCE \
	VMOVDQU64     64(DX), Z20; \
	VPCLMULQDQ    $0x00, Z20, Z0, Z4; \
	VPCLMULQDQ    $0x11, Z20, Z0, Z5; \
	VPXORQ        Z5, Z4, Z4; \
	VEXTRACTI64X4 $1, Z4, Y5; \
	VPXORQ        Y5, Y4, Y4; \
	VEXTRACTI32X4 $1, Y4, X5; \
	VEXTRACTI32X4 $3, Z0, X6; \
	VPTERNLOGD    $0x96, X6, X5, X4; \
	VMOVQ         X4, AX; \
	VPEXTRQ       $1, X4, BX; \
	XORL          CX, CX; \
	CRC32Q        AX, CX; \
	CRC32Q        BX, CX

// func copyUpdateAVX512(crc uint32, dst, src *byte, n int, k *[16]uint64) uint32
//
// Copies n bytes (a positive multiple of 64) from src to dst and folds
// them into the register crc, which it returns.
TEXT ·copyUpdateAVX512(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ k+32(FP), DX
	VBROADCASTI32X4 48(DX), Z19
	CMPQ CX, $256
	JB   one
	VBROADCASTI32X4 0(DX), Z16
	FIRST4(VMOVDQU64)

four:
	CMPQ CX, $256
	JB   join
	STEP4(VMOVDQU64)
	JMP  four

join:
	JOIN4
	JMP tail

one:
	FIRST1(VMOVDQU64)

tail:
	TESTQ CX, CX
	JZ    reduce
	STEP1(VMOVDQU64)
	JMP   tail

reduce:
	REDUCE
	MOVL CX, ret+40(FP)
	VZEROUPPER
	RET

// func copyUpdateNTAVX512(crc uint32, dst, src *byte, n int, k *[16]uint64) uint32
//
// copyUpdateAVX512 with non-temporal stores (dst 64-byte aligned), for
// copies larger than the caches: the written lines go to memory without
// being read first, and without evicting the source the loop is about to
// read, which it prefetches 2 KiB ahead (as csum's copyNT). It ends with
// SFENCE, so that the stores are ordered before any later one, as the
// ordinary stores they replace would be.
TEXT ·copyUpdateNTAVX512(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ k+32(FP), DX
	VBROADCASTI32X4 48(DX), Z19
	CMPQ CX, $256
	JB   one
	VBROADCASTI32X4 0(DX), Z16
	FIRST4(VMOVNTDQ)

four:
	CMPQ CX, $256
	JB   join
	PREFETCHT0 2048(SI)
	PREFETCHT0 2112(SI)
	PREFETCHT0 2176(SI)
	PREFETCHT0 2240(SI)
	STEP4(VMOVNTDQ)
	JMP  four

join:
	JOIN4
	JMP tail

one:
	FIRST1(VMOVNTDQ)

tail:
	TESTQ CX, CX
	JZ    reduce
	STEP1(VMOVNTDQ)
	JMP   tail

reduce:
	REDUCE
	SFENCE
	MOVL CX, ret+40(FP)
	VZEROUPPER
	RET
