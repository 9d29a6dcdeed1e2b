package channel

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/tree"
)

// Protection layers. WithChecksum and WithMerkle return a Comm on a
// context of its own (like MPI_Comm_dup: every rank creates its layers in
// the same order; unlike it, creating one is local and instant, and
// messages that reach a rank before it has created the layer wait for
// it), whose messages are checked as they arrive and repaired
// by retransmitting only what was corrupted, before any receive sees
// them. A Send on a protected Comm of more than EagerLimit bytes returns
// once the receiver's side has verified the message (which it does on
// arrival, whether or not a receive is posted: two ranks may still send
// to each other first); a smaller one returns at once, keeping a copy to
// repair from (see EagerLimit, and Flush).
//
// Here: the options, making a layer, Flush, Stats, and the errors a
// protected transfer ends with. A send's side of the protocol is
// sender.go, transmit.go and pending.go; a message's, guard.go; the
// payloads they exchange, protocol.go.

type protMode int

const (
	modeChecksum protMode = iota + 1
	modeMerkle
)

type protection struct {
	mode   protMode
	alg    *csum.Algorithm // checksum: nil for csum.Default of the chunk size
	algIdx byte            // checksum: alg's number in the frames' flags (algIndex), found once
	chunk  int             // checksum: bytes per frame, each with its checksum
	seg    int             // merkle: segment size
	hash   string          // merkle: node hash
	parity int             // merkle: parity segments per stripe
	rounds int             // repair rounds before giving up
	err    error

	// treeOpts is seg and hash as tree options, made once: every
	// message's trees take them, and making them allocates.
	treeOpts []tree.Option
	h        *tree.Hash // merkle: hash, looked up once

	// trees keeps the trees of messages that are over, sender's and
	// receiver's, for the next ones (newTree): made afresh, a tree and
	// its nodes (8 KiB for 1 MiB) were most of what a large Merkle
	// message allocated on each side.
	trees sync.Pool
}

// maxKeptNodes is the most nodes of a tree kept for the next message
// (keepTree): 1 MiB of 64-bit hashes, the tree of 128 MiB in 2 KiB
// segments.
const maxKeptNodes = 1 << 17

// newTree returns the tree of size bytes yet to be hashed, a kept one if
// there is one.
func (p *protection) newTree(size int64) (*tree.Tree, error) {
	if t, _ := p.trees.Get().(*tree.Tree); t != nil && t.Reset(size) == nil {
		return t, nil
	}
	return tree.New(size, p.treeOpts...)
}

// buildTree returns the finished tree of data, in a kept tree if there
// is one (newTree).
func (p *protection) buildTree(data []byte) (*tree.Tree, error) {
	t, err := p.newTree(int64(len(data)))
	if err != nil {
		return nil, err
	}
	t.HashSegments(data, 0, t.Segments())
	t.Finish()
	return t, nil
}

// keepTree takes back a tree that nothing refers to any more, for the
// next message (newTree); nil is ignored.
func (p *protection) keepTree(t *tree.Tree) {
	if t != nil && t.Nodes() <= maxKeptNodes {
		p.trees.Put(t)
	}
}

// treeDepth is the depth of the tree of size bytes in seg-byte segments
// (tree.Tree.Depth), without making the tree: the bound on a protocol's
// exchanges grows with it.
func treeDepth(size int64, seg int) int {
	n := max(1, (size+int64(seg)-1)/int64(seg))
	return bits.Len64(uint64(2*n-1)) - 1
}

// Option configures a protection layer.
type Option func(*protection)

// Algorithm names the checksum of WithChecksum (default: csum.Default for
// the chunk size, the machine's tuned choice). Both ends must use the
// same build; the algorithm travels in every frame.
func Algorithm(name string) Option {
	return func(p *protection) {
		a, err := csum.Lookup(name)
		if err != nil {
			p.err = err
		}
		p.alg = a
	}
}

// Chunk sets the bytes per checksummed frame of WithChecksum (default
// 256 KiB): the checksum of one chunk is computed while the previous one
// is on the wire, and a corrupted chunk is what is resent. Smaller chunks
// resend less; larger ones cost fewer system calls (at 64 KiB a TCP
// transfer of 1 MiB lost a fifth of its bandwidth to them here).
func Chunk(n int) Option { return func(p *protection) { p.chunk = n } }

// Segment sets WithMerkle's segment size (default 2048, at most MaxFrame).
func Segment(n int) Option { return func(p *protection) { p.seg = n } }

// TreeHash names WithMerkle's node hash (default the paper's XXH3-64; see
// tree.LookupHash).
func TreeHash(name string) Option { return func(p *protection) { p.hash = name } }

