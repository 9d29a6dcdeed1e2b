package channel

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/wire"
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

// pending is a protected send waiting for the receiver: the control
// frames about its message, queued by the transport for the sending
// goroutine, which alone writes back.
type pending struct {
	dst   int // the receiver, whose control frames alone are the send's
	mu    sync.Mutex
	q     []ctlEvent
	first [2]ctlEvent // q's array until more are queued: most sends hear one verdict
	err   error
	wake  chan struct{}
	tick  *waitTimer // next's wait, made on the first and reused (kept when the sender is recycled)

	// An eager send (see sendProtected) has returned to its caller: its
	// sender is served from here, by arriveControl, under the engine's
	// lock — an OK verdict at once, anything else by a goroutine started
	// on the first such event.
	eager   *sender
	started bool
	since   time.Time // when its Send returned (watchEager)

	// verified: the receiver's OK was the first word about the message,
	// and arriveControl took the send out of e.sends on it — before the
	// send returned (eager) or while its goroutine awaits it. An eager
	// send that finds it set ends without e.mu. Under mu.
	verified bool
}

// watchEager makes sure the engine watches its eager sends: one that has
// heard nothing for the probe's wait gets its goroutine, which probes
// the receiver as a waiting send does — its only frame may have been
// lost, and nothing else would ever ask. The watcher runs while eager
// sends are out. Under e.mu.
func (e *engine) watchEager() {
	if e.watching {
		return
	}
	e.watching = true
	go func() {
		t := time.NewTicker(e.probe)
		defer t.Stop()
		for range t.C {
			e.mu.Lock()
			if e.eagerN == 0 || e.closed {
				e.watching = false
				e.mu.Unlock()
				return
			}
			for _, ps := range e.sends {
				if ps.eager != nil && !ps.started && time.Since(ps.since) >= e.probe {
					ps.started = true
					go ps.eager.background(ps)
				}
			}
			e.mu.Unlock()
		}
	}()
}

type ctlEvent struct {
	kind    byte
	payload []byte
	ok      bool  // its payload check held
	off     int64 // its header's Offset: for a question, its number
}

// isOK says whether ev is the receiver's "all good".
func (ev ctlEvent) isOK() bool {
	return ev.ok && ev.kind == wire.KindVerdict && len(ev.payload) == 1 && ev.payload[0] == verdictOK
}

func (p *pending) init(dst int) { p.dst, p.q = dst, p.first[:0] }

// signal wakes the goroutine waiting in next, if any. Under p.mu.
func (p *pending) signal() {
	if p.wake == nil {
		return // nobody has waited yet: next looks at q and err first
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *pending) push(ev ctlEvent) {
	p.mu.Lock()
	p.q = append(p.q, ev)
	p.signal()
	p.mu.Unlock()
}

// pushOK queues the receiver's OK, and reports whether it is the first
// word about the message (the send is then verified).
func (p *pending) pushOK(ev ctlEvent) bool {
	p.mu.Lock()
	p.verified = len(p.q) == 0 && p.err == nil
	p.q = append(p.q, ev)
	p.signal()
	verified := p.verified
	p.mu.Unlock()
	return verified
}

func (p *pending) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.signal()
	tick := p.tick
	p.mu.Unlock()
	if tick != nil { // the send's goroutine may be reading its link (next)
		tick.cutWait()
	}
}

// errNoWord: nothing came within the wait given to next.
var errNoWord = errors.New("channel: no word yet from the receiver")

// next returns the next control event, waiting for it at most wait
// (errNoWord) or until ctx is done.
//
// Over a transport whose links a goroutine can read itself
// (progresser), the send's goroutine reads its receiver's link while it
// waits, as a receive does: the verdict is then handled where it is
// read, and Send returns without a hop between goroutines. Left to the
// link's goroutine, a 1 MiB protected ping-pong over TCP lost up to a
// millisecond a message: that goroutine had to be woken for the verdict,
// the send's goroutine then had to be woken in turn, on a machine whose
// two cores were busy with the peer's next message — which the link's
// goroutine went on to read into a buffer of its own while the send's
// goroutine waited for a core.
func (p *pending) next(ctx context.Context, pr progresser, ctl *ctlQueue, wait time.Duration) (ctlEvent, error) {
	p.mu.Lock()
	if p.wake == nil {
		// Made on the first wait only: an eager send verified in
		// process never waits.
		p.wake = make(chan struct{}, 1)
	}
	if p.tick == nil {
		p.tick = newWaitTimer(p.wake)
	}
	wake, tick := p.wake, p.tick
	p.mu.Unlock()
	tick.arm(wait)
	defer tick.disarm()
	for {
		p.mu.Lock()
		if len(p.q) > 0 {
			ev := p.q[0]
			p.q = p.q[:copy(p.q, p.q[1:])]
			p.mu.Unlock()
			return ev, nil
		}
		err := p.err
		p.mu.Unlock()
		switch {
		case err != nil:
			return ctlEvent{}, err
		case ctx.Err() != nil:
			return ctlEvent{}, ctx.Err()
		case tick.expired():
			return ctlEvent{}, errNoWord
		}
		ctl.release() // this rank waits: its held verdicts go now
		if pr != nil && pr.progress(ctx, p.dst, wake, &tick.cut) {
			// It read until wake held a token (an event, the timer) or
			// ctx was done; the token is ours.
			select {
			case <-wake:
			default:
			}
			continue
		}
		// Another goroutine reads the link (a receive of this rank):
		// it delivers the receiver's word too, or, once it stops, the
		// link's goroutine does.
		if pr != nil {
			pr.waiting(p.dst, 1)
		}
		select {
		case <-wake:
		case <-ctx.Done():
		}
		if pr != nil {
			pr.waiting(p.dst, -1)
		}
	}
}

