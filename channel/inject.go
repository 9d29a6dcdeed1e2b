package channel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/sigcheck/sigcheck/channel/transport"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// Fault is what an Injector does to a frame it picks.
type Fault int

const (
	// Flip flips one random bit of the frame's payload: silent corruption,
	// what the protection layers exist to catch. Frames without payload
	// are left alone.
	Flip Fault = iota
	// Drop loses the frame.
	Drop
	// Duplicate sends the frame twice.
	Duplicate
	// Truncate sends the frame's header and only half its payload.
	Truncate
)

func (f Fault) String() string {
	switch f {
	case Flip:
		return "flip"
	case Drop:
		return "drop"
	case Duplicate:
		return "duplicate"
	case Truncate:
		return "truncate"
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Injector damages frames on their way out of a rank, reproducibly: for
// tests, and for benchmarks of the protection under faults. Give it to a
// transport (WithInjector, tcp.Config.Injector); its counts show in Stats
// (Injected).
type Injector struct {
	// Rate is the probability that a frame is damaged: 0.01 is one frame
	// in 100.
	Rate float64
	// Seed makes the choice of frames and bits reproducible (each rank
	// draws from Seed and its rank).
	Seed  uint64
	Fault Fault
	// Ranks, if set, limits the damage to frames sent by these ranks.
	Ranks []int
	// Tags, if set, limits it to frames of messages with these tags.
	Tags []int
}

// TransportOption configures a transport.
type TransportOption func(*transportConfig)

type transportConfig struct {
	inj   *Injector
	wrap  func(rank int, t Transport) Transport
	limit int64
	probe time.Duration
}

// WithProbe sets how long a protected send waits for word from its
// receiver after its last frame before it asks again (default
// DefaultProbe, 250 ms): a frame lost on the way then costs this wait and
// a round trip. Shorter suits a link whose round trips are short and
// steady (in process); too short on a loaded link costs probes that find
// nothing lost.
func WithProbe(d time.Duration) TransportOption {
	return func(c *transportConfig) { c.probe = d }
}

// DefaultHeldLimit is the default of WithHeldLimit.
const DefaultHeldLimit = 256 << 20

// WithHeldLimit bounds the bytes a rank holds for others before it has
// asked for them (default DefaultHeldLimit):
//   - frames of protection layers this rank has not created yet, which
//     wait for it: past the limit the peer that sent them is dropped
//     (its link breaks, with an error that names the limit), so that a
//     peer cannot fill this rank's memory with frames nobody will take;
//   - messages that come before their receive, which get a buffer of
//     their first frame's size, then, from their second frame on, one of
//     their whole length while they fit in the limit (the message's size,
//     plus one frame at most), and beyond it a buffer grown as their
//     bytes come (never more than twice what came). A receive posted
//     while its message is coming takes the rest straight into its own
//     buffer.
func WithHeldLimit(bytes int64) TransportOption {
	return func(c *transportConfig) { c.limit = bytes }
}

// WithInjector damages frames as inj says.
func WithInjector(inj *Injector) TransportOption {
	return func(c *transportConfig) { c.inj = inj }
}

// WithTransportWrapper puts wrap's Transport between the engine and the
// transport it was given, as a RoundTripper wraps another: the frames
// the endpoint sends go through what wrap returns for its rank. It is
// how a test stands between the ranks of a transport it cannot reach
// from outside (a fault campaign over Open MPI), and how frames can be
// traced or shaped. An Injector, if any, goes outside the wrapper; an
// endpoint whose transport is wrapped runs its collectives over frames
// (not the transport's native ones), and asks what wrap returns whether
// it sends without blocking (Inliner): a wrapper that may block does not
// implement it.
func WithTransportWrapper(wrap func(rank int, t Transport) Transport) TransportOption {
	return func(c *transportConfig) { c.wrap = wrap }
}

// injectTx wraps a transport with an Injector.
type injectTx struct {
	Transport
	inj   *Injector
	rank  int
	stats *counters
	mu    sync.Mutex
	rng   *rand.Rand
}

func inject(t Transport, inj *Injector, rank int, stats *counters) Transport {
	if inj == nil || inj.Rate <= 0 {
		return t
	}
	if inj.Ranks != nil && !slices.Contains(inj.Ranks, rank) {
		return t
	}
	it := &injectTx{Transport: t, inj: inj, rank: rank, stats: stats,
		rng: rand.New(rand.NewPCG(inj.Seed, uint64(rank)+0x9e3779b97f4a7c15))}
	if p, ok := t.(transport.Poster); ok {
		return &injectPostTx{it, p}
	}
	return it
}

// injectPostTx is an injectTx over a transport.Poster, which it offers
// in turn, so that a transport's posted sends meet faults too: a frame
// spared goes by Post, a frame hit goes as Send sends it.
type injectPostTx struct {
	*injectTx
	p transport.Poster
}

func (t *injectPostTx) Post(ctx context.Context, dst int, h wire.Header, payload []byte) (func() error, error) {
	hit, bit := t.draw(h, payload)
	if !hit {
		return t.p.Post(ctx, dst, h, payload)
	}
	return transport.Sent, t.hit(ctx, dst, h, payload, bit)
}

func (t *injectTx) Send(ctx context.Context, dst int, h wire.Header, payload []byte) error {
	hit, bit := t.draw(h, payload)
	if !hit {
		return t.Transport.Send(ctx, dst, h, payload)
	}
	return t.hit(ctx, dst, h, payload, bit)
}

// draw says whether the frame is damaged, and which of its bits a Flip
// flips.
func (t *injectTx) draw(h wire.Header, payload []byte) (hit bool, bit int) {
	if t.inj.Tags != nil && !slices.Contains(t.inj.Tags, int(h.Tag)) {
		return false, 0
	}
	if t.inj.Fault == Flip && len(payload) == 0 {
		return false, 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hit = t.rng.Float64() < t.inj.Rate
	bit = t.rng.IntN(max(1, 8*len(payload)))
	return hit, bit
}

// hit sends the frame damaged as the Injector says.
func (t *injectTx) hit(ctx context.Context, dst int, h wire.Header, payload []byte, bit int) error {
	t.stats.injected.Add(1)
	switch t.inj.Fault {
	case Flip:
		c := make([]byte, len(payload))
		copy(c, payload)
		c[bit/8] ^= 1 << (bit % 8)
		return t.Transport.Send(ctx, dst, h, c)
	case Drop:
		return nil
	case Duplicate:
		if err := t.Transport.Send(ctx, dst, h, payload); err != nil {
			return err
		}
		return t.Transport.Send(ctx, dst, h, payload)
	default: // Truncate
		return t.Transport.Send(ctx, dst, h, payload[:len(payload)/2])
	}
}
