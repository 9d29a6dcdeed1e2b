// Libsigcheck is a library that checks the messages of an unmodified MPI
// program: loaded with LD_PRELOAD, it defines MPI's functions, checks, and
// calls the MPI library's own through the profiling interface (PMPI_), as
// merkle-mpi and RedMPI did. Build it with
//
//	go build -buildmode=c-shared -tags mpi -o libsigcheck.so ./cmd/libsigcheck
//
// and run a program under it with
//
//	mpirun -x LD_PRELOAD=$PWD/libsigcheck.so ./app
//
// or let sigcheck mpirun build it, set its environment and summarise
// what every rank checked.
//
// # What it checks
//
// SIGCHECK_CHECK chooses:
//
//   - types (the default): every message carries the sender's type
//     signature (package sig's default algebra) and element count, and the
//     receiver applies MPI's rule: the sent signature must be a prefix of
//     the receive's; MPI_BYTE and MPI_PACKED are matched by size. A
//     mismatch names the ranks, the call, the communicator, the tag and the
//     first differing element with both type-map paths, as sigcheck match
//     prints it. Collectives are checked pair by pair: every transfer a
//     collective makes, rank i to rank j, must have equal signatures on
//     both sides (coll.c).
//   - checksum: the types check, and a checksum (XXH3-64) of the data bytes
//     of every message, the bytes the datatype covers and not its gaps.
//   - repair: the checksum check, and a corrupt message is repaired before
//     its receive returns: the sender keeps a copy of what it sent, taken
//     in the checksum's own pass, and answers the receiver's ask for it
//     from a thread of the library's (keep.c says why a copy rather than
//     a verdict the sender waits for).
//
// SIGCHECK_INJECT=RATE flips one bit of a received message's data with
// that probability, seeded by SIGCHECK_SEED, so that detection can be
// shown on real programs: in checksum mode every flipped message is
// reported, and in repair mode repaired. SIGCHECK_ON_ERROR=abort (the default, as MPI_ERRORS_ARE_FATAL)
// ends the job with MPI_Abort and exit status 86 after the report; report
// lets it run on and counts. SIGCHECK_SUMMARY=DIR makes each rank write
// rank-N.json there at MPI_Finalize. Without a finding the library writes
// nothing, so a correct program's output and exit status are its own.
//
// # How the check travels beside the message
//
// PnMPI's piggyback module shows three ways: a struct datatype over
// MPI_BOTTOM that joins the data and the check into one message, packing
// both into one buffer, or a second message. The first two make the
// message the application sent into another one: a probe sees its size
// grown, MPI_Get_count on a probed status is wrong (mpi4py's
// pickled-object receive is built on exactly that), a receive posted too
// short no longer fails with MPI_ERR_TRUNCATE where it should, and the
// library would have to rewrite statuses and emulate all of that for
// every call. The struct also costs a datatype made and freed per message,
// microseconds at any size; packing costs a copy, which at large sizes is
// the transfer's own cost again. A second message costs one small eager
// send and receive per message, whatever the size: about as much as the
// data message at one byte, and nothing next to a large one. So the
// library sends a header (sc.h's sc_hdr, 64 bytes) as a second message at
// every size, on a shadow of the message's communicator — our own
// duplicate, made in the same collective call as the application's
// communicator — with the same destination and tag, as ITAC's message
// checking does, and the data message is the application's own, untouched.
//
// The receiver reads the header when the receive completes, from the
// source and tag in the status: headers from one source with one tag come
// in the order their messages were sent, and messages are matched in that
// order. They can complete out of it (a long message, then a short one, on
// one tag): a receive is checked only when no receive posted before it
// that could have matched the same stream is still pending (complete.c).
// A blocking send's header goes first, so that it is there when the
// message completes; a long message in checksum or repair mode is started
// first and its header sent after, so that the sender hashes it while the
// receiver copies it.
//
// # Datatypes
//
// A datatype is decoded on first use with MPI_Type_get_envelope and
// MPI_Type_get_contents into package sig's model (decode.go): every
// constructor, with subarray built from sig's own; darray and Fortran 90
// parameterised types are not, and their messages pass through unchecked
// and counted. Each handle's entry lives in a C table with its signature
// memoised per count, so a message of a datatype and count seen before
// costs no call into Go; MPI_Type_free drops it. A receiver that has to
// report where two datatypes differ needs the sender's: each derived
// datatype's description goes once to each rank it is sent to, before the
// first header that names it, and is read when that header comes, into a
// bounded cache (desc.c). Predefined datatypes have the same id everywhere.
//
// # Go inside a C process
//
//   - Exported Go functions wait until the Go runtime has started, which
//     it does in the background when the library is loaded. The MPI_*
//     symbols are C, and call Go only after MPI_Init has returned.
//   - Two Go runtimes in one process are not supported: loaded into a Go
//     program, the library prints one line and exits with status 2 before
//     main runs (init.c).
//   - A preloaded library is loaded into every process of the job, and into
//     whatever they start (system(), fork and exec). Until MPI_Init is
//     called every wrapper passes straight to PMPI_, and a process that
//     never calls it gets nothing from the library but an idle Go runtime.
//   - Go preempts long-running goroutines with SIGURG, which could
//     interrupt a system call of the C program (EINTR). The library's Go
//     code runs briefly on the application's threads, and sigcheck mpirun
//     sets GODEBUG=asyncpreemptoff=1 as well, so the signal is never sent.
//
// # Encrypting MPI_Allgather between nodes
//
// SIGCHECK_ENCRYPT=1 runs every MPI_Allgather whose communicator spans
// nodes (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), split further by
// SIGCHECK_NODES) as one of the eight encrypted all-gathers of Sadeghi
// Lahijani et al., which channel/encrypt runs for Go programs. Its
// Gatherer cannot be used as it is: it keeps a node's ranks in one
// process, exchanging plaintext through Go memory, where here each rank
// is a process. So the schedules are written again (encgather.go,
// encalgs.go) over two small interfaces, a wire (MPI messages on the
// library's duplicate of the communicator) and a node's memory (an MPI
// shared-memory window), and channel/encrypt's parts that decide what
// crosses the wire are reused: AES-GCM, the key derivation, the nonce,
// the associated data, the frame format and its decoder, Auto's choice.
// The same schedules run in the package's tests over channels and Go
// slices, for every algorithm on many layouts, without MPI.
//
//   - Frames carry no envelope, unlike channel/encrypt's: that one binds
//     a frame to its link and turn with a second tag. Here each step
//     expects one frame from one rank with given blocks, and checks its
//     header against that; the ciphertexts carry their own tags, whose
//     associated data bind the all-gather's number, the algorithm and the
//     blocks. Replaying, moving or altering one fails where it is opened.
//   - Nonces never repeat because each process seals under its own world
//     rank and its own counter, whatever the key.
//   - HS1 and HS2 wait on counters in the node's shared memory, not on
//     MPI barriers: a rank other than the node's leader puts its block
//     in and waits once, for the leader's list of the other nodes'
//     ciphertexts. Their opening is shared out among the node's ranks, as
//     the paper's step 3 says, only when they are large enough to be
//     worth the second wait; below that the leader opens them.
//   - A communicator's state is an attribute of it (crypt.c), so that MPI
//     frees it with the communicator whichever call made it; its
//     duplicate, node communicator and key are made at its first
//     all-gather between nodes, which every member calls.
//   - Datatypes whose bytes are not one run are packed and unpacked; the
//     decision to encrypt uses only what every rank of a correct program
//     agrees on (the communicator, the size), so the ranks never split
//     between encrypting and not.
//
// Everything else between nodes, other collectives and point-to-point
// messages, goes in the clear and is counted in the summary.
//
// # Replication
//
// SIGCHECK_REPLICATE=R (2 or 3) runs a job of R·n processes as n ranks of
// R replicas each and compares every message between the replicas, as
// RedMPI (Fiala et al., SC 2012) did from the same place, the profiling
// interface; channel/replicate is the same design for Go programs. The
// files are rep*.c and rep.go; docs/replication.md says what is compared
// and what is not.
//
//   - MPI_Init splits the world into R replica worlds (color replica, key
//     application rank), one of which each process's application sees as
//     MPI_COMM_WORLD, and n replica sets. Which world rank runs which
//     replica of which rank is channel/replicate's Spread (replicas of a
//     rank on distinct nodes) where there are several nodes.
//   - The replication layer sits above the checking layer: each of the
//     checking layer's wrappers begins with SC_REP, which hands the call
//     to rep_X; rep_X translates MPI_COMM_WORLD, does its part, and calls
//     the checking wrapper again for the message itself with sc_rep_in set
//     (wrap.py's re-entry guard), so the message is checked as without
//     replication. The other functions that take a communicator are
//     generated (virt.c from virt.list by repgen, whose test holds the
//     list to mpi.h), with Fortran entry points for each that Open MPI's
//     libmpi_mpifh binds, save a few (attributes, CHARACTER arguments)
//     passed on and counted as not compared.
//   - Each communicator has a twin over all its replicas, made in the same
//     collective call (the split of its parent's twin); hashes or copies
//     go there with the message's own tag. A receiver takes its claim when
//     its receive completes, from the source and tag in the status, in
//     MPI's order for that stream: earlier receives that could have
//     matched the stream take theirs first (repvote.c says why that is
//     enough, and never waits on a receive that has not matched).
//   - What timing decides is replica 0's: it calls MPI_Test, MPI_Iprobe,
//     MPI_Wtime and the rest, and sends the answer down a stream to each
//     other replica, which follows it; a receive from MPI_ANY_SOURCE is
//     posted elsewhere only with the envelope replica 0's matched
//     (repreq.c), and the outcome of MPI_Cancel is the same in all
//     (repwait.c). Each answer carries its kind, so replicas that went
//     apart are told so instead of being fed a wrong answer.
//   - Collectives run as MPI runs them in each replica's world; the
//     replicas of a rank vote on a hash of what each left there.
//
// # Threads
//
// Every thread level works. Under MPI_THREAD_MULTIPLE (mpi4py asks for
// it) the library's tables are behind one mutex, a message and its header
// leave in one critical section (the message as a non-blocking send,
// completed outside it), and a blocking receive is posted in one, so that
// the posting order the library records is the one MPI matches in. The
// lock is never held across a blocking call except for reading a header
// that was sent before the message it describes. Replication asks more:
// one thread in MPI at a time (two at once end the job), and its calls in
// the same order in every replica, which threads that take turns as the
// scheduler lets them do not keep (docs/replication.md).
//
// # What passes through unchecked
//
// Calls the library does not wrap go straight to MPI. Of those it wraps,
// it counts in the summary what it could not check, and why: a datatype
// it cannot decode, a communicator without a shadow (one made by
// MPI_Comm_idup, or by a call the library does not wrap), collectives on
// intercommunicators. A send cancelled after its header has gone leaves
// that header unread and pairs later ones wrongly: MPI 4 deprecates
// cancelling sends, and Open MPI cannot cancel one that has been matched.
package main
