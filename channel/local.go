package channel

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// NewLocal returns n ranks in this process, to run as goroutines. A
// message is copied once, from the sender's buffer into the receive
// buffer if the receive is already posted, else into a buffer of its own
// (and from there when it is received): what a transport between
// processes would do, without the wire.
//
// The transport reaches the engines only through package transport:
// Frames, and for its fast path — a protected message answered within
// the Send that delivers it, control frames as calls — the Caller and
// CallFrames capabilities.
func NewLocal(n int, opts ...TransportOption) ([]*Endpoint, error) {
	if n < 1 || n > wire.MaxRanks {
		return nil, fmt.Errorf("%w: %d ranks", ErrRank, n)
	}
	net := &localNet{eps: make([]*Endpoint, n), txs: make([]*localTx, n), frames: make([]transport.CallFrames, n), secret: make([]byte, 32)}
	rand.Read(net.secret)
	for r := range n {
		net.txs[r] = &localTx{net: net, rank: r}
		ep, err := NewEndpoint(r, n, func(f Frames) (Transport, error) {
			cf, ok := f.(transport.CallFrames)
			if !ok {
				return nil, fmt.Errorf("channel: the in-process transport needs the engine's transport.CallFrames, not %T", f)
			}
			net.frames[r] = cf
			return net.txs[r], nil
		}, opts...)
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
	frames []transport.CallFrames // each rank's engine
	secret []byte                 // the job's, made by NewLocal: the root of its link secrets
	// testHookSyncGap, if set (tests), runs between a receiver's
	// verifying a message as its Send delivers it and that Send's handing
	// the OK to its sender's engine (localTx.Send; handoff) or returning
	// it to the send (SendCall).
	testHookSyncGap func(handoff bool)
}

// localTx is one rank's transport.Caller.
type localTx struct {
	net  *localNet
	rank int
	// OKs a receiver left to this rank's Send (DeliverCall) that it has
	// not yet handed to its engine. Written by this rank's sending
	// goroutine only (DeliverCall runs on it): a count in the receiver's
	// engine, written by every sender, would cost its cache line's trips
	// between the cores.
	inHand atomic.Int32
}

// Settle waits, up to d, until no Send of the job holds an OK it has not
// handed to its engine (localTx.inHand): a rank that closes lets its
// verdicts reach their senders first (Endpoint.Close).
func (t *localTx) Settle(d time.Duration) {
	deadline := time.Now().Add(d)
	for _, u := range t.net.txs {
		for u.inHand.Load() != 0 && time.Now().Before(deadline) {
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

// SendCall is Send for a protected message's only frame (sender.frameOne):
// if the receiver verified the message as it was delivered, it reports
// so, and leaves the OK with the caller — it does not hand it to this
// rank's engine — with inHand raised, which the caller lowers (Handed)
// once it has ended the send.
func (t *localTx) SendCall(ctx context.Context, dst int, h wire.Header, payload []byte) (bool, error) {
	return t.deliver(ctx, dst, h, payload, false)
}

// Handed says that an OK SendCall reported is in.
func (t *localTx) Handed() { t.inHand.Add(-1) }

func (t *localTx) deliver(ctx context.Context, dst int, h wire.Header, payload []byte, handoff bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	peer, me := t.net.frames[dst], t.net.frames[t.rank]
	var verified bool
	var err error
	if h.Ctx != 0 && peer.Direct() && me.Settled(h.Ctx) {
		verified, err = peer.DeliverCall(t.rank, h, payload, &t.inHand)
	} else {
		err = peer.DeliverBytes(t.rank, h, payload)
	}
	if verified && t.net.testHookSyncGap != nil {
		t.net.testHookSyncGap(handoff)
	}
	if verified && handoff { // before any error: the receiver's Close waits for it
		// The receiver's OK, handed to this rank's engine as control
		// would. Until it is in, the receiver's Close waits for it
		// (inHand): its Recv may have returned already, and a Close that
		// took the link down first would fail this send, whose message
		// was received.
		me.DeliverOK(dst, h)
		t.inHand.Add(-1)
	}
	if err != nil {
		t.broken(dst, err)
		err = &PeerError{Rank: dst, Err: err}
	}
	return verified && !handoff, err // SendCall's caller takes the OK
}

// Control hands a receiver's control frame (a verdict, an ask) to the
// rank it is for as a call, not a frame. The engine uses it only where
// nothing stands between the ranks (its transport is this localTx
// itself, with no Injector or wrapper), so the frame cannot be damaged
// or lost on its way, and checking it, reading its payload into a lent
// buffer and the frame's dispatch are spared twice in a 1-byte protected
// round trip in process (BenchmarkProtectionOverhead/transport=local/
// size=1B). A frame of a context whose frames the peer parks goes as a
// frame, behind them.
func (t *localTx) Control(dst int, h wire.Header, payload []byte) {
	peer := t.net.frames[dst]
	if !peer.Settled(h.Ctx) {
		t.Send(context.Background(), dst, h, payload)
		return
	}
	// The payload is not lent but this rank's (guard.last keeps it):
	// the engine copies what it keeps of a payload, and never writes
	// into one.
	if err := peer.DeliverControl(t.rank, h, payload); err != nil {
		t.broken(dst, err)
	}
}

// broken breaks the link to dst, for both ends, as a broken frame does
// on TCP.
func (t *localTx) broken(dst int, err error) {
	t.net.frames[dst].Lost(t.rank, err)
	t.net.frames[t.rank].Lost(dst, err)
}

// Abort cannot be needed in process: a copy never stalls.
func (t *localTx) Abort(peer int, err error) {}

// Inline: a copy in process never blocks.
func (t *localTx) Inline() bool { return true }

func (t *localTx) Close() error {
	for r, f := range t.net.frames {
		if r != t.rank {
			f.Lost(t.rank, ErrClosed)
		}
	}
	return nil
}

// The capabilities the engine finds in process (package transport).
var (
	_ transport.Caller       = (*localTx)(nil)
	_ transport.Inliner      = (*localTx)(nil)
	_ transport.LinkSecreter = (*localTx)(nil)
	_ transport.CallFrames   = frames{}
)