// Parity sets WithMerkle's Reed–Solomon parity segments per stripe: up to
// that many corrupted segments per stripe are rebuilt by the receiver
// with no round trip, at the cost of computing and sending the parity.
func Parity(n int) Option { return func(p *protection) { p.parity = n } }

// Rounds sets how many repair rounds a message gets before the transfer
// fails with ErrCorrupted (default 8).
func Rounds(n int) Option { return func(p *protection) { p.rounds = n } }

// WithChecksum returns c with every message cut into chunks that each
// carry a checksum; corrupted chunks are resent. Over a Comm of another
// package, whose frames this package cannot see, each message carries one
// checksum instead, and damage is detected but not repaired (see
// msglayer.go): Recv fails with ErrCorrupted.
func WithChecksum(c Comm, opts ...Option) (Comm, error) {
	return newLayer(c, &protection{mode: modeChecksum, chunk: 256 << 10, rounds: 8}, opts)
}

// WithMerkle returns c with every message protected by a Merkle tree:
// only its root crosses when nothing is wrong; otherwise the receiver
// descends the tree to find every corrupted segment at once, and they
// are resent in one round — or rebuilt from parity with none. Over a Comm
// of another package, each message carries its root, and damage is
// detected but not repaired (Recv fails with ErrCorrupted); Parity then
// is an error, since nothing would rebuild from it.
func WithMerkle(c Comm, opts ...Option) (Comm, error) {
	return newLayer(c, &protection{mode: modeMerkle, seg: tree.DefaultSegment, hash: tree.DefaultHash, rounds: 8}, opts)
}

// framed is the frame-level path of protection, the capability a Comm of
// this package has (an Endpoint, a duplicate, a layer): it is a context
// of an engine, which checks a protected message frame by frame as it
// arrives and repairs only what was damaged. The protection layers and
// Typed find it by type assertion, as database/sql finds a driver's
// optional interfaces, and do without it over any other Comm, at the
// level of whole messages.
type framed interface {
	engine() *engine
	// context is the Comm's context on the engine, and its protection
	// (nil if none).
	context() (uint32, *protection)
}

func newLayer(c Comm, p *protection, opts []Option) (Comm, error) {
	for _, o := range opts {
		o(p)
	}
	switch {
	case p.err != nil:
		return nil, p.err
	case p.mode == modeChecksum && (p.chunk < 1 || p.chunk > MaxFrame):
		return nil, fmt.Errorf("channel: chunk of %d bytes: want 1 to %d", p.chunk, MaxFrame)
	case p.mode == modeMerkle && (p.seg < 1 || p.seg > MaxFrame):
		return nil, fmt.Errorf("channel: segment of %d bytes: want 1 to %d", p.seg, MaxFrame)
	case p.parity < 0 || p.parity > tree.MaxParity:
		return nil, fmt.Errorf("channel: parity %d: want 0 to %d", p.parity, tree.MaxParity)
	case p.rounds < 1:
		return nil, fmt.Errorf("channel: %d repair rounds", p.rounds)
	}
	if p.mode == modeMerkle {
		h, err := tree.LookupHash(p.hash)
		if err != nil {
			return nil, err
		}
		p.h = h
		p.treeOpts = []tree.Option{tree.Segment(p.seg), tree.UseHash(p.hash)}
	}
	if p.mode == modeChecksum {
		if p.alg == nil {
			p.alg = csum.Default(p.chunk)
		}
		p.algIdx = algIndex(p.alg)
	}
	f, ok := c.(framed)
	if !ok {
		return newMsgLayer(c, p)
	}
	return f.engine().dup(p), nil
}

// ErrDiscarded: the receiver threw a protected message away before it was
// verified: its receive buffer was too short, or its receive was
// canceled. The sender's error is a *DiscardError.
var ErrDiscarded = errors.New("channel: the receiver discarded the message")

// ErrCanceled: a receive was canceled while its message was coming.
var ErrCanceled = errors.New("channel: the receive was canceled")

// errDiscarded completes a discarded message that nobody receives.
var errDiscarded = errors.New("channel: message discarded")

// DiscardError is a protected send's error when its receiver threw the
// message away: errors.Is(err, ErrDiscarded), and ErrTruncated or
// ErrCanceled says why.
type DiscardError struct {
	Rank int    // the receiver
	ID   uint64 // the message, as numbered by the sender
	Why  error  // ErrTruncated or ErrCanceled (ErrProtocol for a reason this build does not know)
}

func (e *DiscardError) Error() string {
	return fmt.Sprintf("channel: rank %d discarded message %d: %v", e.Rank, e.ID, e.Why)
}

// Is makes errors.Is(err, ErrDiscarded) true.
func (e *DiscardError) Is(target error) bool { return target == ErrDiscarded }

