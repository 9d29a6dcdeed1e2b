package channel

import (
	"fmt"
	"sync/atomic"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// The transport boundary is package transport: an Endpoint is an engine
// — matching, the protection protocols, collectives — over a Transport
// that moves frames between ranks, and the transports (channel/tcp,
// channel/mpi, NewLocal here) meet the engine only there, so that
// everything above — WithChecksum, WithMerkle, Typed, Validate*, the
// Injector — runs unchanged over any of them. Its types are aliased here
// for the callers of NewEndpoint.

// Header is a frame's header (transport.Header).
type Header = transport.Header

// HeaderSize is the size of an encoded frame header.
const HeaderSize = transport.HeaderSize

// ParseHeader decodes and checks an encoded frame header
// (transport.ParseHeader).
func ParseHeader(b []byte) (Header, error) { return transport.ParseHeader(b) }

// Transport moves frames to the other ranks of a job (transport.Transport).
type Transport = transport.Transport

// Frames is the engine's side of a transport (transport.Frames).
type Frames = transport.Frames

// Inliner is a Transport whose Send never blocks (transport.Inliner).
type Inliner = transport.Inliner

// LinkSecreter is a Transport whose links were authenticated by a
// handshake that left both ends a shared secret (transport.LinkSecreter).
type LinkSecreter = transport.LinkSecreter

// Barrierer is a Transport (or a Comm) with a barrier of its own, such
// as MPI_Barrier; Barrier uses it.
type Barrierer = transport.Barrierer

// frames is the engine's transport.Frames, and its transport.CallFrames
// for a transport that delivers within the sender's call.
type frames struct {
	e *engine
}

func (f frames) Rank() int { return f.e.rank }

func (f frames) Size() int { return f.e.size }

func (f frames) Deliver(src int, h Header, fill func([]byte) error) error {
	if src < 0 || src >= f.e.size || src == f.e.rank {
		return fmt.Errorf("%w: a frame from rank %d on rank %d of %d", ErrProtocol, src, f.e.rank, f.e.size)
	}
	if err := h.Check(); err != nil {
		return err
	}
	if !f.e.up.Load() {
		<-f.e.started // a transport may deliver before NewEndpoint has returned
	}
	return f.e.arrive(src, h, fill)
}

func (f frames) Lost(peer int, err error) {
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
	t, err := open(frames{e})
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
	e.caps = capsOf(e.tx)
	ep := &Endpoint{view: view{e: e}}
	if e.tx == t {
		ep.native = nativeOf(t)
	}
	if ls, ok := t.(LinkSecreter); ok {
		ep.links = ls.LinkSecret
	}
	close(e.started)
	e.up.Store(true)
	return ep, nil
}

// The engine's half of delivery within the sender's call
// (transport.CallFrames; the in-process transport's fast path).

func (f frames) Direct() bool { return f.e.caps.call != nil }

func (f frames) Settled(ctx uint32) bool { return f.e.settledCtx(ctx) }

func (f frames) DeliverBytes(src int, h Header, payload []byte) error {
	if err := f.checkBytes(src, h, payload); err != nil {
		return err
	}
	return f.e.arrive(src, h, bytesFill(payload))
}

func (f frames) DeliverCall(src int, h Header, payload []byte, inHand *atomic.Int32) (bool, error) {
	if err := f.checkBytes(src, h, payload); err != nil {
		return false, err
	}
	return f.e.arriveSync(src, h, bytesFill(payload), inHand)
}

// checkBytes is Deliver's check for a payload in memory, which must be
// as long as the header says.
func (f frames) checkBytes(src int, h Header, payload []byte) error {
	if src < 0 || src >= f.e.size || src == f.e.rank {
		return fmt.Errorf("%w: a frame from rank %d on rank %d of %d", ErrProtocol, src, f.e.rank, f.e.size)
	}
	if err := h.Check(); err != nil {
		return err
	}
	if len(payload) != h.Plen {
		return fmt.Errorf("%w: a payload of %d bytes under a header of %d", ErrProtocol, len(payload), h.Plen)
	}
	if !f.e.up.Load() {
		<-f.e.started
	}
	return nil
}

func (f frames) DeliverOK(src int, h Header) {
	// The receiver's OK, as control would hand it over (arriveControl
	// fails only for a datatype stamp).
	v := verdictHeader(h.Ctx, h.Tag, h.ID, h.Total)
	v.Plen = len(okTriple)
	f.e.arriveControl(src, v, okTriple, true)
	f.e.ctl.flush()
}

func (f frames) DeliverControl(src int, h Header, payload []byte) error {
	if err := f.e.arriveControl(src, h, payload, true); err != nil {
		return err
	}
	f.e.ctl.flush() // what handling it made (arrive's handled)
	return nil
}
