// Macros of the package's AVX-512 kernels (kernel_amd64.s,
// copy_amd64.s, leaves_amd64.s). The eight 64-bit accumulators live in
// one ZMM register.

// ACCUM adds the stripe in D, keyed by KEY, into ACC: to lane i,
// D[i^1] (VPSHUFD $0x4e swaps the 64-bit halves of each 128-bit lane)
// and lo32·hi32 of D[i]^KEY[i]. D is clobbered; P and H are scratch.
#define ACCUM(D, KEY, ACC, P, H) \
	VPXORQ   KEY, D, P; \
	VPSRLQ   $32, P, H; \
	VPMULUDQ H, P, P; \
	VPSHUFD  $0x4e, D, D; \
	VPADDQ   D, ACC, ACC; \
	VPADDQ   P, ACC, ACC

// SCRAMBLE ends a block: ACC ^= ACC>>47 ^ KEY; ACC *= PRIME32_1 (PRIME
// holds it in every lane), as lo·p + (hi·p)<<32. T and U are scratch.
#define SCRAMBLE(ACC, KEY, PRIME, T, U) \
	VPSRLQ     $47, ACC, T; \
	VPTERNLOGQ $0x96, KEY, T, ACC; \
	VPSRLQ     $32, ACC, U; \
	VPMULUDQ   PRIME, ACC, ACC; \
	VPMULUDQ   PRIME, U, U; \
	VPSLLQ     $32, U, U; \
	VPADDQ     U, ACC, ACC

// BLOCK16 is a block's 16 stripes, stripe s keyed by Z(2+s), the even
// ones into Z0 and the odd into Z1 (so that the additions do not wait on
// one another), joined into Z0 and scrambled with Z18 and the prime in
// Z31. STRIPE(OFF, KEY, ACC, D, P, H) is the including file's: it loads
// (and stores, or prefetches) the stripe at byte OFF of the block.
#define BLOCK16 \
	STRIPE(0, Z2, Z0, Z20, Z21, Z24); \
	STRIPE(64, Z3, Z1, Z22, Z23, Z25); \
	STRIPE(128, Z4, Z0, Z20, Z21, Z24); \
	STRIPE(192, Z5, Z1, Z22, Z23, Z25); \
	STRIPE(256, Z6, Z0, Z20, Z21, Z24); \
	STRIPE(320, Z7, Z1, Z22, Z23, Z25); \
	STRIPE(384, Z8, Z0, Z20, Z21, Z24); \
	STRIPE(448, Z9, Z1, Z22, Z23, Z25); \
	STRIPE(512, Z10, Z0, Z20, Z21, Z24); \
	STRIPE(576, Z11, Z1, Z22, Z23, Z25); \
	STRIPE(640, Z12, Z0, Z20, Z21, Z24); \
	STRIPE(704, Z13, Z1, Z22, Z23, Z25); \
	STRIPE(768, Z14, Z0, Z20, Z21, Z24); \
	STRIPE(832, Z15, Z1, Z22, Z23, Z25); \
	STRIPE(896, Z16, Z0, Z20, Z21, Z24); \
	STRIPE(960, Z17, Z1, Z22, Z23, Z25); \
	VPADDQ Z1, Z0, Z0; \
	VPXORQ Z1, Z1, Z1; \
	SCRAMBLE(Z0, Z18, Z31, Z20, Z21)