func (e *DiscardError) Unwrap() error { return e.Why }

// Flusher is a Comm whose sends may return before their receivers have
// verified what they sent: Flush waits for those. Every Comm of this
// package is one.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Flush waits until every protected send of c's rank that returned
// early (an eager send, of up to EagerLimit bytes) has been verified by
// its receiver, and returns those that failed since the last Flush (with
// ErrCorrupted, or a PeerError) — failures their receivers have reported
// too. Call it before reading Stats, or before closing, to know that no
// repair is still under way.
//
// c's own Flush does the work (Flusher); a Comm that is not a Flusher
// cannot say whether anything it sent is still under way, and Flush
// returns an error that wraps errors.ErrUnsupported.
func Flush(ctx context.Context, c Comm) error {
	if f, ok := c.(Flusher); ok {
		return f.Flush(ctx)
	}
	return fmt.Errorf("channel: Flush: a %T cannot say whether its sends are settled (it is not a channel.Flusher): %w", c, errors.ErrUnsupported)
}

// flush is Flush for every context of the engine: eager sends are the
// rank's, whichever layer sent them.
func (e *engine) flush(ctx context.Context) error {
	e.mu.Lock()
	var idle chan struct{}
	if e.eagerN > 0 {
		idle = make(chan struct{})
		e.eagerIdle = append(e.eagerIdle, idle)
	}
	e.mu.Unlock()
	e.ctl.release() // verdicts this rank holds for its peers' sends go too
	if idle != nil {
		if p := e.caps.progress; p != nil {
			p.Waiting(AnySource, 1) // the verdicts are read as they come
			defer p.Waiting(AnySource, -1)
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	e.mu.Lock()
	errs := e.eagerErrs
	e.eagerErrs = nil
	e.mu.Unlock()
	return errors.Join(errs...)
}

// algIndex numbers the checksum algorithms for the frame's flags byte.
func algIndex(a *csum.Algorithm) byte {
	for i, b := range algTable() {
		if b.Name == a.Name {
			return byte(i + 1)
		}
	}
	return 0
}

// algTable is csum.All, taken once: both ends look an algorithm up for
// every frame, and csum.All hands out a fresh copy each time.
var algTable = sync.OnceValue(csum.All)

func algByIndex(i byte) *csum.Algorithm {
	all := algTable()
	if i == 0 || int(i) > len(all) {
		return nil
	}
	return all[i-1]
}

// fold makes a 64-bit check of a checksum value (XXH3-128's halves xored).
func fold(v csum.Value) uint64 { return v.Lo ^ v.Hi }

// Stats are an endpoint's counters, for all its layers.
type Stats struct {
	MessagesSent, MessagesReceived uint64
	BytesSent, BytesReceived       uint64
	Injected                       uint64 // frames an Injector corrupted on their way out of this rank
	Detected                       uint64 // corrupted frames, segments or control frames this rank caught
	Repaired                       uint64 // corrupted parts this rank got right again (resent or rebuilt)
	Resent                         uint64 // bytes this rank sent again
	Rounds                         uint64 // repair rounds this rank asked for
	Unrepaired                     uint64 // messages this rank gave up on
}

func (e *engine) statsNow() Stats { return e.stats.snapshot() }

// snapshot reads the counters.
func (c *counters) snapshot() Stats {
	return Stats{
		MessagesSent: c.msgsOut.Load(), MessagesReceived: c.msgsIn.Load(),
		BytesSent: c.bytesOut.Load(), BytesReceived: c.bytesIn.Load(),
		Injected: c.injected.Load(), Detected: c.detected.Load(), Repaired: c.repaired.Load(),
		Resent: c.resent.Load(), Rounds: c.rounds.Load(), Unrepaired: c.bad.Load(),
	}
}

// StatsReporter is a Comm that keeps Stats (LookupStats). Every Comm of
// this package is one: an Endpoint, a duplicate and a frame-level layer
// report the counters of the endpoint under them, for all its layers; a
// layer over a Comm of another package reports its own.
type StatsReporter interface {
	Stats() Stats
}

// LookupStats returns c's counters (StatsReporter), and whether it keeps
// any: false, with zero Stats, for a Comm that does not.
func LookupStats(c Comm) (Stats, bool) {
	if r, ok := c.(StatsReporter); ok {
		return r.Stats(), true
	}
	return Stats{}, false
}

// StatsOf is LookupStats without its second result: zero Stats for a
// Comm that keeps none, which LookupStats tells apart from a Comm that
// has counted nothing yet.
func StatsOf(c Comm) Stats {
	s, _ := LookupStats(c)
	return s
}
