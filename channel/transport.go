package channel

import (
	"context"
	"fmt"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// The transport boundary. An Endpoint is an engine — matching, the
// protection protocols, collectives — over a Transport that moves frames
// between ranks. The transports of this package (NewLocal, ConnectTCP)
// and those of other packages (channel/mpi, over Open MPI) meet the
// engine only here, so that everything above — WithChecksum,
// WithMerkle, Typed, Validate*, the Injector — runs unchanged over any of
// them. The shape is database/sql/driver's: a small required interface
// and optional ones that the engine finds by type assertion and does
// without.

// Header is a frame's header; HeaderSize bytes on the wire (Put writes
// them, ParseHeader reads and checks them). The format is documented in
// internal/wire.
type Header = wire.Header

// HeaderSize is the size of an encoded frame header.
const HeaderSize = wire.HeaderSize

// ParseHeader decodes and checks an encoded frame header: its own check
// sum, version, kind, and every length and offset against the limits.
// A transport that receives headers as bytes parses them with it, and
// drops the link on an error; Frames.Deliver checks the fields again.
func ParseHeader(b []byte) (Header, error) { return wire.ParseHeader(b) }

// Transport moves frames to the other ranks of a job. It hands the frames
// it receives to the Frames its constructor was given, from goroutines
// of its own, in the order each peer sent them.
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

// Inliner is a Transport whose Send never blocks (a copy in process):
// the engine then sends control frames from the goroutine that made them
// instead of handing them to a goroutine of their own.
type Inliner interface {
	Inline() bool
}

// LinkSecreter is a Transport whose links were authenticated by a
// handshake that left both ends a shared secret (Endpoint.LinkKey).
type LinkSecreter interface {
	LinkSecret(peer int) ([]byte, error)
}

// Barrierer is a Transport (or a Comm) with a barrier of its own, such
// as MPI_Barrier; Barrier uses it.
type Barrierer interface {
	Barrier(ctx context.Context) error
}

// Frames is the engine's side of a transport: where the transport hands
// the frames it receives and says which peers it lost.
type Frames struct {
	e *engine
}

// Rank returns the rank of the endpoint the frames are for.
func (f Frames) Rank() int { return f.e.rank }

// Size returns the number of ranks of the job.
func (f Frames) Size() int { return f.e.size }

// Deliver hands the engine one frame from rank src. fill reads the
// frame's payload: the engine calls it with consecutive slices whose
// lengths add up to h.Plen, straight into a receive buffer when one is
// posted. An error means src broke the protocol (a header out of bounds,
// a frame for a message that does not expect it, a payload shorter than
// its header said): the transport drops the link and reports it lost.
func (f Frames) Deliver(src int, h Header, fill func([]byte) error) error {
	if src < 0 || src >= f.e.size || src == f.e.rank {
		return fmt.Errorf("%w: a frame from rank %d on rank %d of %d", ErrProtocol, src, f.e.rank, f.e.size)
	}
	if err := h.Check(); err != nil {
		return err
	}
	<-f.e.started // a transport may deliver before NewEndpoint has returned
	return f.e.arrive(src, h, fill)
}

// Lost says that the link with peer is gone (why: err). Receives from it
// and sends to it then fail with a *PeerError.
func (f Frames) Lost(peer int, err error) {
	if peer >= 0 && peer < f.e.size {
		f.e.lose(peer, err)
	}
}

// NewEndpoint returns rank's end of a job of size ranks over the
// Transport that open makes, given the Frames to deliver to; options
// apply as to the transports of this package (WithInjector,
// WithTransportWrapper). Closing the Endpoint closes the transport.
func NewEndpoint(rank, size int, open func(Frames) (Transport, error), opts ...TransportOption) (*Endpoint, error) {
	if size < 1 || size > wire.MaxRanks || rank < 0 || rank >= size {
		return nil, fmt.Errorf("%w: rank %d of %d", ErrRank, rank, size)
	}
	var cfg transportConfig
	for _, o := range opts {
		o(&cfg)
	}
	e := &engine{rank: rank, size: size, started: make(chan struct{}), limit: cfg.limit}
	if e.limit <= 0 {
		e.limit = DefaultHeldLimit
	}
	if e.probe = cfg.probe; e.probe <= 0 {
		e.probe = DefaultProbe
	}
	e.initState() // Frames.Lost works from the start; Deliver waits for started
	t, err := open(Frames{e})
	if err != nil {
		return nil, err
	}
	tx := t
	if cfg.wrap != nil {
		if tx = cfg.wrap(rank, t); tx == nil {
			t.Close()
			return nil, fmt.Errorf("channel: WithTransportWrapper's function returned no transport for rank %d", rank)
		}
	}
	in, ok := tx.(Inliner)
	e.ctl = newCtlQueue(e, ok && in.Inline())
	e.tx = inject(tx, cfg.inj, rank, &e.stats)
	ep := &Endpoint{view: view{e: e}}
	if e.tx == t {
		ep.native = nativeOf(t)
	}
	if ls, ok := t.(LinkSecreter); ok {
		ep.links = ls.LinkSecret
	}
	close(e.started)
	return ep, nil
}
