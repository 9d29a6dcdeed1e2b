package replicate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/csum"
)

// Protocol is how the replicas of a receiver check what the replicas of
// a sender sent (the paper's §III-B).
type Protocol int

const (
	// MsgPlusHash: each sender replica k sends its message to receiver
	// replica k and its hash to receiver replica k+1 (mod r). A receiver
	// compares the two; on a mismatch the two receivers that see it find
	// each other (the paper's adjacent-replica discovery), vote on the
	// three claims they hold, and the one with the verified copy sends it
	// to the one without. r copies and r hashes per message.
	MsgPlusHash Protocol = iota
	// AllToAll: every sender replica sends to every receiver replica,
	// which votes on the r copies by hash. r² copies per message.
	AllToAll
)

func (p Protocol) String() string {
	switch p {
	case MsgPlusHash:
		return "msgplushash"
	case AllToAll:
		return "alltoall"
	}
	return fmt.Sprintf("Protocol(%d)", int(p))
}

// ParseProtocol reads a protocol's name as String writes it.
func ParseProtocol(s string) (Protocol, error) {
	switch s {
	case "msgplushash", "mph":
		return MsgPlusHash, nil
	case "alltoall", "all-to-all", "a2a":
		return AllToAll, nil
	}
	return 0, fmt.Errorf("replicate: unknown protocol %q (msgplushash, alltoall)", s)
}

// Errors a receive can end with (errors.Is); they come wrapped in a
// *CorruptionError that says which message.
var (
	// ErrMismatch: the replicas of the sender sent different data and there
	// are too few (r = 2) to tell which is right. Detected, not corrected.
	ErrMismatch = errors.New("replicate: replicas of the sender sent different data")
	// ErrNoMajority: the copies disagree and no copy has more votes than
	// every other (two or more corrupted replicas of one rank): the job
	// should abort, as RedMPI does, rather than compute on.
	ErrNoMajority = errors.New("replicate: no majority among the replicas' copies")
)

// CorruptionError says which receive found corruption it could not
// correct, and why (Err is ErrMismatch or ErrNoMajority). The receive
// buffer's contents are then undefined: never a verified copy.
type CorruptionError struct {
	Rank, Replica int // the receiver, virtual rank and replica
	Source, Tag   int // the message's virtual source and tag
	Seq           uint64
	Detail        string
	Err           error
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("replicate: rank %d replica %d: message %d from rank %d tag %d: %v (%s)",
		e.Rank, e.Replica, e.Seq, e.Source, e.Tag, e.Err, e.Detail)
}

func (e *CorruptionError) Unwrap() error { return e.Err }

// Option configures New.
type Option func(*config)

type config struct {
	proto      Protocol
	alg        string
	m          *Map
	nodes      Noder
	inj        *Injector
	detectOnly bool
	reference  int
}

// WithProtocol picks the protocol (MsgPlusHash by default).
func WithProtocol(p Protocol) Option { return func(c *config) { c.proto = p } }

// WithHash picks the csum algorithm that compares copies (xxh3-128 by
// default: collisions are out of reach, at memory speed, which the
// paper's SHA-1 is far below).
func WithHash(name string) Option { return func(c *config) { c.alg = name } }

// WithMap places the native ranks as m says, instead of Spread (when the
// transport is a Noder) or Formula.
func WithMap(m Map) Option { return func(c *config) { c.m = &m } }

// WithNodes says which node each native rank runs on, for a transport
// that knows it without implementing Noder (channel/mpi's Node, say):
// the replicas are then placed by Spread, as for a Noder.
func WithNodes(n Noder) Option { return func(c *config) { c.nodes = n } }

// NodeFunc makes a function a Noder.
type NodeFunc func(rank int) string

// Node returns f(rank).
func (f NodeFunc) Node(rank int) string { return f(rank) }

// WithInjector flips bits in the application's send buffers (see
// Injector).
func WithInjector(inj Injector) Option { return func(c *config) { c.inj = &inj } }

