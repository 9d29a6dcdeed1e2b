// Package replicate runs an application as r replicas of each of its n
// ranks over any channel.Comm of r·n native ranks, and compares what the
// replicas send, so that silent data corruption — a bit flipped in memory
// or in the ALU, sent on with a correct checksum — is detected (r = 2) or
// corrected by vote (r ≥ 3) before any receive returns it. It is the
// RedMPI design of Fiala, Mueller, Engelmann, Ferreira, Brightwell and
// Riesen, "Detection and correction of silent data corruption for
// large-scale high-performance computing" (SC 2012).
//
// What it is for: catching what checksums and Merkle trees cannot, a
// process that computes a wrong value. What it is not for: the wire
// (channel's protection layers catch that, and can sit underneath), or a
// crashed process (a lost replica makes its peers' receives fail).
//
// New(c, r) gives the application a Comm of n virtual ranks; the native
// ranks are placed by Formula (the paper's), by a user's Map, or, when c
// is a Noder, by Spread, which never puts two replicas of a rank on one
// node. Two protocols (§III-B):
//
//   - MsgPlusHash (default): r copies and r hashes per message; a
//     mismatch starts the adjacent-replica discovery, then the correction
//     transfer.
//   - AllToAll: r² copies per message, a plurality vote on their hashes.
//
// Hashes are XXH3-128 from package csum by default. With r ≥ 3 a copy is
// accepted only when at least two sender replicas vouch for it and more
// vouch for it than for any other; otherwise the receive fails with
// ErrNoMajority (the job should abort, as RedMPI does). With r = 2 a
// mismatch fails with ErrMismatch. WithDetectOnly turns correction off to
// watch corruption spread (the paper's §VII-A).
//
// Determinism (§III-C): a wildcard receive is resolved by replica 0,
// which forwards the envelope; Wtime and Seed give every replica replica
// 0's clock reading and seed; Test and Testany give replica 0's answer.
// The collectives of package channel run over the Comm's Send and Recv,
// so every block they move is voted on too.
//
// The Injector is the paper's fault injector (§IV): a bit flip in the
// application's send buffer with probability 1/x per message, aimed at a
// replica set, a rank or a step. Stats count what was compared, found,
// corrected or not, per application step (Comm.Step), from which
// sigcheck redundancy draws the paper's taint figures (Figures 10–16).
//
// All the replication traffic runs on duplicates of c (channel.Dup), so
// the application's tags are its own; collectives' reserved tags are
// carried on duplicates of their own. wire.go gives the record formats.
package replicate
