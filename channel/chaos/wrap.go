package chaos

import (
	"context"
	"errors"
	"sync"

	"github.com/sigcheck/sigcheck/channel"
)

// faultTx damages, as the schedule says, the frames one rank sends
// through a transport the campaign cannot stand between from outside
// (Open MPI's, whose ranks are processes of their own): it wraps the
// rank's transport (channel.WithTransportWrapper) and shapes each frame
// on its way in, as inTx does in process. Each rank's wrapper decides
// for the frames it sends, from the same schedule, so the faults are
// those every rank drew.
type faultTx struct {
	channel.Transport
	in    *injector
	rank  int
	mu    sync.Mutex
	links map[int]*link // by destination
}

func wrapFaults(in *injector) channel.TransportOption {
	return channel.WithTransportWrapper(func(rank int, t channel.Transport) channel.Transport {
		return &faultTx{Transport: t, in: in, rank: rank, links: map[int]*link{}}
	})
}

func (t *faultTx) link(dst int) *link {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.links[dst]
	if l == nil {
		l = &link{}
		t.links[dst] = l
	}
	return l
}

// Send shapes the frame and sends what comes out, holding the link's
// lock throughout so that the frames keep their order. A frame whose
// header a flip hit breaks the link (Abort), as the receiver's parser
// would; a truncated frame goes with its header's length and half its
// payload, which the transport's receiver refuses, breaking the link.
func (t *faultTx) Send(ctx context.Context, dst int, h channel.Header, p []byte) error {
	faults := t.in.decide(t.rank, dst, h)
	l := t.link(dst)
	l.mu.Lock()
	defer l.mu.Unlock()
	out, err := l.shape(ctx, faults, h, p)
	if errors.Is(err, errHeader) {
		t.Transport.Abort(dst, err)
		return &channel.PeerError{Rank: dst, Err: err}
	} else if err != nil {
		return err
	}
	for _, f := range out {
		if err := t.Transport.Send(ctx, dst, f.h, f.p); err != nil {
			return err
		}
	}
	return nil
}