// WithDetectOnly turns correction off, as the paper's propagation study
// does: a receive that finds the copies disagree records it (Stats) and
// returns this replica's own copy, corrupt or not, without an error, so
// that corruption spreads as it would without protection and its spread
// can be watched. reference names the replica set trusted as the control
// (never injected): a replica other than it that finds a mismatch counts
// its copy as corrupt (tainted).
func WithDetectOnly(reference int) Option {
	return func(c *config) { c.detectOnly, c.reference = true, reference }
}

// Comm is the virtual world of n ranks that an application sees, run as r
// replicas per rank over r·n native ranks. It is a channel.Comm: Send,
// Recv and the collectives of package channel work on it, protected.
//
// A receive returns a copy that a majority of the sender's replicas
// vouch for (r ≥ 3), or one both vouch for (r = 2), or an error; never a
// copy that only one replica sent when others disagree.
type Comm struct {
	under channel.Comm
	m     Map
	me    Place
	r     int
	proto Protocol
	alg   *csum.Algorithm
	cfg   config

	// Matching contexts of their own (channel.Dup), in creation order:
	// user data and hashes, the collectives' data and hashes (tags from
	// channel.ReservedTag, shifted down), discovery records, correction
	// transfers, and the determinism records (envelopes, clocks).
	dataU, hashU, dataC, hashC, repair, fix, ctl channel.Comm

	seqMu sync.Mutex
	seq   map[seqKey]uint64
	fixMu sync.Mutex // a verdict and its correction, sent back to back

	step  atomic.Int64
	inj   *injector
	box   *mailbox
	stats stats

	stop context.CancelFunc
	done chan struct{}
}

type seqKey struct{ dst, tag int }

// Tags of the determinism records on the ctl context.
const (
	tagEnvelope = iota
	tagClock
	tagSeed
	tagTest
)

// Tags of the discovery records on the repair context.
const (
	tagReport = iota
	tagVerdict
)

// New makes the replicated Comm of this native rank over c, whose Size
// must be r·n. Every native rank calls New with the same r and options
// (the same map), at the same point: New duplicates c (channel.Dup) seven
// times for its own traffic, so c must be a channel.Duplicator (an
// error wrapping errors.ErrUnsupported says it is not). Close stops it.
func New(c channel.Comm, r int, opts ...Option) (*Comm, error) {
	dc, ok := c.(channel.Duplicator)
	if !ok {
		return nil, fmt.Errorf("replicate: a %T cannot be duplicated (channel.Duplicator), and replication needs matching spaces of its own: %w", c, errors.ErrUnsupported)
	}
	cfg := config{proto: MsgPlusHash, alg: "xxh3-128"}
	for _, o := range opts {
		o(&cfg)
	}
	if r < 1 || c.Size()%r != 0 {
		return nil, fmt.Errorf("%w: %d native ranks are not a multiple of %d replicas", ErrMap, c.Size(), r)
	}
	alg, err := csum.Lookup(cfg.alg)
	if err != nil {
		return nil, fmt.Errorf("replicate: %w", err)
	}
	var m Map
	nd, ok := c.(Noder)
	if cfg.nodes != nil {
		nd, ok = cfg.nodes, true
	}
	switch {
	case cfg.m != nil:
		m = *cfg.m
	case ok:
		nodes := make([]string, c.Size())
		for i := range nodes {
			nodes[i] = nd.Node(i)
		}
		if m, err = Spread(nodes, r); err != nil {
			return nil, err
		}
	default:
		m = Formula(c.Size()/r, r)
	}
	if m.r != r || len(m.places) != c.Size() {
		return nil, fmt.Errorf("%w: a map of %d native ranks and %d replicas for %d native ranks and %d replicas", ErrMap, len(m.places), m.r, c.Size(), r)
	}
	if cfg.detectOnly && (cfg.reference < 0 || cfg.reference >= r) {
		return nil, fmt.Errorf("replicate: reference replica %d of %d", cfg.reference, r)
	}
	x := &Comm{
		under: c, m: m, me: m.Place(c.Rank()), r: r, proto: cfg.proto, alg: alg, cfg: cfg,
		seq:  map[seqKey]uint64{},
		done: make(chan struct{}),
	}
	x.dataU, x.hashU = channel.Dup(dc), channel.Dup(dc)
	x.dataC, x.hashC = channel.Dup(dc), channel.Dup(dc)
	x.repair, x.fix, x.ctl = channel.Dup(dc), channel.Dup(dc), channel.Dup(dc)
	if cfg.inj != nil {
		x.inj = newInjector(*cfg.inj, c.Rank())
	}
	x.box = newMailbox()
	ctx, cancel := context.WithCancel(context.Background())
	x.stop = cancel
	go x.dispatch(ctx)
	return x, nil
}

