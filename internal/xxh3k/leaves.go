package xxh3k

import "encoding/binary"

// Leaves sets out[j] to the XXH3-64, seeded with seed+j, of the seg bytes
// at data[j·seg:], for every j < len(out): the leaves of a Merkle tree
// whose leaf j is seeded with its node index (tree's layout), in one call.
// seg must exceed 240 (LongMin; shorter inputs take XXH3's other paths)
// and data must hold len(out)·seg bytes.
//
// With AVX-512 a 2 KiB leaf costs about two thirds of what
// xxh3.HashSeed does (BenchmarkLeaves); without it Leaves runs the
// scalar reference, and callers are better served by zeebo/xxh3.
func Leaves(out []uint64, data []byte, seg int, seed uint64) {
	if seg < LongMin {
		panic("xxh3k: Leaves: a segment must be longer than 240 bytes")
	}
	if len(data)/seg < len(out) {
		panic("xxh3k: Leaves: data shorter than its leaves")
	}
	leaves(out, data, seg, seed)
}

// leavesGeneric is the scalar reference of the leaves kernel.
func leavesGeneric(out []uint64, data []byte, seg int, seed uint64) {
	for j := range out {
		out[j] = hashSeed(data[j*seg:(j+1)*seg], seed+uint64(j))
	}
}

// hashSeed is XXH3-64 with a seed of a long input (over 240 bytes), from
// the specification: the default secret derived from the seed, then the
// long-input hash with it (Blocks, Tail and Sum64 with that secret; the
// scalar loops, as leavesGeneric runs only where the kernels do not).
func hashSeed(p []byte, seed uint64) uint64 {
	s := seedSecret(seed)
	acc := Init
	blocks(&acc, p, WholeBlocks(len(p)), s)
	tail(&acc, p, s)
	return merge(&acc, s[11:], uint64(len(p))*prime64_1)
}

// seedSecret is the default secret as XXH3 seeds it: each 16-byte pair
// (lo, hi) becomes (lo+seed, hi−seed).
func seedSecret(seed uint64) *secret {
	var s secret
	for i := 0; i < secretSize; i += 16 {
		binary.LittleEndian.PutUint64(s[i:], binary.LittleEndian.Uint64(defaultSecret[i:])+seed)
		binary.LittleEndian.PutUint64(s[i+8:], binary.LittleEndian.Uint64(defaultSecret[i+8:])-seed)
	}
	return &s
}
