// Package csum is message checksums that cost almost nothing: a registry
// of the checksums of end-to-end MPI integrity work (Denis et al.,
// "end-to-end checksums in NewMadeleine": sum, xor, Adler-32, Fletcher-64,
// one-at-a-time, FNV-1a, Knuth, MurmurHash, SuperFastHash, CRC-32C) plus
// CRC-64/XZ and XXH3, the sums files are exchanged with (CRC-32,
// CRC-64/ECMA-182, XXH32, XXH64, SHA-256, BLAKE3: what zlib, xxhsum,
// sha256sum and b3sum print), the ways to make them cheap — combination of
// the checksums of pieces, a parallel one-shot, a copy fused with the
// checksum — and auto-tuning, which picks the fastest adequate one on the
// machine at hand.
//
// Every algorithm is an *Algorithm with a one-shot Sum (a Value of up to
// 128 bits; AppendSum gives the bytes, the whole 256-bit digest for sha256
// and blake3), a streaming New (a hash.Hash64 that also returns 128-bit
// values), Format for its hex form, and Detects: what it is sure, likely or unable to catch among one,
// two or three flipped bits and two swapped 64-bit words. `sigcheck csum
// -detect` measures those classes and TestDetection holds each algorithm
// to its claim: sum and xor never see a swap; Adler-32 misses swapped words
// whose bytes add up alike; the CRCs catch every 1-, 2- and 3-bit error.
//
// Where the arithmetic allows it (the CRCs, Adler-32, Fletcher-64, sum,
// xor), Combine gives the checksum of A‖B from those of A and B in
// O(log |B|), so that large messages are checksummed in parallel pieces
// (SumParallel) or piece by piece as they travel. CopySum copies and
// checksums in one pass over memory. Default is the checksum to use with
// no preference: SIGCHECK_CSUM, else what `sigcheck tune` measured here,
// else XXH3.
//
// What it is not: cryptographic, except sha256 and blake3. None of the
// others resists a chosen corruption; where an adversary writes the data,
// use those two (or an AEAD, which also says who wrote it).
package csum