// waitTimer bounds a send's waits in next: one for all of them, made on
// the first and kept while its sender is recycled. It touches nothing of
// the pending state but the wake channel they share — a tick that comes
// late, after the wait it was for, finds the timer disarmed or its next
// deadline ahead, and is ignored — so that recycling a sender never races
// with its timer.
type waitTimer struct {
	t        *time.Timer
	wake     chan struct{}          // the pending state's
	cut      atomic.Pointer[func()] // cuts short the wait of the goroutine reading for the send (progresser)
	mu       sync.Mutex
	armed    bool
	deadline time.Time
	fired    bool
}

func newWaitTimer(wake chan struct{}) *waitTimer {
	w := &waitTimer{wake: wake}
	w.t = time.AfterFunc(time.Hour, w.fire)
	w.t.Stop()
	return w
}

func (w *waitTimer) arm(d time.Duration) {
	w.mu.Lock()
	w.armed, w.fired, w.deadline = true, false, time.Now().Add(d)
	w.mu.Unlock()
	w.t.Reset(d)
}

func (w *waitTimer) disarm() {
	w.t.Stop()
	w.mu.Lock()
	w.armed = false
	w.mu.Unlock()
}

func (w *waitTimer) expired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

func (w *waitTimer) fire() {
	w.mu.Lock()
	if !w.armed || time.Now().Before(w.deadline) {
		w.mu.Unlock()
		return // a tick of a wait that is over
	}
	w.fired = true
	select {
	case w.wake <- struct{}{}:
	default:
	}
	w.mu.Unlock()
	w.cutWait()
}

// cutWait cuts short the wait of the goroutine reading the link for the
// send, if one is.
func (w *waitTimer) cutWait() {
	if c := w.cut.Load(); c != nil {
		(*c)()
	}
}

// Verdicts, the first byte of a KindVerdict payload.
const (
	verdictOK        = 0
	verdictRanges    = 1 // checksum: resend these byte ranges (offset, length uvarints)
	verdictSegments  = 2 // merkle: resend these segments (uvarints)
	verdictFail      = 3 // the receiver gave up
	verdictDiscarded = 4 // the receiver threw the message away; then the reason (discardTruncated…)
	verdictUnknown   = 5 // the receiver never opened the message: send it again
)

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

// Asks, the first byte of a KindAsk payload.
const (
	askNodes = 0 // then a tree.Request
	askRoot  = 1 // the trailer again
)

// merkleChunk is the payload of a Merkle message's frames: as many whole
// segments as a frame holds, or over a transport that writes in pieces
// (pieced: a batchSender, TCP) as a piece holds (writePiece). Each frame
// is hashed while the receiver copies out another (transmit), so that a
// large message's hashing overlaps its transfer, where in one frame of
// MaxFrame the root would be computed before any byte was written
// (BenchmarkProtectionOverhead/transport=tcp/size=1MiB measures Merkle
// over unprotected). In process, where the receiver's copy is the write,
// smaller frames gain nothing.
func merkleChunk(seg int, pieced bool) int {
	n := MaxFrame
	if pieced {
		n = writePiece
	}
	return max(seg, n/seg*seg)
}

// pieced says whether e's transport writes several frames in one call,
// in pieces of writePiece (a batchSender: merkleChunk, and held
// verdicts, ctl.go).
func (e *engine) pieced() bool {
	_, ok := e.tx.(batchSender)
	return ok
}

// rootInline says whether a Merkle message of n bytes goes as one frame
// with its root in the header (transmit), rather than in frames followed
// by a trailer with the root.
func (p *protection) rootInline(n int, pieced bool) bool {
	return n <= merkleChunk(p.seg, pieced) && p.parity == 0 && p.h.Size() == 8
}

// The flags of a frame (wire.Header.Flags, one byte of the header) mean
// something of their own in each kind of frame, and are read only once
// the kind is known:
//   - a protected message's own frames (KindMsg, KindData, KindRepair):
//     flagStamped, and under checksums the algorithm's number
//     (algIndex), or under Merkle flagRootInline on a message's only
//     frame;
//   - KindVerdict: flagTriple.
//
// So flagRootInline and flagTriple may both be 1, as an algorithm's
// number may: a verdict never reaches a guard (arriveNow hands KindMsg
// and KindData to arriveData, which opens the guard), and only a
// verdict is untripled (arriveControl looks at the flags of KindVerdict
// alone). A flag that two kinds of frame had to share would need a bit
// of its own, as flagStamped has.

// flagRootInline, in the flags of a Merkle message's only frame, says
// that its Sum is the root (64-bit hashes): no trailer follows.
const flagRootInline = 1

// flagStamped, in the flags of a protected message's frames, says that a
// datatype stamp goes with it (Typed): a receiver that has none, or a
// corrupted one, asks for it again before it accepts the message.
const flagStamped = 0x80

// flagTriple, in the flags of a verdict, says that its payload is the
// final verdict written three times: when the payload check fails, the
// sender takes the copy whose triple has the check the header (which has
// a check of its own) carries, so that a verdict damaged on the way still
// ends the transfer with the outcome the receiver decided — the two
// sides agree without a round trip more. (Resend lists are asked for
// again instead.) It is 1 as flagRootInline is: the two are flags of
// different kinds of frame (see above).
const flagTriple = 1

// untriple returns the body of a triple payload whose check is sum: the
// payload's first third if it is whole, else the copy, if any, that
// tripled has that check.
func untriple(p []byte, sum uint64, ok bool) ([]byte, bool) {
	if len(p) == 0 || len(p)%3 != 0 {
		return nil, false
	}
	n := len(p) / 3
	if ok {
		return p[:n], true
	}
	for c := range 3 {
		body := p[c*n : (c+1)*n]
		if xxh3.Hash(bytes.Repeat(body, 3)) == sum {
			return body, true
		}
	}
	return nil, false
}

