// Package encrypt is the all-gather for data that crosses between
// machines where it may be read or altered on the way: every block that
// leaves a node is sealed with AES-GCM, blocks inside a node go in the
// clear. It implements the eight algorithms of Sadeghi Lahijani et al.,
// "Efficient Algorithms for Encrypted All-gather Operation" (the copy we
// have bears no year) — Naive, O-Ring, O-RD, O-RD2,
// C-Ring, C-RD, HS1 and HS2 — for any number of ranks p on any number of
// nodes N (block or cyclic order, nodes of unequal size), and an Auto
// that picks one by message size and ℓ, from measurements (Gatherer.Choose).
//
// Nodes. A node is one process holding ℓ ranks: each rank has its own
// Comm (over TCP, tcp.Connect once per rank), and the process makes one
// Node for them, through which they exchange plaintext by copies and in
// which HS1 and HS2 keep their shared plaintext and ciphertext buffers.
// A process may also hold every node (NewNodes), for tests and studies
// over NewLocal. A transport that knows where its ranks run (MPI's
// MPI_Comm_split_type(SHARED)) says so with NodeLocator.
//
// Security. The paper picks GCM nonces at random and leaves replays out;
// CryptMPI authenticates no envelope. Here:
//   - a job key (AES-128, as the paper's BoringSSL runs) is drawn by rank 0
//     for each Gatherer and sent to every rank sealed under the key of
//     their link, which channel derives from the job's secret and the
//     nonces of the link's authenticated handshake (KeySource) — never a
//     key in code; a rank whose link key differs fails with ErrAuth;
//   - data are sealed under the job key with nonces from a counter of the
//     sealing rank (rank ‖ counter: never reused, never random), and
//     associated data that bind the all-gather's sequence number, the
//     algorithm and the ranks whose blocks the ciphertext holds, so a
//     ciphertext can be forwarded as it is (O-RD, C-*, HS*) but not
//     passed off as another;
//   - every frame between nodes carries an envelope: a GCM tag under
//     that link's key over its header (source, destination, step tag,
//     sequence, the link's frame counter) and its ciphertexts' tags, so a
//     frame moved to another link, replayed, reordered or altered is
//     rejected (ErrAuth, ErrReplay), and nothing of it is delivered.
//
// Counts. Each all-gather returns the paper's six metrics on its critical
// path (Counts), counted as it runs; TableII and LowerBound give the
// paper's formulas, and the tests hold the counts to them. A Model
// (Hockney α, β per link class and per byte sealed or opened) turns the
// same critical path into a predicted time, so the paper's regime, where
// encryption is slower than the network, can be studied in one process.
//
// What it is not: a general encrypted channel (point-to-point traffic is
// channel's business), or protection against a rank of the job itself.
package encrypt
