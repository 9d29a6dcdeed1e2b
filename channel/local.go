package channel

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// Endpoint is one rank's end of a transport, the Comm that the others
// (protection layers, collectives) build on. Close it when done: the other
// ranks then see it as lost.
type Endpoint struct {
	e      *engine
	links  func(peer int) ([]byte, error) // the link secrets (LinkKey)
	native native                         // the transport's own collectives
	sys    bool                           // a view for the package's protocols (reserved tags allowed)
}

// Rank returns this endpoint's rank.
func (p *Endpoint) Rank() int { return p.e.rank }

// Size returns the number of ranks.
func (p *Endpoint) Size() int { return p.e.size }

// Send sends data to rank dst with a tag ≥ 0.
func (p *Endpoint) Send(ctx context.Context, dst, tag int, data []byte) error {
	if err := checkSend(p, dst, tag, p.sys); err != nil {
		return err
	}
	return p.e.send(ctx, 0, dst, int64(tag), data, nil)
}

// Recv receives a message from src (or AnySource) with tag (or AnyTag).
func (p *Endpoint) Recv(ctx context.Context, src, tag int, buf []byte) (Status, error) {
	if err := checkRecv(p, src, tag, p.sys); err != nil {
		return Status{}, err
	}
	return p.e.recv(ctx, 0, src, int64(tag), buf)
}

func (p *Endpoint) postSend(ctx context.Context, dst, tag int, data []byte) func() error {
	if err := checkSend(p, dst, tag, p.sys); err != nil {
		return func() error { return err }
	}
	t := p.e.ticket(dst)
	return func() error { return p.e.sendIn(ctx, t, 0, dst, int64(tag), data, nil) }
}

func (p *Endpoint) post(src, tag int, buf []byte) (*recvReq, error) {
	if err := checkRecv(p, src, tag, p.sys); err != nil {
		return nil, err
	}
	return p.e.post(0, src, int64(tag), buf)
}

// Stats returns the endpoint's counters.
func (p *Endpoint) Stats() Stats { return p.e.statsNow() }

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

func (p *Endpoint) engine() *engine                { return p.e }
func (p *Endpoint) context() (uint32, *protection) { return 0, nil }

// Dup returns a duplicate of the endpoint, unprotected (see Dup).
func (p *Endpoint) Dup() Comm { return p.e.dup(nil) }

// Flush waits for the endpoint's eager sends, whichever layer sent them
// (see Flush).
func (p *Endpoint) Flush(ctx context.Context) error { return p.e.flush(ctx) }

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

func (p *Endpoint) reserved() Comm {
	if p.sys {
		return p
	}
	q := *p
	q.sys = true
	return &q
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
		if lt, ok := p.e.tx.(*localTx); ok {
			lt.net.settle(time.Second)
		}
	}
	p.e.shutdown()
	return p.e.tx.Close()
}

// NewLocal returns n ranks in this process, to run as goroutines. A
// message is copied once, from the sender's buffer into the receive
// buffer if the receive is already posted, else into a buffer of its own
// (and from there when it is received): what a transport between
// processes would do, without the wire.
func NewLocal(n int, opts ...TransportOption) ([]*Endpoint, error) {
	if n < 1 || n > wire.MaxRanks {
		return nil, fmt.Errorf("%w: %d ranks", ErrRank, n)
	}
	net := &localNet{eps: make([]*Endpoint, n), txs: make([]*localTx, n), secret: make([]byte, 32)}
	rand.Read(net.secret)
	for r := range n {
		net.txs[r] = &localTx{net: net, rank: r}
		ep, err := NewEndpoint(r, n, func(Frames) (Transport, error) { return net.txs[r], nil }, opts...)
		if err != nil {
			return nil, err
		}
		net.eps[r] = ep
	}
	return net.eps, nil
}

type localNet struct {
	eps    []*Endpoint
	txs    []*localTx
	secret []byte // the job's, made by NewLocal: the root of its link secrets
	// testHookSyncGap, if set (tests), runs between a receiver's
	// verifying a message as its Send delivers it and that Send's handing
	// the OK to its sender's engine (localTx.Send; handoff) or returning
	// it to the send (sendSync).
	testHookSyncGap func(handoff bool)
}

type localTx struct {
	net  *localNet
	rank int
	// OKs a receiver left to this rank's Send (arriveSync) that it has
	// not yet handed to its engine. Written by this rank's sending
	// goroutine only (arriveSync runs on it): a count in the receiver's
	// engine, written by every sender, cost its cache line's trips
	// between the cores (1 KiB checksummed round trips 1.50 -> 1.56 of
	// unprotected).
	inHand atomic.Int32
}

