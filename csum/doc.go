// Package csum is message checksums that cost almost nothing: a registry
// of the checksums of end-to-end MPI integrity work (Denis et al.,
// "end-to-end checksums in NewMadeleine": sum, xor, Adler-32, Fletcher-64,
// one-at-a-time, FNV-1a, Knuth, MurmurHash, SuperFastHash, CRC-32C) plus
// CRC-64 and XXH3, the ways to make them cheap — combination of the
// checksums of pieces, a parallel one-shot, a copy fused with the
// checksum — and auto-tuning, which picks the fastest adequate one on the
// machine at hand.
//
// Every algorithm is an *Algorithm with a one-shot Sum, a streaming New
// (a hash.Hash64 that also returns 128-bit values), Format for its hex
// form, and Detects: what it is sure, likely or unable to catch among one,
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
// What it is not: cryptographic. None of these resists a chosen
// corruption; use crypto/sha256 or an AEAD where an adversary writes the
// data.
package csum