// Close stops the Comm's background receiver. It does not close the
// Comm underneath.
func (c *Comm) Close() error {
	c.stop()
	<-c.done
	return nil
}

// Rank returns the virtual rank, what the application computes with.
func (c *Comm) Rank() int { return c.me.Virtual }

// Size returns the number of virtual ranks n.
func (c *Comm) Size() int { return c.m.n }

// Replica returns which replica of its virtual rank this is (0 … r-1).
func (c *Comm) Replica() int { return c.me.Replica }

// Degree returns the number of replicas r.
func (c *Comm) Degree() int { return c.r }

// Native returns this replica's rank on the Comm underneath.
func (c *Comm) Native() int { return c.under.Rank() }

// Map returns the rank map in use.
func (c *Comm) Map() Map { return c.m }

// Step tells the Comm that the application has reached time step s (the
// paper's application-reported timesteps): statistics and taint are kept
// per step, and the injector can be aimed at one.
func (c *Comm) Step(s int) { c.step.Store(int64(s)) }

// route gives the contexts and the wire tag of a tag: the user's own, or
// one of the collectives' reserved tags, shifted down into its own
// context so that no tag at or above channel.ReservedTag reaches the
// Comm underneath.
func (c *Comm) route(tag int) (data, hash channel.Comm, wtag int) {
	if tag >= channel.ReservedTag {
		return c.dataC, c.hashC, tag - channel.ReservedTag
	}
	return c.dataU, c.hashU, tag
}

func (c *Comm) nextSeq(dst, tag int) uint64 {
	c.seqMu.Lock()
	defer c.seqMu.Unlock()
	k := seqKey{dst, tag}
	s := c.seq[k]
	c.seq[k] = s + 1
	return s
}

// Send sends data to virtual rank dst: to the replicas of dst that the
// protocol names. Sends are eager, as underneath. An aimed Injector may
// flip a bit of data first — of the caller's buffer, as a fault in the
// application's memory would.
func (c *Comm) Send(ctx context.Context, dst, tag int, data []byte) error {
	if dst < 0 || dst >= c.m.n {
		return fmt.Errorf("%w: destination %d of %d", channel.ErrRank, dst, c.m.n)
	}
	if tag < 0 {
		return fmt.Errorf("%w: %d", channel.ErrTag, tag)
	}
	if c.inj != nil {
		c.inj.maybeFlip(data, c.me, int(c.step.Load()), &c.stats)
	}
	dc, hc, wtag := c.route(tag)
	k := c.me.Replica
	if c.proto == AllToAll {
		for j := range c.r {
			if err := dc.Send(ctx, c.m.Native(dst, j), wtag, data); err != nil {
				return err
			}
			c.stats.sent(len(data))
		}
		return nil
	}
	if err := dc.Send(ctx, c.m.Native(dst, k), wtag, data); err != nil {
		return err
	}
	c.stats.sent(len(data))
	if c.r == 1 {
		return nil
	}
	var rec [hashSize]byte
	h := hashRec{Seq: c.nextSeq(dst, tag), Len: uint64(len(data)), Hash: c.alg.Sum(data)}
	if err := hc.Send(ctx, c.m.Native(dst, (k+1)%c.r), wtag, h.put(rec[:0])); err != nil {
		return err
	}
	c.stats.sent(hashSize)
	return nil
}