// probeFirst and probeMax time the sender's probes: a protected send
// that has heard nothing from its receiver for probeFirst after its last
// frame asks again (KindAgain), as if a control frame had come
// corrupted; the receiver answers with its last control frame or, if it
// has said nothing yet, takes the rest of the message as lost (links
// keep order: every frame sent before the probe has come) and asks for
// it. The wait doubles up to 8 times the first (WithProbe); after
// maxProbes unanswered the send ends with ErrSilent (about 7.75 s at the
// default wait). One lost frame costs one round trip after the timer,
// not a deadline.
const (
	DefaultProbe = 250 * time.Millisecond
	maxProbes    = 6
)

// askStamp, in a KindAsk, asks for the message's datatype stamp again.
const askStamp = 2

// Directions of KindAgain, in its Offset field.
const (
	againToSender   = 0
	againToReceiver = 1
)

// sender is one protected send in progress.
type sender struct {
	e     *engine
	p     *protection
	dst   int
	h     wire.Header // the message's header (kind, offset, length vary)
	data  []byte
	alg   *csum.Algorithm
	t     *tree.Tree
	last  ctlFrame // the last control frame sent, for KindAgain
	stamp []byte   // the datatype stamp sent ahead of the message, if any (asked again)
	eager bool     // data is the sender's own copy (eager send)
	own   *[]byte  // that copy, as eagerCopies keeps it
	pre   preHash  // its checks, computed before its turn, if they were
	// rootBuf holds the trailer's root, which last keeps for KindAgain.
	rootBuf [3 + 16]byte
	ps      pending // its state in e.sends: one allocation for both
	// inCall, if set, is the transport whose delivery of the message's
	// only frame had the receiver verify it (frameOne): the send is over.
	inCall *localTx
	first  bool // in sendProtectedIn's transmit: frameOne may set inCall
}

// Eager protected sends: a message of up to EagerLimit bytes is copied
// (the sender's retransmission buffer) and Send returns once its frames
// are out, as MPI's eager sends return before the receiver has the
// message; the receiver's verdict is handled in the background. Without
// this, a small protected message costs a second one-way trip (the
// verdict) on the sender's side of every ping-pong. Larger messages
// wait for the verdict, repairing from the caller's buffer. At most
// eagerBudget bytes of copies are kept per rank; beyond, sends wait.
const (
	EagerLimit  = 64 << 10
	eagerBudget = 16 << 20
)

func (e *engine) sendProtected(ctx context.Context, p *protection, ctxID uint32, dst int, tag int64, data, stamp []byte) error {
	return e.sendProtectedIn(ctx, e.turnFor(dst), p, ctxID, dst, tag, data, stamp)
}

// sendProtectedIn is sendProtected in the turn of ticket t, which it
// ends once the message's frames are out (or gives up).
func (e *engine) sendProtectedIn(ctx context.Context, t ticket, p *protection, ctxID uint32, dst int, tag int64, data, stamp []byte) error {
	if dst == e.rank { // nothing crosses a wire
		return e.sendIn(ctx, t, ctxID, dst, tag, data, stamp)
	}
	var pre preHash
	if t.q != nil {
		// A send posted behind others (Isend) hashes while it waits for
		// its turn, on a processor the writes before it leave idle.
		pre.compute(e, p, data)
	}
	if err := t.wait(ctx); err != nil {
		return err
	}
	if err := e.ready(ctx, dst); err != nil {
		t.done()
		return err
	}
	id := e.nextID.Add(1)
	e.mu.Lock()
	s := newSender()
	s.e, s.p, s.dst, s.data, s.stamp, s.pre = e, p, dst, data, stamp, pre
	s.h = wire.Header{Kind: wire.KindMsg, Ctx: ctxID, Tag: tag, ID: id, Total: int64(len(data)), Seq: e.nextSeq(dst, ctxID)}
	ps := &s.ps
	ps.init(dst)
	e.sends[id] = ps
	e.mu.Unlock()
	err := e.sendStamp(ctx, dst, &s.h, stamp)
	if err == nil {
		s.first = true // frameOne may end it in the call
		err = s.transmit(ctx)
		s.first = false
	}
	t.done() // its frames are out: the next send to dst may write
	if lt := s.inCall; lt != nil {
		// Verified as its frame was delivered: it returns nil whatever
		// came since — its peer lost just after, say, which failed the
		// pending send meanwhile — since the message was received. (The
		// OK handed to the engine, as before frameOne, made such a send
		// fail if it was eager.)
		e.mu.Lock()
		if e.sends[id] == ps {
			delete(e.sends, id)
		}
		e.mu.Unlock()
		lt.handed()
		recycleSender(s)
		e.stats.msgsOut.Add(1)
		e.stats.bytesOut.Add(uint64(len(data)))
		return nil
	}
	if err != nil && !errors.Is(err, ErrPeerLost) {
		// Its opener may not have gone: the receiver, which matches this
		// sender's messages in order, is told to pass over it.
		e.abandon(dst, &s.h)
	}
	if err == nil && len(data) <= EagerLimit {
		var left bool
		if left, err = s.leave(ps); left {
			e.stats.msgsOut.Add(1)
			e.stats.bytesOut.Add(uint64(len(data)))
			return nil
		}
	}
	if err == nil {
		err = s.await(ctx, ps)
	}
	s.finish(ps)
	if err != nil {
		return err
	}
	e.stats.msgsOut.Add(1)
	e.stats.bytesOut.Add(uint64(len(data)))
	return nil
}

