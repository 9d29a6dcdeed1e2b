// Package tcp is channel's transport between processes over TCP: a job
// of ranks, each a process (or a goroutine, for tests: Loopback), whose
// every two ranks share one connection.
//
// A rank joins with Connect (or ConfigFromEnv under a launcher: sigcheck
// run, mpirun, any that sets SIGCHECK_RANK and SIGCHECK_SIZE). Rank 0
// listens at a root address and tells the others where each listens;
// every connection opens with a handshake in which both ends prove that
// they know the job's secret (internal/wire), which leaves them a link
// secret no one else can compute (Endpoint.LinkKey derives keys from it).
// A link between two hosts then carries every frame under tags of keys
// derived from that secret, so that a relay on the path can neither
// rewrite, replay, drop nor reorder frames unseen (Config.Auth; auth.go).
// Under Open MPI's mpirun on one node no address or secret need be set:
// rank 0 writes its address to a job file in the job's session
// directory (ParseJobFile reads it) and the secret is mpirun's key for
// the job.
//
// The transport stands on channel/transport alone: it implements
// Transport, hands the frames it reads to the engine's Frames, and offers
// the engine the fast paths TCP has — a waiting receive that reads its
// link itself (Progresser; read.go and the polling reader of
// poll_unix.go), several frames in one writev (BatchSender), control
// frames written without waiting (TrySender), the piece size of its
// writes (Piecer; write.go) — and the link secrets of its handshakes
// (LinkSecreter).
//
// Files: tcp.go (Config, Connect, the transport and its links), boot.go
// (forming the job: accepting, dialing, the handshakes), write.go and
// read.go (a link's two sides), auth.go (authenticated links: the frame
// format, the keys, what is checked when), env.go (the environment and
// the job file), loopback.go (a job in one process), congestion*.go (the
// links' congestion control), poll_*.go (reading by polling, writing
// without waiting).
//
// It is not a general-purpose RPC or stream layer: frames are channel's,
// and a link that breaks is not reopened — the engine reports the peer
// lost.
package tcp