// Recv receives the message from virtual rank src (or AnySource) with tag
// (or AnyTag) into buf, checked against the sender's other replicas. A
// wildcard is resolved by replica 0, which tells the others what it
// matched, so that every replica receives the same message.
//
// As with MPI, receives that could match the same message must not run
// at once (their order would be the goroutines'), or replicas may match
// differently.
func (c *Comm) Recv(ctx context.Context, src, tag int, buf []byte) (channel.Status, error) {
	if src != channel.AnySource && (src < 0 || src >= c.m.n) {
		return channel.Status{}, fmt.Errorf("%w: source %d of %d", channel.ErrRank, src, c.m.n)
	}
	if tag < 0 && tag != channel.AnyTag {
		return channel.Status{}, fmt.Errorf("%w: %d", channel.ErrTag, tag)
	}
	if c.proto == AllToAll {
		return c.recvAllToAll(ctx, src, tag, buf)
	}
	return c.recvMsgPlusHash(ctx, src, tag, buf)
}

// first receives the first copy of a message on data context dc: the
// own replica's from virtual src, or, for a wildcard, whatever replica 0
// matches, the envelope then forwarded to the other replicas (the paper's
// §III-C). It returns the virtual source, the tag and the status.
func (c *Comm) first(ctx context.Context, dc channel.Comm, src, tag, wtag int, buf []byte, from func(v int) int) (int, int, channel.Status, error) {
	if src != channel.AnySource && tag != channel.AnyTag {
		st, err := dc.Recv(ctx, from(src), wtag, buf)
		return src, tag, st, err
	}
	if c.me.Replica != 0 {
		var b [envelopeSize]byte
		v := c.m.Native(c.me.Virtual, 0)
		if _, err := recvExact(ctx, c.ctl, v, tagEnvelope, b[:]); err != nil {
			return 0, 0, channel.Status{}, err
		}
		e, err := decodeEnvelope(b[:], c.m.n, channel.ReservedTag)
		if err != nil {
			return 0, 0, channel.Status{}, err
		}
		st, err := dc.Recv(ctx, from(e.Src), e.Tag, buf)
		return e.Src, e.Tag, st, err
	}
	nsrc := channel.AnySource
	if src != channel.AnySource {
		nsrc = from(src)
	}
	st, err := dc.Recv(ctx, nsrc, wtag, buf)
	if err != nil && !errors.Is(err, channel.ErrTruncated) {
		return 0, 0, st, err
	}
	p := c.m.Place(st.Source)
	if c.proto == MsgPlusHash && p.Replica != 0 {
		return 0, 0, st, fmt.Errorf("%w: replica 0 of rank %d got data from native rank %d, replica %d", ErrWire, c.me.Virtual, st.Source, p.Replica)
	}
	e := envelope{Src: p.Virtual, Tag: st.Tag}
	var b [envelopeSize]byte
	for k := 1; k < c.r; k++ {
		if serr := c.ctl.Send(ctx, c.m.Native(c.me.Virtual, k), tagEnvelope, e.put(b[:0])); serr != nil {
			return 0, 0, st, serr
		}
		c.stats.sent(envelopeSize)
	}
	return e.Src, e.Tag, st, err
}

func recvExact(ctx context.Context, c channel.Comm, src, tag int, buf []byte) (channel.Status, error) {
	st, err := c.Recv(ctx, src, tag, buf)
	if err == nil && st.Len != len(buf) {
		err = fmt.Errorf("%w: a record of %d bytes from native rank %d, %d expected", ErrWire, st.Len, src, len(buf))
	}
	return st, err
}

func (c *Comm) corruption(src, tag int, seq uint64, err error, format string, args ...any) *CorruptionError {
	return &CorruptionError{Rank: c.me.Virtual, Replica: c.me.Replica, Source: src, Tag: tag, Seq: seq, Err: err, Detail: fmt.Sprintf(format, args...)}
}