// settle waits, up to d, until no Send holds an OK it has not handed to
// its engine (localTx.inHand): a rank that closes lets its verdicts
// reach their senders first (Endpoint.Close).
func (n *localNet) settle(d time.Duration) {
	deadline := time.Now().Add(d)
	for _, t := range n.txs {
		for t.inHand.Load() != 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// LinkSecret derives the link's secret from the job's (LinkKey).
func (t *localTx) LinkSecret(peer int) ([]byte, error) {
	return wire.LocalLink(t.net.secret, t.rank, peer, len(t.net.eps)), nil
}

func (t *localTx) Send(ctx context.Context, dst int, h wire.Header, payload []byte) error {
	_, err := t.deliver(ctx, dst, h, payload, true)
	return err
}

// sendSync is Send for a protected message's only frame (sender.frameOne):
// if the receiver verified the message as it was delivered, it reports
// so, and leaves the OK with the caller — it does not hand it to this
// rank's engine — with inHand raised, which the caller lowers (handed)
// once it has ended the send.
func (t *localTx) sendSync(ctx context.Context, dst int, h wire.Header, payload []byte) (bool, error) {
	return t.deliver(ctx, dst, h, payload, false)
}

// handed says that an OK sendSync reported is in.
func (t *localTx) handed() { t.inHand.Add(-1) }

func (t *localTx) deliver(ctx context.Context, dst int, h wire.Header, payload []byte, handoff bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	peer := t.net.eps[dst].e
	err := h.Check() // the limits every transport enforces (Frames.Deliver)
	if err == nil && len(payload) > h.Plen {
		err = fmt.Errorf("%w: a payload of %d bytes under a header of %d", ErrProtocol, len(payload), h.Plen)
	}
	if err != nil {
		t.broken(dst, err)
		return false, &PeerError{Rank: dst, Err: err}
	}
	fill := func(b []byte) error {
		k := copy(b, payload)
		payload = payload[k:]
		if k < len(b) {
			return fmt.Errorf("%w: a frame shorter than its header says", ErrProtocol)
		}
		return nil
	}
	me := t.net.eps[t.rank].e
	var verified bool
	if h.Ctx != 0 && t.direct(peer) && me.settledCtx(h.Ctx) {
		verified, err = peer.arriveSync(t.rank, h, fill, &t.inHand)
	} else {
		err = peer.arrive(t.rank, h, fill)
	}
	if verified && t.net.testHookSyncGap != nil {
		t.net.testHookSyncGap(handoff)
	}
	if verified && handoff { // before any error: the receiver's Close waits for it
		// The receiver's OK, as control would hand it over (arriveControl
		// fails only for a datatype stamp). Until it is in, the receiver's
		// Close waits for it (inHand): its Recv may have returned already,
		// and a Close that took the link down first would fail this send,
		// whose message was received.
		v := verdictHeader(h.Ctx, h.Tag, h.ID, h.Total)
		v.Plen = len(okTriple)
		me.arriveControl(dst, v, okTriple, true)
		t.inHand.Add(-1)
		me.ctl.flush()
	}
	if err != nil {
		t.broken(dst, err)
		err = &PeerError{Rank: dst, Err: err}
	}
	return verified && !handoff, err // sendSync's caller takes the OK
}

// direct says whether peer's control frames to this rank go as calls
// (control): its transport is a localTx itself, with nothing between.
// Then a message it verifies as this rank's Send delivers it is reported
// to Send instead (arriveSync).
func (t *localTx) direct(peer *engine) bool {
	_, ok := peer.tx.(*localTx)
	return ok
}

// control hands a receiver's control frame (a verdict, an ask) to the
// rank it is for as a call, not a frame. It is used only where nothing
// stands between the ranks: the engine's transport is this localTx
// itself, with no Injector or wrapper, so the frame cannot be damaged or
// lost on its way, and checking it, reading its payload into a lent
// buffer and the frame's dispatch (Send, arrive) are spared twice in a
// 1-byte protected round trip in process, once a verdict
// (BenchmarkProtectionOverhead/transport=local/size=1B). A frame of a
// context whose frames the peer parks goes as a frame, behind them.
func (t *localTx) control(f ctlFrame) {
	peer := t.net.eps[f.dst].e
	if !peer.settledCtx(f.h.Ctx) {
		t.Send(context.Background(), f.dst, f.h, f.payload)
		return
	}
	// The payload is not lent but this rank's (guard.last keeps it):
	// arriveControl copies what it keeps of a payload, and never writes
	// into one.
	if err := peer.arriveControl(t.rank, f.h, f.payload, true); err != nil {
		t.broken(f.dst, err)
		return
	}
	peer.ctl.flush() // what handling it made (arrive's handled)
}

// broken breaks the link to dst, for both ends, as a broken frame does
// on TCP.
func (t *localTx) broken(dst int, err error) {
	t.net.eps[dst].e.lose(t.rank, err)
	t.net.eps[t.rank].e.lose(dst, err)
}

// Abort cannot be needed in process: a copy never stalls.
func (t *localTx) Abort(peer int, err error) {}

// Inline: a copy in process never blocks.
func (t *localTx) Inline() bool { return true }

func (t *localTx) Close() error {
	for r, ep := range t.net.eps {
		if r != t.rank {
			ep.e.lose(t.rank, ErrClosed)
		}
	}
	return nil
}

func (p *Endpoint) nextColl() uint32 { return p.e.nextColl(0) }