// leave ends the call of an eager send (of up to EagerLimit bytes, its
// frames out): at once if its receiver has verified it already — in
// process it always has: the verdict comes back inside the last frame's
// write (a one-frame send has ended before, frameOne) — else with a copy
// of its data, which serves the receiver's repairs once the caller has
// its buffer back; the copy is counted in eagerBytes. It reports false, with the send's error if it failed
// meanwhile, when the send is to wait for its verdict instead: the
// copies kept are at eagerBudget, or it was verified or failed while the
// copy was made. A send that left is not to be used by the caller after.
func (s *sender) leave(ps *pending) (bool, error) {
	e := s.e
	ps.mu.Lock()
	verified := ps.verified // and out of e.sends: nothing else is queued, nothing fails it
	ps.mu.Unlock()
	if verified {
		recycleSender(s) // out of e.sends, and no goroutine serves it
		return true, nil
	}
	n := int64(len(s.data))
	if e.eagerBytes.Add(n) > eagerBudget {
		e.eagerBytes.Add(-n)
		return false, nil
	}
	s.eager = true // its bytes are counted in eagerBytes (finish, eagerEnd)
	own := eagerCopy(s.data)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := ps.err; err != nil || e.sends[s.h.ID] != ps {
		keepEagerCopy(own) // failed, or verified (over TCP), meanwhile: await says which
		return false, err
	}
	s.data, s.own = *own, own // nothing reads them yet: ps.eager is not set
	ps.eager = s
	e.eagerN++
	if len(ps.q) > 0 { // the receiver has spoken, and not "OK" (that first would have verified it)
		ps.started = true
		go s.background(ps)
	} else {
		ps.since = time.Now()
		e.watchEager()
	}
	return true, nil
}

// finish forgets a send that its own goroutine served to the end: its
// pending state and its eager copy; s is recycled, and not to be used
// after.
func (s *sender) finish(ps *pending) {
	e := s.e
	if s.eager {
		e.eagerBytes.Add(-int64(len(s.data)))
	}
	e.mu.Lock()
	if e.sends[s.h.ID] == ps {
		delete(e.sends, s.h.ID)
	}
	e.mu.Unlock()
	recycleSender(s)
}

