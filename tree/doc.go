// Package tree builds Merkle trees over byte buffers and files, so that a
// receiver can tell which segments of a transfer were corrupted, get them
// again or rebuild them from parity, and prove any one segment against a
// root.
//
// # The tree
//
// The layout and default hash are those of the paper and its reference
// implementation (merkle-mpi; Kratochvíl, "Validation of OpenMPI
// Transferred Data Using Merkle Trees", Brno University of Technology), hash
// for hash: the data is cut into segments of 2048 bytes (Segment sets
// another size; the last may be shorter, an empty buffer is one empty
// segment); the 2n-1 nodes are in level order, the children of node i at
// 2i+1 and 2i+2 and the leaf of segment j at node j+n-1; a leaf is
// XXH3-64 of its segment seeded with its node index, an inner node XXH3-64,
// seeded with its index, of its children's hashes as 16 little-endian
// bytes. testdata/golden_roots.txt holds roots computed by an independent C
// program on libxxhash (testdata/golden.c) for the tests to match.
// UseHash selects XXH3-128 or any checksum of package csum instead.
//
// A Tree keeps its node hashes (16 bytes a segment with 64-bit hashes,
// against the reference's ~90) and never the data. Build hashes large
// buffers on all cores; Update rehashes one segment's path.
//
// # Finding corrupted segments
//
// Diff compares two trees at hand. Between ranks, a Descent runs the
// comparison by messages: the sender sends its root, and while the roots
// differ the receiver asks, one level per round, for the children of every
// node that differs, checking each answer against the parent hash it
// already trusts. With 64-bit hashes, for k corrupted segments among n:
//
//   - nothing wrong: the root message only, 3+8 = 11 bytes (3+16 with
//     XXH3-128), and no request;
//   - otherwise at most ⌈log2 n⌉ rounds (the depth of the deepest
//     corrupted leaf; the tree's Depth), whatever the sender answers;
//   - each round asks for the 2 children of each node that differs, so at
//     most 2k per round and 2k⌈log2 n⌉ hashes in all (exactly 2 per level
//     for k = 1: 30 hashes for n = 32768);
//   - a request is 3 bytes, a uvarint count and a uvarint per node (at
//     most 5 bytes each below 2^35 nodes); an answer is 3 bytes, a uvarint
//     count and 8 (or 16) bytes per hash.
//
// One fault among 32768 segments costs 15 rounds and 423 bytes both ways;
// sixteen cost 15 rounds and under 4 KiB. The paper's protocol, kept for
// comparison (CriticalPath, LocateCritical), sends n hashes (256 KiB for
// 32768 segments) and finds one corrupted segment per round trip.
// A corrupted answer or root is detected (ErrCorruptAnswer) and the same
// request can be sent again; the rounds stay bounded by the depth.
//
// Prove and VerifyProof give and check the audit path of one segment.
//
// # Repair without a round trip
//
// NewParity computes Reed–Solomon parity (github.com/klauspost/reedsolomon)
// over stripes of up to 256-P segments; Repair rebuilds up to P located
// segments per stripe as erasures and accepts them only if they hash to the
// sender's leaves.
//
// # Files
//
// Package tree/manifest keeps trees on disk, with parity shared across
// files, as par2 keeps a recovery set; it hashes them with this package's
// Hash (Leaf, Inner, NewLeaf), node for node as Build does.
//
// # Wire forms
//
// Roots, critical paths, requests, answers, proofs and parity have
// versioned canonical encodings (wire.go), decoded without trusting any
// size in the input.
package tree
