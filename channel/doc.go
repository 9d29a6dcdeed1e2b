// Package channel moves byte messages between ranks — goroutines of one
// process (NewLocal) or processes over TCP (channel/tcp) or Open MPI
// (channel/mpi) — with MPI's point-to-point semantics and collectives,
// and protects them: checksums, Merkle trees
// and datatype signatures that catch corrupted or mistyped transfers, and
// retransmission of only what was corrupted.
//
// A Comm is the small interface everything builds on: Rank, Size, Send,
// Recv. Transports implement it (Endpoint); protection layers take a Comm
// and return one; collectives (Barrier, Bcast, Gather, Allgather) work on
// any Comm.
//
// Messages are cut into frames of at most MaxFrame bytes (the frame's
// header and the other byte formats are internal/wire's). A receive posted before its message gets the bytes
// written straight into its buffer; a message that comes first waits in a
// buffer of its own, grown as its bytes arrive. Sends are eager: they
// return once the message is handed to the transport, so two ranks that
// send to each other before receiving do not deadlock.
//
// Protection layers (WithChecksum, WithMerkle; Typed for datatype
// signatures) check each message on arrival and repair what was
// corrupted before any receive sees it: a receive returns exactly the
// bytes sent, or an error. A protected Send of more than EagerLimit
// bytes returns once the receiver has verified the message; a smaller
// one returns at once, as MPI's eager sends do, and Flush waits for
// those (and reports any that could not be repaired, which their
// receivers report too). The frames of a layer that reach a rank before
// it has created that layer wait for it.
//
// Every function that takes a Comm works on any Comm, or says in its type
// what it needs. Over a Comm of another package (a replicate.Comm, a
// user's wrapper), whose frames this package never sees, WithChecksum,
// WithMerkle and WithTypes work on whole messages: a check or a stamp
// rides in each one, and damage is detected but not repaired. Dup takes a
// Duplicator; Flush and LookupStats say when a Comm cannot answer them
// (Flusher, StatsReporter).
//
// Tags from ReservedTag up belong to the package's own protocols, and
// AnyTag never matches them: control traffic is never taken for a user's
// message.
//
// # Files
//
// The user's surface:
//   - comm.go: Comm, Status, the errors, Isend, Irecv, WaitAll;
//   - view.go: Endpoint and the one view of an engine's context that
//     every Comm of the engine is (an Endpoint's, a duplicate's, a
//     layer's); dup.go: Dup and Duplicator;
//   - coll.go, coll_merkle.go, native.go: the collectives, a Merkle
//     layer's end-to-end ones, a transport's own; validate.go:
//     ValidateSender and ValidateReceiver;
//   - protect.go: the protection options and layers, Flush, Stats;
//     msglayer.go: protection and Typed over a Comm of another package;
//     typed.go: Typed.
//
// The engine, one per rank (engine.go, its state and lifecycle), moves
// messages: match.go matches them to receives, arrive.go takes the
// frames a transport delivers, send.go hands frames to the transport;
// sendorder.go and order.go keep their order, ids.go drops duplicates,
// recycle.go reuses what a message costs, ctl.go sends a receiver's
// control frames.
//
// The protection protocol: sender.go, transmit.go and pending.go are a
// protected send's side, guard.go a protected message's; protocol.go is
// the payload grammar they speak (verdicts, asks, flags, the tripled
// verdict, resend lists, and the message-level formats of msglayer.go),
// with FuzzPayload beside it in protocol_test.go and its seeds in
// testdata/fuzz/FuzzPayload.
//
// The transports stand on the boundary of package channel/transport
// (aliased in transport.go): local.go here (in process), channel/tcp
// (TCP, with its launch, environment and job file) and channel/mpi (Open
// MPI); inject.go damages frames on their way out.
package channel