// background serves an eager send's receiver after Send has returned.
// A failure is the receiver's to report (its Recv fails); the sender
// counts it (Stats.Unrepaired) and Flush returns it.
func (s *sender) background(ps *pending) {
	err := s.await(context.Background(), ps)
	s.e.mu.Lock()
	s.e.eagerEnd(s.h.ID, ps, err)
	s.e.mu.Unlock()
}

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
		if p, ok := e.tx.(progresser); ok {
			p.waiting(AnySource, 1) // the verdicts are read as they come
			defer p.waiting(AnySource, -1)
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

// transmit sends the message: data frames, then for Merkle protection
// the parity and the root. A checksummed frame is summed just before it
// goes (its check is in its header); a Merkle frame's segments are hashed
// into the tree once it is written (when the next frame is to go, and
// after the last), while the receiver copies it out: over TCP, one frame
// a write (merkleChunk), the first frame leaves at once and the last
// one's hashing hides behind its copy at the receiver: only the last
// frame's hashing is left on a large message's way
// (BenchmarkProtectionOverhead/transport=tcp/size=1MiB, merkle/none).
// (Where several frames go in one write, or in process, where the
// receiver's copy is the write, the order changes nothing.)
func (s *sender) transmit(ctx context.Context) error {
	h := s.h
	switch s.p.mode {
	case modeChecksum:
		s.alg = s.p.alg
		h.Flags = s.p.algIdx | s.stampFlag()
		sum := func(off int64, p []byte) uint64 {
			if s.pre.n > 0 {
				return s.pre.sum(off / int64(s.p.chunk))
			}
			return fold(s.alg.Sum(p))
		}
		if len(s.data) <= s.p.chunk { // one frame, as sendData would send it
			h.Plen, h.Sum = len(s.data), sum(0, s.data)
			return s.frameOne(ctx, &h)
		}
		return s.e.sendData(ctx, s.dst, h, s.data, s.p.chunk, sum)
	}
	seg := s.p.seg
	pieced := s.e.pieced()
	chunk := merkleChunk(seg, pieced)
	if s.e.ctl.inline && len(s.data) > hashPiece && runtime.GOMAXPROCS(0) > 1 {
		return s.transmitBeside(ctx, chunk)
	}
	if s.p.rootInline(len(s.data), pieced) {
		// One frame: its root rides in its header (which has a check of
		// its own) instead of a trailer frame — a frame fewer for every
		// small message. The tree is made only if the receiver descends
		// (merkleTree).
		root := s.pre.root
		if !s.pre.haveRoot {
			v, err := s.p.h.Root(s.data, seg)
			if err != nil {
				return err
			}
			root = v.Lo
		}
		h.Flags, h.Sum, h.Plen = flagRootInline|s.stampFlag(), root, len(s.data)
		return s.frameOne(ctx, &h)
	}
	h.Flags = s.stampFlag()
	if s.pre.t != nil { // built before its turn
		s.t = s.pre.t
		if err := s.e.sendData(ctx, s.dst, h, s.data, chunk, nil); err != nil {
			return err
		}
		return s.transmitRest(ctx)
	}
	t, err := s.p.newTree(int64(len(s.data)))
	if err != nil {
		return err
	}
	s.t = t
	hashed := 0 // segments hashed: those of the frames already written
	err = s.e.sendData(ctx, s.dst, h, s.data, chunk, func(off int64, p []byte) uint64 {
		hi := int(off / int64(seg))
		if hi > hashed {
			t.HashSegments(s.data[:off], hashed, hi)
			hashed = hi
		}
		return 0
	})
	if err != nil {
		return err
	}
	if n := max(1, (len(s.data)+seg-1)/seg); hashed < n {
		t.HashSegments(s.data, hashed, n)
	}
	t.Finish()
	return s.transmitRest(ctx)
}

// frameOne sends the message's only frame, h over s.data. In process,
// where delivering it is a call into the receiver (localTx.sendSync),
// s.inCall is set if the receiver verified the message in that call:
// its OK is this send's to take (sendProtectedIn), not a control frame.
// Only in the send's first transmit (s.first): a frame sent again (a
// verdictUnknown) is answered as any other, in await.
func (s *sender) frameOne(ctx context.Context, h *wire.Header) error {
	if lt, ok := s.e.tx.(*localTx); ok && s.first && s.dst != s.e.rank {
		verified, err := lt.sendSync(ctx, s.dst, *h, s.data)
		if verified {
			s.inCall = lt
		}
		return err
	}
	return s.e.frame(ctx, s.dst, h, s.data)
}

// preHash is a protected message's checks computed before its turn to
// write (sendProtectedIn): the checksums of its chunks, the root of a
// Merkle message that goes in one frame with its root inline, or a
// larger Merkle message's whole tree. In a window of Isends, the hashing
// of the next messages then overlaps the writes of the ones before,
// instead of starting only once they are out. (In process, Merkle
// messages are left to transmit: transmitBeside.)
type preHash struct {
	n        int       // chunk checksums computed (0: none)
	few      [8]uint64 // up to 8 of them (2 MiB in the default chunks)
	more     []uint64  // or all of them, for more
	root     uint64    // the root of a one-frame Merkle message
	haveRoot bool
	t        *tree.Tree // the finished tree of a larger Merkle message
}

// sum is the checksum of chunk i (i < n).
func (pre *preHash) sum(i int64) uint64 {
	if pre.more != nil {
		return pre.more[i]
	}
	return pre.few[i]
}

// compute fills pre for data as transmit would send it under p, where
// it can; what it leaves out transmit computes in its turn.
func (pre *preHash) compute(e *engine, p *protection, data []byte) {
	switch {
	case p.mode == modeChecksum:
		n := max(1, (len(data)+p.chunk-1)/p.chunk)
		sums := pre.few[:]
		if n > len(pre.few) {
			pre.more = make([]uint64, n)
			sums = pre.more
		}
		for i := range n {
			sums[i] = fold(p.alg.Sum(data[i*p.chunk : min((i+1)*p.chunk, len(data))]))
		}
		pre.n = n
	case e.ctl.inline:
		// In process the Merkle paths differ (transmitBeside).
	case p.rootInline(len(data), e.pieced()):
		if root, err := p.h.Root(data, p.seg); err == nil {
			pre.root, pre.haveRoot = root.Lo, true
		}
	default:
		pre.t, _ = p.buildTree(data)
	}
}

// transmitBeside is transmit's Merkle path in process, for messages of
// more than a hashPiece: the frames go at once — their copies into the
// receiver, which hashes each piece as it lands, run on this goroutine —
// while a helper goroutine hashes the sender's segments on the processor
// the copy leaves idle, and the root follows in the trailer. Hashed
// before the copy, as over a wire, the sender's tree added a pass over
// the message to the copy's time: a 1 MiB message went at 0.54 of the
// unprotected rate (BenchmarkBandwidth).
//
// The segments are handed out in batches from a counter, and this
// goroutine takes what is left once its frames are out: a helper that a
// busy or slow-to-wake processor starts late costs what hashing here
// would have, never a wait for it to start (helperIdle, helperLate).
func (s *sender) transmitBeside(ctx context.Context, chunk int) error {
	t, err := s.p.newTree(int64(len(s.data)))
	if err != nil {
		return err
	}
	s.t = t
	b := besides.Get().(*beside)
	b.t, b.data, b.n, b.per = t, s.data, t.Segments(), max(1, besideBatch/s.p.seg)
	b.next.Store(0)
	b.state.Store(helperIdle)
	b.helper.Add(1)
	go b.run()
	h := s.h
	h.Flags = s.stampFlag()
	err = s.e.sendData(ctx, s.dst, h, s.data, chunk, nil)
	b.hash()
	if !b.state.CompareAndSwap(helperIdle, helperLate) {
		b.helper.Wait() // it hashes its last batch, from the caller's buffer
		b.recycle()
	} // else the helper finds itself too late when it runs, and puts b back
	if err != nil {
		return err
	}
	t.Finish()
	return s.transmitRest(ctx)
}

// beside is the work transmitBeside shares with its helper. The last of
// the two to use it puts it back in besides: the caller, once its helper
// is done, or a helper that starts too late, which the caller does not
// wait for.
type beside struct {
	t      *tree.Tree
	data   []byte
	n, per int          // segments, and segments per batch
	next   atomic.Int64 // the first segment of the next batch
	state  atomic.Int32 // the helper's: helperIdle, helperBusy or helperLate
	helper sync.WaitGroup
	run    func() // help, bound once: a go statement of a method allocates its closure
}

// besides keeps transmitBeside's shared work for the next message. (Its
// New is set in init: help refers to besides.)
var besides sync.Pool

func init() {
	besides.New = func() any {
		b := new(beside)
		b.run = b.help
		return b
	}
}

// recycle puts b back in besides, its references to the message dropped.
func (b *beside) recycle() {
	b.t, b.data = nil, nil
	besides.Put(b)
}

// hash hashes batches of segments until none is left.
func (b *beside) hash() {
	for {
		lo := int(b.next.Add(int64(b.per))) - b.per
		if lo >= b.n {
			return
		}
		b.t.HashSegments(b.data, lo, min(lo+b.per, b.n))
	}
}

// help is the helper goroutine: it hashes only if the caller has not
// finished before it started.
func (b *beside) help() {
	if !b.state.CompareAndSwap(helperIdle, helperBusy) {
		b.helper.Done()
		b.recycle() // the caller is gone
		return
	}
	b.hash()
	b.helper.Done()
}

// besideBatch is the bytes of segments transmitBeside's goroutines take
// at a time.
const besideBatch = 64 << 10

// States of transmitBeside's helper: not started yet, hashing, or too
// late (the caller hashed everything; it returns at once when it runs).
const (
	helperIdle = iota
	helperBusy
	helperLate
)

// transmitRest sends what follows a Merkle message's data frames, its
// tree built: the parity, then the root.
func (s *sender) transmitRest(ctx context.Context) error {
	seg := s.p.seg
	if s.p.parity > 0 {
		par, err := tree.ParityLayout(int64(len(s.data)), seg, s.p.parity)
		if err != nil {
			return err
		}
		for st := range par.Stripes() {
			shards, err := par.EncodeStripe(s.data, st)
			if err != nil {
				return err
			}
			for k, sh := range shards {
				ph := s.ctlHeader(wire.KindParity)
				ph.Offset = int64(st*par.P + k)
				if err := s.control(ctx, ph, sh, false); err != nil {
					return err
				}
			}
		}
	}
	return s.sendTrailer(ctx)
}

// stampFlag is flagStamped if a stamp goes with the message.
func (s *sender) stampFlag() byte {
	if s.stamp != nil {
		return flagStamped
	}
	return 0
}

func (s *sender) ctlHeader(kind byte) wire.Header {
	return wire.Header{Kind: kind, Ctx: s.h.Ctx, Tag: s.h.Tag, ID: s.h.ID, Total: s.h.Total, Seq: s.h.Seq}
}

// control sends a control frame, remembered for KindAgain if keep.
func (s *sender) control(ctx context.Context, h wire.Header, payload []byte, keep bool) error {
	h.Plen, h.Sum = len(payload), xxh3.Hash(payload)
	if keep {
		s.last = ctlFrame{s.dst, h, payload}
	}
	return s.e.frame(ctx, s.dst, &h, payload)
}

func (s *sender) sendTrailer(ctx context.Context) error {
	t := s.merkleTree()
	return s.control(ctx, s.ctlHeader(wire.KindTrailer), tree.AppendRoot(s.rootBuf[:0], t.Root(), t.Hash().Size()), true)
}

// merkleTree returns the message's tree (nil under checksum protection),
// made now for a message that went as one frame with its root inline:
// its receiver descends.
func (s *sender) merkleTree() *tree.Tree {
	if s.t == nil && s.p.mode == modeMerkle {
		s.t, _ = s.p.buildTree(s.data)
	}
	return s.t
}

// await serves the receiver until its verdict: answers to its descent,
// resent parts, its control frames asked again when they came corrupted.
// The exchanges are bounded, so that a link that corrupts everything
// ends in ErrCorrupted, never in an endless conversation.
func (s *sender) await(ctx context.Context, ps *pending) error {
	pr, _ := s.e.tx.(progresser) // the receiver's word is read as it comes (next)
	limit := 64 + 8*s.p.rounds
	if s.p.mode == modeMerkle {
		limit += 4 * treeDepth(int64(len(s.data)), s.p.seg) * s.p.rounds
	}
	first := s.e.probe
	wait, probes := first, 0
	for n := 0; n <= limit; n++ {
		ev, err := ps.next(ctx, pr, s.e.ctl, wait)
		if errors.Is(err, errNoWord) {
			if probes++; probes > maxProbes {
				s.e.abandon(s.dst, &s.h)
				return fmt.Errorf("%w after %d probes (message %d to rank %d; it may have arrived)", ErrSilent, maxProbes, s.h.ID, s.dst)
			}
			wait = min(2*wait, 8*first)
			h := s.ctlHeader(wire.KindAgain)
			h.Offset = againToReceiver
			if err := s.control(ctx, h, nil, false); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				s.e.abandon(s.dst, &s.h)
			}
			return err
		}
		wait, probes = first, 0
		if !ev.ok { // counted on arrival
			h := s.ctlHeader(wire.KindAgain)
			h.Offset = againToReceiver
			if err := s.control(ctx, h, nil, false); err != nil {
				return err
			}
			continue
		}
		switch ev.kind {
		case wire.KindVerdict:
			done, err := s.verdict(ctx, ev.payload)
			if done || err != nil {
				return err
			}
		case wire.KindAsk:
			if err := s.ask(ctx, ev.payload, ev.off); err != nil {
				return err
			}
		case wire.KindAgain:
			if s.last.payload == nil && s.last.h.Kind == 0 {
				continue
			}
			h := s.last.h
			if err := s.e.frame(ctx, s.dst, &h, s.last.payload); err != nil {
				return err
			}
		}
	}
	s.e.abandon(s.dst, &s.h)
	return fmt.Errorf("%w: message %d to rank %d: no verdict after %d exchanges", ErrCorrupted, s.h.ID, s.dst, limit)
}

