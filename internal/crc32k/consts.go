package crc32k

// kernelConstWords is the length of kernelConsts.
const kernelConstWords = 16

// kernelConsts are the folding constants of the kernel, as 64-bit words in
// the order it loads them: pairs (x^(F+31) mod P, x^(F−33) mod P), each a
// 32-bit polynomial with the coefficient of x^(31−j) in bit j (see the
// package doc), for F = 2048 (four registers, 256 bytes a step), 1536,
// 1024 and 512 (the four registers folded into the last, and one register
// 64 bytes a step), then one pair for each 128-bit lane of the last
// register, folding it onto the last lane: F = 384, 256, 128, and zeros
// for the last lane itself, which is xored in as it is. TestConsts
// recomputes them.
var kernelConsts = [kernelConstWords]uint64{
	0xdcb17aa4, 0xb9e02b86, // F = 2048
	0xa87ab8a8, 0xab7aff2a, // F = 1536
	0x6992cea2, 0x0d3b6092, // F = 1024
	0x740eef02, 0x9e4addf8, // F = 512
	0x1c291d04, 0xddc0152b, // lane 0, F = 384
	0x3da6d0cb, 0xba4fc28e, // lane 1, F = 256
	0xf20c0dfe, 0x493c7d27, // lane 2, F = 128
	0, 0, // lane 3
}
