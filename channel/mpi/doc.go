// Package mpi is a channel transport over Open MPI: the ranks of an
// mpirun job become channel Endpoints, and everything in package channel
// — WithChecksum, WithMerkle, Typed, Validate*, the Injector, the
// collectives — runs over them unchanged.
//
// It needs cgo, Open MPI's headers and library (Debian: openmpi-bin,
// libopenmpi-dev; pkg-config ompi-c) and the build tag mpi:
//
//	go build -tags mpi ./cmd/sigcheck
//	mpirun -np 4 ./sigcheck run -transport mpi -protect none,checksum,merkle bw
//
// Without the tag this package is this comment alone, and the module
// builds with CGO_ENABLED=0.
//
// # Use
//
// Every rank calls Connect (in the same order, as MPI's collectives
// want), closes the Endpoint when done, and calls Finalize once at the
// end. Node says which ranks share a node's memory.
//
// # Frames as MPI messages
//
// Each Endpoint has a communicator of its own (MPI_Comm_idup of
// MPI_COMM_WORLD). A frame of at most 16 KiB of payload is one message,
// its 64-byte header in front, copied into a send slot in C memory on
// its way out and read from the receive ring's C memory on its way in;
// its Send returns at once. A larger frame is its header's message
// followed by one for the payload, sent from the caller's memory, pinned
// (runtime.Pinner), and received straight into the receive buffer when
// the engine has one posted; its Send waits for MPI to have read the
// payload (a copy into C memory, after which it could return at once,
// costs more than the wait). The engine frames protected messages in
// pieces of 256 KiB (transport.Piecer), so that the sender hashes one
// while the receiver checks the one before, and hands a message's frames
// over together (transport.BatchSender), whose payloads are then all
// under way at once. Every header goes through
// channel.ParseHeader and Frames.Deliver, the checks every transport's
// frames get; a message whose length disagrees with its header, an MPI
// error on a receive, or a frame the engine refuses drops the link: that
// rank's frames are no longer read (their payloads are still taken, so
// that it never waits on them), it is told (an empty message, the same
// that Close sends), and both ends see the other lost
// (*channel.PeerError).
//
// # Threads, and who drives MPI
//
// MPI is initialized with MPI_THREAD_SERIALIZED, and every MPI call of
// the process is made under one Go mutex, from whichever goroutine needs
// it: a sender's goroutine posts its own sends, and a receive that waits
// for a frame polls MPI itself (transport.Progresser), delivering every
// frame that comes until its own is in, as MPI_Recv's progress loop
// does. The alternatives cost more. One goroutine locked to its thread
// making every call (MPI_THREAD_FUNNELED) turns each hand-off into a
// thread switch: a locked goroutine that blocks gives its P to another
// thread, and getting it back is a futex wake, which costs as much as a
// small message's whole trip is meant to. MPI_THREAD_MULTIPLE makes Open
// MPI lock inside every call. Only MPI_Init_thread and MPI_Finalize are
// tied to one thread (the standard asks for both on the same one): a
// goroutine locked to its thread makes both and waits between them. A
// sync.Mutex lets the goroutine that just unlocked it take it again
// before a parked waiter wakes, so a goroutine that polls first lets any
// goroutine that is waiting for the lock have it.
//
// MPI cannot wake a thread when a message comes, so a waiting rank
// polls. Whoever polls holds the delivery token: a receive that waits
// (it returns the token once its frame is in), or the transport's own
// goroutine, which takes what no receive reads: frames for goroutines
// that wait without polling (a receive from any source, or behind one
// that polls), and, once no receive has polled for a millisecond,
// whatever comes. A goroutine that waits spins as MPI_Recv does, looking
// again and again, for 200 µs after the last frame; then, up to 10 ms,
// every look also gives the core to any other process that wants it
// (sched_yield, which returns at once when none does: a peer busy with
// a window of messages before it answers is still heard within a
// microsecond); then it naps, 10 µs at first and doubling to 1 ms. A
// receive's nap ends when its message is in, the transport goroutine's
// when someone starts waiting; that goroutine never spins while a
// receive polls. Every few looks yield to the other goroutines
// (runtime.Gosched: with one processor, the goroutine a frame woke runs
// only then), and every look yields the core when mpirun put more ranks
// on the node than it has cores. A rank idle for long answers a message
// nobody waits for up to a millisecond late.
//
// No Go pointer is held by C after a call returns unless it is pinned:
// send slots, the receive ring and the native
// collectives' buffers are C memory; a large payload is pinned for
// exactly as long as its MPI request runs. Go memory is handed to C as
// an integer, not a pointer: cgo's check refuses a pointer into an
// object that holds other pointers, and a payload may be a field of one.
// Go's preemption signal (SIGURG) interrupts system calls in C code; Go
// installs its handlers with SA_RESTART, Open MPI's shared-memory path
// makes no system call in the calls used here and its TCP path retries
// on EINTR, and the two calls that block on Open MPI's daemon
// (MPI_Init_thread, MPI_Finalize) run with SIGURG and SIGPROF blocked, a
// mask the threads Open MPI starts then inherit.
//
// # Collectives
//
// An unprotected Endpoint without an Injector runs Barrier, Bcast and
// Allgather as MPI's own (MPI_Ibarrier, MPI_Ibcast, MPI_Iallgather,
// through C memory, tested like the receives so that frames keep flowing
// meanwhile); Gather, and every collective of a protection layer, run
// over messages, checked end to end.
//
// # When a rank dies
//
// Open MPI 4.1 has no way to tell the survivors of a job that a rank
// died and let them go on (ULFM came with 5.0): by default mpirun kills
// the whole job as soon as one rank exits with a non-zero status or on a
// signal, and says which ("mpirun noticed that process rank 1 ... exited
// on signal 9"). That is what happens; nothing hangs. With
// --mca orte_abort_on_non_zero_status 0 the others are left running and
// a receive from the dead rank waits for its context. A rank that closes
// its Endpoint (or drops a link) tells its peers, who then see it lost:
// *channel.PeerError with ErrPeerClosed. Finalize waits for every peer's
// last word on every endpoint (MPI_Finalize is collective anyway), but
// not more than 10 s after Close: a peer still silent then is named on
// stderr and left.
package mpi
