package channel

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/internal/wire"
)

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
