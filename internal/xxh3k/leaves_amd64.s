#include "textflag.h"
#include "xxh3k_amd64.h"

// The leaves kernel: a Merkle tree's leaves, seeded XXH3-64 of
// consecutive segments, one call for all of them. Calling xxh3.HashSeed
// per 2 KiB leaf spent a third of its time outside the accumulation:
// deriving the seeded secret in scalar code, the call, the tail, the
// merge. Here the secret is derived in three vector additions, the keys
// stay in registers, and the next leaf's lines are prefetched while
// this one is hashed.
//
// Registers: Z0/Z1 the even and odd stripes' accumulators (as
// blocksAVX512), Z2–Z18 the seeded keys at secret+8s (s = 0…16),
// Z26 the initial accumulators, Z29 (+seed, −seed, …), Z30 its negation,
// Z31 PRIME32_1. The seeded secret is also stored at 0(SP) (192 bytes)
// for the stripes after the whole blocks, the last stripe (at 121) and
// the merge (at 11); the accumulators at 192(SP).

// One stripe at OFF(BX), keyed by KEY, into ACC; the line a leaf ahead
// is prefetched.
#define STRIPE(OFF, KEY, ACC, D, P, H) \
	PREFETCHT0 (OFF+2048)(BX); \
	VMOVDQU64 OFF(BX), D; \
	ACCUM(D, KEY, ACC, P, H)

// One mulFold64 of the merge: R11 += lo^hi of (acc[2i]^s[A])·(acc[2i+1]^s[A+8]).
#define FOLD(ACC, A) \
	MOVQ ACC(SP), AX; \
	XORQ A(SP), AX; \
	MOVQ (ACC+8)(SP), DX; \
	XORQ (A+8)(SP), DX; \
	MULQ DX; \
	XORQ DX, AX; \
	ADDQ AX, R11

// func leavesAVX512(out *uint64, data *byte, seg, n int, seed uint64, secret *byte, init *Acc)
//
// out[j] = XXH3-64 with seed seed+j of the seg bytes at data+j·seg, for
// j < n; seg > 240.
TEXT ·leavesAVX512(SB), NOSPLIT, $256-56
	MOVQ out+0(FP), DI
	MOVQ data+8(FP), SI
	MOVQ seg+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ seed+32(FP), R9
	MOVQ init+48(FP), AX
	VMOVDQU64 (AX), Z26
	MOVQ $0x9E3779B1, AX
	VPBROADCASTQ AX, Z31
	MOVQ $0xAA, AX
	KMOVW AX, K1
	MOVQ $0x9E3779B185EBCA87, R13
	IMULQ R8, R13                  // seg·PRIME64_1, the merge's start
	TESTQ CX, CX
	JZ done

leaf:
	// The seeded secret: word w of the default one, + seed if w is
	// even, − seed if odd.
	VPBROADCASTQ R9, Z29
	MOVQ R9, AX
	NEGQ AX
	VPBROADCASTQ AX, K1, Z29
	VPXORQ Z30, Z30, Z30
	VPSUBQ Z29, Z30, Z30
	MOVQ secret+40(FP), BX
	VPADDQ 0(BX), Z29, Z2
	VPADDQ 8(BX), Z30, Z3
	VPADDQ 16(BX), Z29, Z4
	VPADDQ 24(BX), Z30, Z5
	VPADDQ 32(BX), Z29, Z6
	VPADDQ 40(BX), Z30, Z7
	VPADDQ 48(BX), Z29, Z8
	VPADDQ 56(BX), Z30, Z9
	VPADDQ 64(BX), Z29, Z10
	VPADDQ 72(BX), Z30, Z11
	VPADDQ 80(BX), Z29, Z12
	VPADDQ 88(BX), Z30, Z13
	VPADDQ 96(BX), Z29, Z14
	VPADDQ 104(BX), Z30, Z15
	VPADDQ 112(BX), Z29, Z16
	VPADDQ 120(BX), Z30, Z17
	VPADDQ 128(BX), Z29, Z18
	VMOVDQU64 Z2, 0(SP)
	VMOVDQU64 Z10, 64(SP)
	VMOVDQU64 Z18, 128(SP)
	VMOVDQA64 Z26, Z0
	VPXORQ Z1, Z1, Z1
	MOVQ SI, BX
	LEAQ -1(R8), R10
	SHRQ $10, R10                  // whole blocks: (seg−1)/1024
	JZ tail

block:
	BLOCK16
	ADDQ $1024, BX
	DECQ R10
	JNZ block

tail:
	// The last block's whole stripes, (seg−1)%1024/64 of them, keyed
	// from the stored secret: two at a time, into Z0 and Z1 as in a
	// block (a single chain of additions through Z0 made the 15 stripes
	// of a 2 KiB leaf's second block wait on one another), then the odd
	// one.
	LEAQ -1(R8), R10
	SHRQ $6, R10
	ANDQ $15, R10
	XORQ AX, AX
	LEAQ -1(R10), R11              // pairs while AX < R10−1
	CMPQ AX, R11
	JGE odd

pair:
	PREFETCHT0 2048(BX)
	PREFETCHT0 2112(BX)
	VMOVDQU64 (BX), Z20
	VMOVDQU64 (SP)(AX*8), Z2
	ACCUM(Z20, Z2, Z0, Z21, Z24)
	VMOVDQU64 64(BX), Z22
	VMOVDQU64 8(SP)(AX*8), Z3
	ACCUM(Z22, Z3, Z1, Z23, Z25)
	ADDQ $128, BX
	ADDQ $2, AX
	CMPQ AX, R11
	JLT pair

odd:
	CMPQ AX, R10
	JEQ last
	PREFETCHT0 2048(BX)
	VMOVDQU64 (BX), Z20
	VMOVDQU64 (SP)(AX*8), Z2
	ACCUM(Z20, Z2, Z0, Z21, Z24)

last:
	// The leaf's last 64 bytes, keyed by the secret at 192−64−7.
	VPADDQ Z1, Z0, Z0
	VMOVDQU64 -64(SI)(R8*1), Z20
	VMOVDQU64 121(SP), Z2
	ACCUM(Z20, Z2, Z0, Z21, Z24)
	VMOVDQU64 Z0, 192(SP)

	// Merge with the secret at 11, then XXH3's avalanche.
	MOVQ R13, R11
	FOLD(192, 11)
	FOLD(208, 27)
	FOLD(224, 43)
	FOLD(240, 59)
	MOVQ R11, AX
	SHRQ $37, AX
	XORQ AX, R11
	MOVQ $0x165667919E3779F9, AX
	IMULQ AX, R11
	MOVQ R11, AX
	SHRQ $32, AX
	XORQ AX, R11
	MOVQ R11, (DI)

	ADDQ $8, DI
	ADDQ R8, SI
	INCQ R9
	DECQ CX
	JNZ leaf

done:
	VZEROUPPER
	RET
