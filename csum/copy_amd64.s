#include "textflag.h"

// func copyNT(dst, src *byte, n uintptr)
//
// Copies n bytes, a multiple of 64, from src to dst (16-byte aligned) with
// non-temporal stores: the written lines go to memory without being read
// into the cache first (no read-for-ownership) and without evicting what
// the caller is about to use. It prefetches the source 2 KiB ahead, so
// that the next piece, which CopySum checksums before copying, is on its
// way into the cache while this one is written. The caller issues sfence
// after its last
// copyNT, so that the stores are visible before any later store, as the
// ordinary stores they replace would be.
TEXT ·copyNT(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $6, CX
	JZ   done

loop:
	PREFETCHT0 2048(SI)
	MOVOU  0(SI), X0
	MOVOU  16(SI), X1
	MOVOU  32(SI), X2
	MOVOU  48(SI), X3
	MOVNTO X0, 0(DI)
	MOVNTO X1, 16(DI)
	MOVNTO X2, 32(DI)
	MOVNTO X3, 48(DI)
	ADDQ   $64, SI
	ADDQ   $64, DI
	DECQ   CX
	JNZ    loop

done:
	RET

// func sfence()
TEXT ·sfence(SB), NOSPLIT, $0-0
	SFENCE
	RET
