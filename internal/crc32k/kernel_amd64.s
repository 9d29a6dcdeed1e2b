#include "textflag.h"

// Each 128-bit lane of a ZMM register is folded F bits down the message
// with two carry-less products, lo64·k1 ($0x00) and hi64·k2 ($0x11), whose
// sum VPTERNLOGD $0x96 (a three-way xor) adds to the 16 bytes F bits on.
// kernelConsts (consts.go) holds the pairs (k1, k2) by offset:
//   0: F = 2048   16: F = 1536   32: F = 1024   48: F = 512
//   64: the four lanes' pairs for the last reduction, F = 384, 256, 128, 0.

// func updateAVX512(crc uint32, p *byte, n int, k *[16]uint64) uint32
TEXT ·updateAVX512(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ k+24(FP), DX

	// The register xored into the first 4 bytes makes the CRC of the
	// message from a zero register the CRC from crc.
	VMOVD AX, X4
	VBROADCASTI32X4 48(DX), Z19
	CMPQ  CX, $256
	JB    one

	// Four accumulators, 256 bytes a step: the products of one step do
	// not wait on each other.
	VBROADCASTI32X4 0(DX), Z16
	VPXORQ    0(SI), Z4, Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	ADDQ $256, SI
	SUBQ $256, CX

four:
	CMPQ CX, $256
	JB   join
	VPCLMULQDQ $0x00, Z16, Z0, Z4
	VPCLMULQDQ $0x11, Z16, Z0, Z0
	VPCLMULQDQ $0x00, Z16, Z1, Z5
	VPCLMULQDQ $0x11, Z16, Z1, Z1
	VPCLMULQDQ $0x00, Z16, Z2, Z6
	VPCLMULQDQ $0x11, Z16, Z2, Z2
	VPCLMULQDQ $0x00, Z16, Z3, Z7
	VPCLMULQDQ $0x11, Z16, Z3, Z3
	VPTERNLOGD $0x96, 0(SI), Z4, Z0
	VPTERNLOGD $0x96, 64(SI), Z5, Z1
	VPTERNLOGD $0x96, 128(SI), Z6, Z2
	VPTERNLOGD $0x96, 192(SI), Z7, Z3
	ADDQ $256, SI
	SUBQ $256, CX
	JMP  four

join:
	// Z3 += Z0·x^1536 + Z1·x^1024 + Z2·x^512, all six products at once.
	VBROADCASTI32X4 16(DX), Z17
	VBROADCASTI32X4 32(DX), Z18
	VPCLMULQDQ $0x00, Z17, Z0, Z4
	VPCLMULQDQ $0x11, Z17, Z0, Z5
	VPCLMULQDQ $0x00, Z18, Z1, Z6
	VPCLMULQDQ $0x11, Z18, Z1, Z7
	VPCLMULQDQ $0x00, Z19, Z2, Z8
	VPCLMULQDQ $0x11, Z19, Z2, Z9
	VPTERNLOGD $0x96, Z4, Z5, Z3
	VPTERNLOGD $0x96, Z6, Z7, Z3
	VPTERNLOGD $0x96, Z8, Z9, Z3
	VMOVDQA64  Z3, Z0
	JMP        tail

one:
	VPXORQ 0(SI), Z4, Z0
	ADDQ   $64, SI
	SUBQ   $64, CX

tail:
	// The last whole 64-byte pieces, one register.
	TESTQ CX, CX
	JZ    reduce
	VPCLMULQDQ $0x00, Z19, Z0, Z4
	VPCLMULQDQ $0x11, Z19, Z0, Z0
	VPTERNLOGD $0x96, 0(SI), Z4, Z0
	ADDQ $64, SI
	SUBQ $64, CX
	JMP  tail

reduce:
	// Lanes 0–2 folded onto lane 3 (whose constants are zero, so that its
	// products vanish and it is xored in as it is), then the 128 bits left
	// run through the CRC32 instruction from a zero register: that is
	// their product by x^32 reduced mod P, the CRC.
	VMOVDQU64      64(DX), Z20
	VPCLMULQDQ     $0x00, Z20, Z0, Z4
	VPCLMULQDQ     $0x11, Z20, Z0, Z5
	VPXORQ         Z5, Z4, Z4
	VEXTRACTI64X4  $1, Z4, Y5
	VPXORQ         Y5, Y4, Y4
	VEXTRACTI32X4  $1, Y4, X5
	VEXTRACTI32X4  $3, Z0, X6
	VPTERNLOGD     $0x96, X6, X5, X4
	VMOVQ          X4, AX
	VPEXTRQ        $1, X4, BX
	XORL           CX, CX
	CRC32Q         AX, CX
	CRC32Q         BX, CX
	MOVL           CX, ret+32(FP)
	VZEROUPPER
	RET