// verdict acts on the receiver's verdict; done when the transfer is over.
func (s *sender) verdict(ctx context.Context, b []byte) (done bool, err error) {
	if len(b) == 0 {
		return true, fmt.Errorf("%w: empty verdict from rank %d", ErrProtocol, s.dst)
	}
	switch b[0] {
	case verdictOK:
		return true, nil
	case verdictFail:
		return true, fmt.Errorf("%w: rank %d gave up on message %d", ErrCorrupted, s.dst, s.h.ID)
	case verdictUnknown:
		// Its first frame was lost: the whole message again, under the
		// same id (the receiver opens it as new).
		s.e.stats.resent.Add(uint64(len(s.data)))
		if err := s.e.sendStamp(ctx, s.dst, &s.h, s.stamp); err != nil {
			return true, err
		}
		return false, s.transmit(ctx)
	case verdictDiscarded:
		why := ErrProtocol
		if len(b) == 2 && b[1] == discardTruncated {
			why = ErrTruncated
		} else if len(b) == 2 && b[1] == discardCanceled {
			why = ErrCanceled
		}
		return true, &DiscardError{Rank: s.dst, ID: s.h.ID, Why: why}
	case verdictRanges, verdictSegments:
		ranges, err := s.parseResend(b)
		if err != nil {
			return true, err
		}
		for _, r := range ranges {
			for off := r[0]; off < r[0]+r[1]; {
				n := min(r[0]+r[1]-off, int64(MaxFrame))
				h := s.ctlHeader(wire.KindRepair)
				h.Offset, h.Plen = off, int(n)
				p := s.data[off : off+n]
				if s.alg != nil {
					h.Flags, h.Sum = s.p.algIdx, fold(s.alg.Sum(p))
				}
				if err := s.e.frame(ctx, s.dst, &h, p); err != nil {
					return true, err
				}
				s.e.stats.resent.Add(uint64(n))
				off += n
			}
		}
		return false, nil
	}
	return true, fmt.Errorf("%w: verdict %d from rank %d", ErrProtocol, b[0], s.dst)
}

