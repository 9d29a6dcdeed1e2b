package channel

import (
	"context"
	"fmt"
	"time"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// view is a Comm on one context of an engine: an Endpoint's own (context
// 0), a duplicate's (Dup) or a protection layer's (WithChecksum,
// WithMerkle, and a Dup of a layer), each a context with a matching
// space of its own. One type for all of them: what differs is the
// context and whether its messages are protected.
type view struct {
	e   *engine
	ctx uint32
	p   *protection // the context's protection; nil: none
	sys bool        // a view for the package's protocols (reserved tags allowed)
}

// Rank returns this rank.
func (v *view) Rank() int { return v.e.rank }

// Size returns the number of ranks.
func (v *view) Size() int { return v.e.size }

// Send sends data to rank dst with a tag ≥ 0 (see Comm).
func (v *view) Send(ctx context.Context, dst, tag int, data []byte) error {
	if err := checkSend(v, dst, tag, v.sys); err != nil {
		return err
	}
	if v.p != nil {
		return v.e.sendProtected(ctx, v.p, v.ctx, dst, int64(tag), data, nil)
	}
	return v.e.send(ctx, v.ctx, dst, int64(tag), data, nil)
}

// Recv receives a message from src (or AnySource) with tag (or AnyTag)
// (see Comm).
func (v *view) Recv(ctx context.Context, src, tag int, buf []byte) (Status, error) {
	if err := checkRecv(v, src, tag, v.sys); err != nil {
		return Status{}, err
	}
	return v.e.recv(ctx, v.ctx, src, int64(tag), buf)
}

func (v *view) postSend(ctx context.Context, dst, tag int, data []byte) func() error {
	if err := checkSend(v, dst, tag, v.sys); err != nil {
		return func() error { return err }
	}
	t := v.e.ticket(dst)
	if v.p != nil {
		return func() error { return v.e.sendProtectedIn(ctx, t, v.p, v.ctx, dst, int64(tag), data, nil) }
	}
	return func() error { return v.e.sendIn(ctx, t, v.ctx, dst, int64(tag), data, nil) }
}

func (v *view) trySend(ctx context.Context, dst, tag int, data []byte) bool {
	return v.p == nil && ctx.Err() == nil && checkSend(v, dst, tag, v.sys) == nil && v.e.trySend(v.ctx, dst, int64(tag), data)
}

func (v *view) post(src, tag int, buf []byte) (*recvReq, error) {
	if err := checkRecv(v, src, tag, v.sys); err != nil {
		return nil, err
	}
	return v.e.post(v.ctx, src, int64(tag), buf)
}

func (v *view) engine() *engine                { return v.e }
func (v *view) context() (uint32, *protection) { return v.ctx, v.p }
func (v *view) nextColl() uint32               { return v.e.nextColl(v.ctx) }

// Stats returns the counters of the endpoint, for all its contexts.
func (v *view) Stats() Stats { return v.e.statsNow() }

// Flush waits for the endpoint's eager sends, whichever context sent them
// (see Flush).
func (v *view) Flush(ctx context.Context) error { return v.e.flush(ctx) }

// Dup returns a duplicate, protected as this view is (see Dup).
func (v *view) Dup() Comm { return v.e.dup(v.p) }

func (v *view) reserved() Comm {
	if v.sys {
		return v
	}
	q := *v
	q.sys = true
	return &q
}

// Endpoint is one rank's end of a transport, the Comm that the others
// (protection layers, collectives) build on. Close it when done: the other
// ranks then see it as lost.
type Endpoint struct {
	view                                  // context 0, unprotected
	links  func(peer int) ([]byte, error) // the link secrets (LinkKey)
	native native                         // the transport's own collectives
}

// LinkKey returns a key of 32 bytes for one purpose (label) on the link
// between this rank and peer: both ends get the same key, no other link
// and no other label does, and nobody outside the job can compute it.
// Over TCP it is expanded (HKDF-SHA256) from the secret that this link's
// authenticated handshake derived from the job's secret and both ends'
// fresh nonces, so it is new with every job; in process (NewLocal), from
// a random secret NewLocal makes. Use it to encrypt or authenticate what
// crosses the link (channel/encrypt does); never a key written in code.
func (p *Endpoint) LinkKey(peer int, label string) ([]byte, error) {
	if err := checkRank(p, peer, "peer"); err != nil {
		return nil, err
	}
	if peer == p.Rank() || p.links == nil {
		return nil, fmt.Errorf("channel: no link from rank %d to rank %d to key", p.Rank(), peer)
	}
	link, err := p.links(peer)
	if err != nil {
		return nil, err
	}
	return wire.LinkKey(link, label, 32)
}

// checkSend checks a send's arguments; sys says that the caller is one
// of this package's protocols, which alone may use reserved tags.
func checkSend(c Comm, dst, tag int, sys bool) error {
	if err := checkRank(c, dst, "destination"); err != nil {
		return err
	}
	return checkTag(tag, sys)
}

func checkRecv(c Comm, src, tag int, sys bool) error {
	if src != AnySource {
		if err := checkRank(c, src, "source"); err != nil {
			return err
		}
	}
	if tag == AnyTag {
		return nil
	}
	return checkTag(tag, sys)
}

func checkTag(tag int, sys bool) error {
	switch {
	case tag < 0:
		return fmt.Errorf("%w: %d", ErrTag, tag)
	case tag >= ReservedTag && !sys:
		return fmt.Errorf("%w: %d is reserved for the package's own protocols (user tags are 0 to %d)", ErrTag, tag, ReservedTag-1)
	}
	return nil
}

// reserver is a Comm of this package, which has a view that may use the
// reserved tags.
type reserver interface {
	reserved() Comm
}

// sys returns the view of c through which this package's protocols
// (collectives, validation) send on reserved tags: for a Comm of this
// package the same communicator without the check that keeps users off
// those tags; any other Comm as it is, which carries them as it will.
func sys(c Comm) Comm {
	if r, ok := c.(reserver); ok {
		return r.reserved()
	}
	return c
}

// Close shuts the endpoint: its pending receives fail with ErrClosed and
// the other ranks see it as lost.
func (p *Endpoint) Close() error {
	// The peers' word first: they may be waiting for it. A receive
	// returns as its message completes, while the transport goroutine
	// that completed it still holds e.mu to make its verdict (accept):
	// taking e.mu waits for that verdict to be held or queued, so that
	// it goes too — held ones sent here, queued ones by whoever drains
	// the queue, which settle waits for, and in process those left to
	// the Send that delivered the message (arriveSync) by that Send,
	// which localNet.settle waits for.
	p.e.mu.Lock()
	closed := p.e.closed
	p.e.mu.Unlock()
	if !closed {
		p.e.ctl.flushHeld()
		p.e.ctl.settle(time.Second)
		if cl := p.e.caps.call; cl != nil {
			cl.Settle(time.Second)
		}
	}
	p.e.shutdown()
	return p.e.tx.Close()
}
