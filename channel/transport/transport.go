// Package transport is the boundary between channel's engine and the
// transports that move its frames: TCP (channel/tcp), the in-process
// transport (channel.NewLocal), Open MPI (channel/mpi) and the fault
// campaign's wrappers (channel/chaos).
//
// Its shape is database/sql/driver's. A transport implements the small
// required interface, Transport, and hands the frames it receives to the
// engine's Frames. Everything else a transport can do better than the
// least — read its links from the goroutine that waits for them, send
// several frames in one call, try a send without waiting, deliver within
// the sender's call — is an optional interface here, which the engine
// finds by type assertion and does without. The engine asserts nothing
// else about a transport: no concrete type, no unexported method. A new
// transport therefore gets every fast path that an existing one has by
// implementing the same interfaces, and a wrapper that hides them (an
// injector, a fault schedule) makes the engine fall back, never fail.
//
// The package imports nothing of the engine, so a transport that
// imports only it (and internal/wire's format through its aliases)
// cannot reach past the boundary.
package transport

import (
	"context"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// Header is a frame's header; HeaderSize bytes on the wire (Put writes
// them, ParseHeader reads and checks them). The format and its limits
// are documented in internal/wire.
type Header = wire.Header

// HeaderSize is the size of an encoded frame header.
const HeaderSize = wire.HeaderSize

// MaxRanks bounds the ranks of a job.
const MaxRanks = wire.MaxRanks

// AnySource stands for every peer in Progresser.Waiting (channel's
// wildcard of the same value).
const AnySource = -1

// Errors a transport returns or wraps (errors.Is).
var (
	// ErrProtocol: a peer sent something the protocol does not allow.
	ErrProtocol = wire.ErrProtocol
	// ErrUnauthenticated: a connection that could not prove it is of the
	// job.
	ErrUnauthenticated = wire.ErrUnauthenticated
)

// ParseHeader decodes and checks an encoded frame header: its own check
// sum, version, kind, and every length and offset against the limits.
// A transport that receives headers as bytes parses them with it, and
// drops the link on an error; Frames.Deliver checks the fields again.
func ParseHeader(b []byte) (Header, error) { return wire.ParseHeader(b) }

// Transport moves frames to the other ranks of a job. It hands the frames
// it receives to the Frames its constructor was given, from goroutines
// of its own (or from a waiting receive's, Progresser), in the order each
// peer sent them.
type Transport interface {
	// Send delivers one frame to rank dst (never this rank: the engine
	// handles those itself), in order with the frames sent to dst
	// before. payload is only read during the call. A frame that cannot
	// go is an error: the link is then broken, and the transport reports
	// dst lost (Frames.Lost) if it is. Send may be called from several
	// goroutines at once.
	Send(ctx context.Context, dst int, h Header, payload []byte) error
	// Abort breaks the link with a peer, which the transport then reports
	// lost: the engine's way to interrupt a transport stalled while it
	// writes into a receive buffer that must be given back.
	Abort(peer int, err error)
	// Close ends the transport; the other ranks then see this one lost.
	Close() error
}

// Frames is the engine's side of a transport: where the transport hands
// the frames it receives and says which peers it lost.
type Frames interface {
	// Rank is the rank of the endpoint the frames are for.
	Rank() int
	// Size is the number of ranks of the job.
	Size() int
	// Deliver hands the engine one frame from rank src. fill reads the
	// frame's payload: the engine calls it with consecutive slices whose
	// lengths add up to h.Plen, straight into a receive buffer when one
	// is posted, so a transport that reads the payload in fill moves it
	// once. It calls fill only before it returns. An error means src broke the protocol (a header out of
	// bounds, a frame for a message that does not expect it, a payload
	// shorter than its header said): the transport drops the link and
	// reports it lost.
	Deliver(src int, h Header, fill func([]byte) error) error
	// Lost says that the link with peer is gone (why: err). Receives
	// from it and sends to it then fail.
	Lost(peer int, err error)
}

// Inliner is a Transport whose Send never blocks (a copy in process):
// the engine then sends control frames from the goroutine that made them
// instead of handing them to a goroutine of their own.
type Inliner interface {
	Inline() bool
}

// LinkSecreter is a Transport whose links were authenticated by a
// handshake that left both ends a shared secret (channel's
// Endpoint.LinkKey derives keys from it).
type LinkSecreter interface {
	LinkSecret(peer int) ([]byte, error)
}

// The native collectives: a Transport with a collective of its own (such
// as MPI_Barrier, MPI_Bcast, MPI_Allgather) offers it, and an
// unprotected endpoint uses it instead of running the collective over
// messages. A protection layer never does: its collectives must be
// checked end to end.

// Barrierer is a Transport (or a Comm) with a barrier of its own.
type Barrierer interface {
	Barrier(ctx context.Context) error
}

// Bcaster is a Transport (or a Comm) with its own broadcast.
type Bcaster interface {
	Bcast(ctx context.Context, root int, buf []byte) error
}

// Allgatherer is a Transport (or a Comm) with its own all-gather.
type Allgatherer interface {
	Allgather(ctx context.Context, send, recv []byte) error
}

// BatchSender is a Transport that sends several frames to one peer in
// one call (one writev on TCP): the engine hands it a message's frames,
// and the control frames held for that peer ahead of them, together. The
// frames go in order, as by as many Sends; the payloads are only read
// during the call.
type BatchSender interface {
	SendBatch(ctx context.Context, dst int, hs []Header, ps [][]byte) error
}

// Poster is a Transport whose sends can still be under way when the
// call that starts them returns. Post returns once the frame has its
// place on dst's link — a frame sent to dst after Post returns goes
// after it — and finish then waits until the payload's memory is the
// caller's again, and returns the send's error; finish must be called,
// once. The engine passes a send's turn (the order of one rank's sends
// to another, which MPI keeps) to the next send when Post returns, so
// that a window of large Isends is under way at once, as MPI's are,
// instead of one after the other with a round trip between.
type Poster interface {
	Post(ctx context.Context, dst int, h Header, payload []byte) (finish func() error, err error)
}

// Sent is the finish of a Post whose send was over when Post returned.
func Sent() error { return nil }

// Piecer is a Transport that moves a message best in pieces of Piece
// bytes: the engine frames and hashes protected messages in pieces of
// this size, so that the hashing of one piece overlaps the transfer of
// the one before instead of preceding all of it. Without it the engine
// uses its own chunk size.
type Piecer interface {
	Piece() int
}

// TrySender is a Transport that can send a frame now if it can do so
// without waiting. The engine tries control frames (verdicts, asks) so
// on the goroutine that made them, and queues them for a goroutine of
// their own only when TrySend reports false; and a small unprotected
// Isend, which is then over when Isend returns. A frame TrySend reports
// sent is the transport's: it is delivered in order with the link's
// other frames, even if the transport finishes writing it later (and
// then its Close lets that write end first).
type TrySender interface {
	TrySend(dst int, h Header, payload []byte) bool
}

// Progresser is a Transport whose links can be read by the goroutine that
// waits for their frames, instead of only by goroutines of the
// transport's own: a receive that reads its link itself is woken by no
// other goroutine, the cost that dominates a small message's round trip.
type Progresser interface {
	// Progress delivers frames of src (Frames.Deliver) on the calling
	// goroutine until w is over or ctx is done, and reports that it did.
	// It reports false if it cannot — another goroutine reads src's
	// frames now, and delivers the caller's too — and the caller then
	// waits as it would without a Progresser.
	Progress(ctx context.Context, src int, w *Wait) bool
	// Waiting says that a goroutine starts (n = 1) or stops (n = -1)
	// waiting for frames of src (AnySource: of any peer) without reading
	// them itself: the transport's own goroutines then read them at once
	// instead of leaving them to a receive.
	Waiting(src, n int)
}