// parseResend reads the parts a verdict asks for as byte ranges, checking
// each against the message (a peer's word is not trusted for sizes).
func (s *sender) parseResend(b []byte) ([][2]int64, error) {
	r := b[1:]
	n, k := binary.Uvarint(r)
	if k <= 0 || n > uint64(len(r)) {
		return nil, fmt.Errorf("%w: resend list from rank %d", ErrProtocol, s.dst)
	}
	r = r[k:]
	total := int64(len(s.data))
	out := make([][2]int64, 0, n)
	for range n {
		var a, l uint64
		if a, k = binary.Uvarint(r); k <= 0 {
			return nil, fmt.Errorf("%w: resend list from rank %d", ErrProtocol, s.dst)
		}
		r = r[k:]
		switch b[0] {
		case verdictRanges:
			if l, k = binary.Uvarint(r); k <= 0 {
				return nil, fmt.Errorf("%w: resend list from rank %d", ErrProtocol, s.dst)
			}
			r = r[k:]
			if a > uint64(total) || l == 0 || l > uint64(total)-a {
				return nil, fmt.Errorf("%w: rank %d asks for bytes %d+%d of %d", ErrProtocol, s.dst, a, l, total)
			}
			out = append(out, [2]int64{int64(a), int64(l)})
		default:
			t := s.merkleTree()
			if t == nil || a >= uint64(t.Segments()) {
				return nil, fmt.Errorf("%w: rank %d asks for segment %d", ErrProtocol, s.dst, a)
			}
			off, sn := t.SegmentRange(int(a))
			out = append(out, [2]int64{off, max(sn, 0)})
		}
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the resend list from rank %d", ErrProtocol, len(r), s.dst)
	}
	return slices.DeleteFunc(out, func(r [2]int64) bool { return r[1] == 0 }), nil
}

// ask answers the receiver's descent.
func (s *sender) ask(ctx context.Context, b []byte, asked int64) error {
	if len(b) > 0 && b[0] == askStamp {
		if s.stamp == nil {
			return fmt.Errorf("%w: rank %d asks for the stamp of a message without one", ErrProtocol, s.dst)
		}
		return s.e.sendStamp(ctx, s.dst, &s.h, s.stamp)
	}
	t := s.merkleTree()
	if t == nil || len(b) == 0 {
		return fmt.Errorf("%w: a question from rank %d about a message without a tree", ErrProtocol, s.dst)
	}
	if b[0] == askRoot {
		return s.sendTrailer(ctx)
	}
	var q tree.Request
	if err := q.UnmarshalBinary(b[1:]); err != nil {
		return err
	}
	a, err := t.Answer(q)
	if err != nil {
		return err
	}
	h := s.ctlHeader(wire.KindAnswer)
	h.Offset = asked // the question's number, which the receiver checks
	return s.control(ctx, h, a.AppendBinary(nil, t.Hash().Size()), true)
}

