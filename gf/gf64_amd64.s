#include "textflag.h"

// func mul64CLMUL(a, b uint64) uint64
// a·b in GF(2^64) with p = x^64 + x^4 + x^3 + x + 1: one PCLMULQDQ, then
// the reduction of reduce64 (gf64.go) in general registers.
TEXT ·mul64CLMUL(SB), NOSPLIT, $0-24
	MOVQ a+0(FP), X0
	MOVQ b+8(FP), X1
	PCLMULQDQ $0x00, X1, X0
	MOVQ X0, AX          // lo
	PSRLDQ $8, X0
	MOVQ X0, BX          // hi
	// t = hi>>63 ^ hi>>61 ^ hi>>60
	MOVQ BX, CX
	SHRQ $63, CX
	MOVQ BX, DX
	SHRQ $61, DX
	XORQ DX, CX
	MOVQ BX, DX
	SHRQ $60, DX
	XORQ DX, CX
	// lo ^= hi ^ hi<<1 ^ hi<<3 ^ hi<<4
	XORQ BX, AX
	MOVQ BX, DX
	SHLQ $1, DX
	XORQ DX, AX
	MOVQ BX, DX
	SHLQ $3, DX
	XORQ DX, AX
	SHLQ $4, BX
	XORQ BX, AX
	// lo ^= t ^ t<<1 ^ t<<3 ^ t<<4
	XORQ CX, AX
	MOVQ CX, DX
	SHLQ $1, DX
	XORQ DX, AX
	MOVQ CX, DX
	SHLQ $3, DX
	XORQ DX, AX
	SHLQ $4, CX
	XORQ CX, AX
	MOVQ AX, ret+16(FP)
	RET