// arriveControl routes a control frame to the send or the message it is
// about; one about nothing known (late, or after a failure) is dropped.
// The payload is lent for the call (arriveNow's buffer): what is kept of
// it is copied (keep).
func (e *engine) arriveControl(src int, h wire.Header, payload []byte, ok bool) error {
	k := msgKey{src, h.ID}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !ok {
		// Counted here, on arrival, even when the frame turns out to be
		// about nothing any more (a verdict asked for twice, a send that
		// has finished): every damaged frame is caught, wherever it goes.
		e.stats.detected.Add(1)
	}
	if h.Kind == wire.KindStamp {
		if len(payload) > maxStampSize {
			return fmt.Errorf("%w: rank %d sent a datatype stamp of %d bytes, the limit is %d", ErrProtocol, src, len(payload), maxStampSize)
		}
		if m := e.inflight.get(src, h.ID); m != nil { // asked again
			if m.g != nil && !m.g.discarded {
				m.g.onStamp(e, m, stamp{keep(payload), ok})
			}
			return nil
		}
		if e.stamps == nil {
			e.stamps = map[msgKey]stamp{}
		}
		if len(e.stamps) >= maxStamps {
			return fmt.Errorf("%w: rank %d sent %d stamps without their messages", ErrProtocol, src, len(e.stamps))
		}
		if len(payload) > maxStampSize {
			return fmt.Errorf("%w: rank %d sent a datatype stamp of %d bytes, the limit is %d", ErrProtocol, src, len(payload), maxStampSize)
		}
		e.stamps[k] = stamp{keep(payload), ok}
		return nil
	}
	toSender := h.Kind == wire.KindAsk || h.Kind == wire.KindVerdict || h.Kind == wire.KindAgain && h.Offset == againToSender
	if toSender {
		if ps := e.sends[h.ID]; ps != nil && ps.dst == src {
			ev := ctlEvent{h.Kind, payload, ok, h.Offset}
			if h.Kind == wire.KindVerdict && h.Flags == flagTriple {
				ev.payload, ev.ok = untriple(payload, h.Sum, ok)
			}
			if ps.eager != nil && !ps.started && ev.isOK() {
				e.eagerEnd(h.ID, ps, nil) // the usual end of an eager send: no goroutine
				keepEagerCopy(ps.eager.own)
				recycleSender(ps.eager) // out of e.sends, its Send returned, no goroutine
				return nil
			}
			if !ev.isOK() {
				ev.payload = keep(ev.payload)
				ps.push(ev)
			} else {
				ev.payload = okVerdict    // what the lent payload says, shared
				served := ps.eager != nil // read first: once pushed, the send may end and be recycled
				verified := ps.pushOK(ev)
				if !served {
					// Its own goroutine serves it. Verified, nothing more
					// about it matters: it leaves e.sends, and its
					// goroutine ends it without e.mu (leave) — ps is not
					// to be read here any more.
					if verified {
						delete(e.sends, h.ID)
					}
					return nil
				}
			}
			if ps.eager != nil && !ps.started {
				ps.started = true
				go ps.eager.background(ps)
			}
		}
		return nil
	}
	m := e.inflight.get(src, h.ID)
	if m == nil && h.Kind == wire.KindAbort {
		if w := e.opened(src); h.ID > e.forgotten[src] && h.ID >= w.base && !w.seen(h.ID) {
			e.passOver(src, h) // abandoned before its opener came: the next ones go on
		}
		return nil
	}
	if m == nil {
		if h.Kind == wire.KindAgain {
			if v, ok := e.recentVerdict(k); ok { // the verdict came corrupted after all
				e.ctl.push(v.dst, v.h, v.payload)
			} else if w := e.opened(src); h.ID > e.forgotten[src] && h.ID >= w.base && !w.seen(h.ID) && e.awaited(src, h) {
				// A probe about a message whose opener was lost, and
				// which later ones wait for (order): sent again, it is
				// matched in its place.
				e.ctl.push(src, wire.Header{Kind: wire.KindVerdict, Ctx: h.Ctx, Tag: h.Tag, ID: h.ID, Total: h.Total}, unknownVerdict)
			} else if h.ID > e.forgotten[src] && h.ID >= w.base && h.ID > w.max {
				// A probe about a message this rank never opened (it
				// would remember it: no later one of src's has been
				// forgotten) and after the last it opened: its first
				// frame was lost. The sender sends it again, and it is
				// matched in its place.
				e.ctl.push(src, wire.Header{Kind: wire.KindVerdict, Ctx: h.Ctx, Tag: h.Tag, ID: h.ID, Total: h.Total}, unknownVerdict)
			} else if h.ID > e.forgotten[src] && h.ID >= w.base && !w.seen(h.ID) {
				// Lost while later messages came: sent again now it
				// would be matched out of order, so the send fails.
				e.ctl.push(src, wire.Header{Kind: wire.KindVerdict, Ctx: h.Ctx, Tag: h.Tag, ID: h.ID, Total: h.Total, Flags: flagTriple}, failTriple)
			}
		}
		return nil
	}
	if h.Kind == wire.KindAbort {
		e.complete(m, fmt.Errorf("%w: rank %d abandoned message %d", ErrCorrupted, src, h.ID))
		return nil
	}
	if m.g == nil || m.discard {
		return nil
	}
	switch h.Kind {
	case wire.KindTrailer:
		m.g.onTrailer(e, m, payload, ok)
	case wire.KindAnswer:
		m.g.onAnswer(e, m, payload, ok, h.Offset)
	case wire.KindParity:
		m.g.onParity(e, m, h, payload, ok)
	case wire.KindAgain:
		m.g.resendLast(e, m)
	}
	return nil
}

// keep returns a copy of a lent payload, to keep (nil if empty, as an
// empty payload was read before payloads were lent).
func keep(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

// maxStamps bounds the stamps waiting for their messages, and
// maxStampSize each one (a signature stamp and a description of at most
// maxDescription bytes): 16 MiB in all at most.
const (
	maxStamps    = 1024
	maxStampSize = 16 << 10
)

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

// eagerCopies keeps the copies of eager sends that ended verified for
// the next eager sends: over TCP the verdict comes after Send has
// returned, so every eager send copies its data, and a fresh copy each
// time was most of what a protected send allocated (at 64 KiB, 137 KB a
// round trip). Only a copy whose send ended without a goroutine of its
// own goes back: nothing else holds it then.
//
// A copy travels in the pointer that the pool holds (sender.own), so
// that giving it back allocates nothing: putting the address of a slice
// made anew allocated its header, two objects a round trip over TCP.
var eagerCopies sync.Pool // *[]byte

// eagerCopy returns a copy of data, in a kept buffer if one is big enough.
func eagerCopy(data []byte) *[]byte {
	p, ok := eagerCopies.Get().(*[]byte)
	switch {
	case !ok:
		b := bytes.Clone(data)
		return &b
	case cap(*p) >= len(data):
		*p = append((*p)[:0], data...)
	default:
		*p = bytes.Clone(data)
	}
	return p
}

// keepEagerCopy gives a finished eager send's copy back (nil: none). The
// sender is forgotten, or recycled, after it: nothing else holds the copy.
func keepEagerCopy(p *[]byte) {
	if p != nil && cap(*p) > 0 {
		eagerCopies.Put(p)
	}
}
