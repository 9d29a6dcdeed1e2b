package encrypt

import (
	"context"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sigcheck/sigcheck/channel"
)

// Algorithm names one of the paper's eight encrypted all-gathers, or Auto.
type Algorithm int

const (
	Auto  Algorithm = iota // HS1 or HS2, by the size of a node's data (Gatherer.Choose)
	Naive                  // seal, all-gather the ciphertexts (RD), open p-1
	ORing                  // ring; seal leaving a node, open entering one
	ORD                    // RD; seal leaving a node, forward ciphertexts as they are
	ORD2                   // RD; open and reseal into one ciphertext at every step between nodes
	CRing                  // one encrypted ring a local index, then a ring in each node
	CRD                    // one encrypted RD a local index, then RD in each node
	HS1                    // leaders seal their node's blocks and all-gather them; all open
	HS2                    // every rank seals its block; leaders all-gather; all open
)

var algNames = [...]string{"auto", "naive", "o-ring", "o-rd", "o-rd2", "c-ring", "c-rd", "hs1", "hs2"}

func (a Algorithm) String() string {
	if a >= 0 && int(a) < len(algNames) {
		return algNames[a]
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// Title is the paper's name (O-RD2, HS1…).
func (a Algorithm) Title() string {
	return [...]string{"Auto", "Naive", "O-Ring", "O-RD", "O-RD2", "C-Ring", "C-RD", "HS1", "HS2"}[a]
}

// Algorithms returns the eight, in the paper's order.
func Algorithms() []Algorithm { return []Algorithm{Naive, ORing, ORD, ORD2, CRing, CRD, HS1, HS2} }

// ParseAlgorithm reads a name as String prints it (any case, the paper's too).
func ParseAlgorithm(s string) (Algorithm, error) {
	for a, n := range algNames {
		if equalFold(s, n) {
			return Algorithm(a), nil
		}
	}
	return 0, fmt.Errorf("encrypt: unknown algorithm %q (auto, naive, o-ring, o-rd, o-rd2, c-ring, c-rd, hs1, hs2)", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Option configures a Gatherer.
type Option func(*options)

type options struct {
	model        *Model
	testHookWire func(channel.Comm) channel.Comm // tests: an adversary on the wire
}

// WithModel adds m's predicted time to the counts of every all-gather
// (Counts.Time).
func WithModel(m Model) Option { return func(o *options) { o.model = &m } }

// Reserved step tags on the Gatherer's own duplicate of the Comm.
const (
	tagSetup    = 0
	phaseMain   = 1 << 20 // the all-gather among all ranks, a group, or the leaders
	phaseLocal  = 2 << 20 // C-Ring, C-RD: the all-gather inside a node
	phaseExtras = 3 << 20 // C-Ring, C-RD: a node's ranks beyond the smallest node's count
	stepFold    = 0
	stepUnfold  = 1<<20 - 1
)

// Gatherer runs encrypted all-gathers for one rank. Every rank of the
// Comm makes one with New, at the same point of its program (New is a
// collective, and duplicates the Comm); the ranks of one node give theirs
// the same Node (one Node serves one Gatherer a rank). It is not safe for concurrent use: calls are
// collectives, made in the same order everywhere.
type Gatherer struct {
	c       channel.Comm
	rank, p int
	lay     Layout
	node    *Node
	keys    KeySource
	opt     options

	salt  []byte
	job   cipher.AEAD
	mu    sync.Mutex
	links map[int]*link
	ctr   atomic.Uint64 // nonces of the job key: this rank ‖ ctr
	seq   uint64
	err   error    // a failure that leaves the links out of step
	bufs  [2]arena // by the parity of seq
}

// New makes this rank's Gatherer over c (duplicated, so its frames never
// meet c's messages), with keys for the links and node, the memory this
// rank shares with the others of its node (NewNode). Every rank calls it
// with the same layout (node.Layout): rank 0 draws a fresh job key and
// gives it to each rank sealed under their link's key, so a rank with
// another layout fails with ErrLayout, one with other keys with ErrAuth.
// c must be a channel.Duplicator (an error wrapping errors.ErrUnsupported
// says it is not).
func New(ctx context.Context, c channel.Comm, keys KeySource, lay Layout, node *Node, opts ...Option) (*Gatherer, error) {
	dc, ok := c.(channel.Duplicator)
	if !ok {
		return nil, fmt.Errorf("encrypt: a %T cannot be duplicated (channel.Duplicator), and a Gatherer needs a matching space of its own: %w", c, errors.ErrUnsupported)
	}
	if lay.Size() != c.Size() {
		return nil, fmt.Errorf("%w: a layout of %d ranks for a Comm of %d", ErrLayout, lay.Size(), c.Size())
	}
	r := c.Rank()
	if node == nil || node.id >= lay.Nodes() || lay.Node(r) != node.id || !node.has(r) || len(node.ranks) != len(lay.Ranks(node.id)) {
		return nil, fmt.Errorf("%w: rank %d is on node %d, not on the Node given", ErrLayout, r, lay.Node(r))
	}
	if keys == nil {
		return nil, fmt.Errorf("encrypt: no KeySource")
	}
	if err := node.claim(r); err != nil {
		return nil, err
	}
	g := &Gatherer{rank: r, p: c.Size(), lay: lay, node: node, keys: keys, links: map[int]*link{}}
	for _, o := range opts {
		o(&g.opt)
	}
	g.c = channel.Dup(dc)
	if g.opt.testHookWire != nil {
		g.c = g.opt.testHookWire(g.c)
	}
	if err := g.setup(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// Layout returns the layout the Gatherer runs on.
func (g *Gatherer) Layout() Layout { return g.lay }

// Choose returns the algorithm Auto takes for blocks of m bytes: HS1
// while a node's data (ℓ·m, ℓ its largest node's ranks) is under
// hs1Max, HS2 from there. On this machine (README: TCP processes, p=4 on
// 2 nodes and p=8 on 4 cyclic; p=16 on 4 simulated) HS1 or HS2 was the
// fastest of the eight at every size from 1 B to 1 MiB, as on the
// paper's Bridges-2 (Table VI): HS1 opens ⌈(N-1)/ℓ⌉ ciphertexts where
// HS2 opens N-1, which pays while messages are small, but its leader
// seals the node's ℓm bytes alone, which costs once they are not. Where
// they cross is blurred by the machine's noise and moves with p: hs1Max
// is where HS2 took the lead at p=8. BenchmarkAllgather measures both
// beside the other algorithms (p=4 and p=16, in process).
func (g *Gatherer) Choose(m int) Algorithm {
	_, lmax := g.lay.PerNode()
	if lmax*m < hs1Max {
		return HS1
	}
	return HS2
}

// hs1Max is the node data size (ℓ·m) from which Auto takes HS2.
const hs1Max = 32 << 10

// Allgather gives recv every rank's send (all of one length m), rank i's
// at recv[i·m:], which must hold p·m bytes, by the algorithm Auto picks.
// Every block that crosses between nodes is sealed; a frame that fails
// authentication fails the call (ErrAuth, ErrReplay) and delivers none
// of its bytes. After a failure the Gatherer, and its node's, refuse
// further calls: their links' counters are out of step.
func (g *Gatherer) Allgather(ctx context.Context, send, recv []byte) error {
	_, err := g.Run(ctx, Auto, send, recv)
	return err
}

// Run is Allgather by a given algorithm, and returns this rank's counts.
func (g *Gatherer) Run(ctx context.Context, a Algorithm, send, recv []byte) (Counts, error) {
	return g.run(ctx, a, false, send, recv)
}

// RunUnencrypted runs the same schedule with nothing sealed (the paper's
// "unencrypted counterpart", Figs. 5 and 6): the baseline an algorithm's
// encryption costs are measured against. Its frames cross nodes in the
// clear.
func (g *Gatherer) RunUnencrypted(ctx context.Context, a Algorithm, send, recv []byte) (Counts, error) {
	return g.run(ctx, a, true, send, recv)
}

func (g *Gatherer) run(ctx context.Context, a Algorithm, plain bool, send, recv []byte) (Counts, error) {
	if g.err != nil {
		return Counts{}, g.err
	}
	m := len(send)
	if len(recv) != g.p*m {
		return Counts{}, fmt.Errorf("%w: a receive buffer of %d bytes for %d ranks of %d", channel.ErrCollective, len(recv), g.p, m)
	}
	if a == Auto {
		a = g.Choose(m)
	}
	if a < Naive || a > HS2 {
		return Counts{}, fmt.Errorf("encrypt: unknown algorithm %d", int(a))
	}
	g.seq++
	st := &state{g: g, ctx: ctx, alg: a, plain: plain, m: m, buf: recv,
		hasPlain: make([]bool, g.p), ct: make([]*piece, g.p), seq: g.seq, ar: &g.bufs[g.seq&1]}
	st.ar.reset()
	copy(recv[g.rank*m:], send)
	st.hasPlain[g.rank] = true
	err := st.run(send)
	if err != nil {
		g.err = fmt.Errorf("encrypt: rank %d: an earlier all-gather failed: %w", g.rank, err)
		g.node.fail(g.rank, err)
		return st.path, fmt.Errorf("encrypt: rank %d, %v (all-gather %d): %w", g.rank, a.Title(), st.seq, err)
	}
	return st.path, nil
}

// piece is a ciphertext a rank holds, to forward or to open.
type piece struct {
	origins []int
	enc     int
	ctr     uint64
	data    []byte // with its tag
	opened  bool
}

// state is one all-gather on one rank.
type state struct {
	g     *Gatherer
	ctx   context.Context
	alg   Algorithm
	plain bool // the unencrypted counterpart
	lazy  bool // leave received ciphertexts sealed (Naive; HS leaders)
	m     int
	seq   uint64
	// buf holds the plaintext of rank o's block at o·m once hasPlain[o]:
	// the caller's recv, or the node's shared buffer (HS1, HS2).
	buf      []byte
	hasPlain []bool
	ct       []*piece // a sealed piece that holds o, to forward
	path     Counts
	scratch  []byte
	ar       *arena
}

func (st *state) inter(r int) bool { return st.g.lay.Node(r) != st.g.lay.Node(st.g.rank) }

// pieceAAD binds a ciphertext to its all-gather, algorithm and contents.
func (st *state) pieceAAD(origins []int) []byte {
	b := make([]byte, 0, 16+4*len(origins))
	b = append(b, "SE1"...)
	b = append(b, byte(st.alg))
	b = binary.LittleEndian.AppendUint64(b, st.seq)
	for _, o := range origins {
		b = binary.LittleEndian.AppendUint32(b, uint32(o))
	}
	return b
}

// run copies: the plaintext of origins, contiguous in buf or gathered.
func (st *state) plaintext(origins []int) []byte {
	m := st.m
	if contiguous(origins) {
		return st.buf[origins[0]*m : (origins[0]+len(origins))*m]
	}
	st.scratch = st.scratch[:0]
	for _, o := range origins {
		st.scratch = append(st.scratch, st.buf[o*m:(o+1)*m]...)
	}
	return st.scratch
}

func contiguous(os []int) bool {
	for i := 1; i < len(os); i++ {
		if os[i] != os[i-1]+1 {
			return false
		}
	}
	return len(os) > 0
}

// seal encrypts the blocks of origins into dst (with room for them and
// the tag) and returns the piece.
func (st *state) seal(dst []byte, origins []int) *piece {
	pc := &piece{origins: origins, enc: st.g.rank, ctr: st.g.ctr.Add(1) - 1, opened: true}
	var n [12]byte
	pc.data = st.g.job.Seal(dst[:0], nonceOf(&n, pc.enc, pc.ctr), st.plaintext(origins), st.pieceAAD(origins))
	bytes := int64(len(origins) * st.m)
	st.path.Re++
	st.path.Se += bytes
	if md := st.g.opt.model; md != nil {
		st.path.Time += md.Encrypt.cost(1, bytes)
	}
	return pc
}

// open decrypts a piece into buf, authenticating it.
func (st *state) open(pc *piece) error {
	if pc.opened {
		return nil
	}
	m := st.m
	var n [12]byte
	var dst []byte
	if contiguous(pc.origins) {
		dst = st.buf[pc.origins[0]*m : pc.origins[0]*m]
	} else {
		st.scratch = st.scratch[:0]
		dst = st.scratch
	}
	out, err := st.g.job.Open(dst, nonceOf(&n, pc.enc, pc.ctr), pc.data, st.pieceAAD(pc.origins))
	if err != nil {
		return fmt.Errorf("%w: the ciphertext of rank %v's blocks sealed by rank %d", ErrAuth, pc.origins, pc.enc)
	}
	if !contiguous(pc.origins) {
		for i, o := range pc.origins {
			copy(st.buf[o*m:(o+1)*m], out[i*m:])
		}
		st.scratch = out
	}
	for _, o := range pc.origins {
		st.hasPlain[o] = true
	}
	pc.opened = true
	bytes := int64(len(pc.origins) * m)
	st.path.Rd++
	st.path.Sd += bytes
	if md := st.g.opt.model; md != nil {
		st.path.Time += md.Decrypt.cost(1, bytes)
	}
	return nil
}

// out is a piece of a frame to send: fresh, sealed or in the clear from
// buf, or a held ciphertext forwarded.
type out struct {
	origins []int
	sealed  bool
	fwd     *piece // forward as it is
}

// plan says how the blocks of set go to dst, by the algorithm's rule:
// in the clear inside a node (Naive excepted) and in the unencrypted
// counterpart; between nodes, held ciphertexts forwarded and the rest
// sealed together (O-RD2: everything sealed afresh, as one).
func (st *state) plan(dst int, set []int) ([]out, error) {
	if len(set) == 0 {
		return nil, nil
	}
	if st.plain || (!st.inter(dst) && st.alg != Naive) {
		for _, o := range set {
			if !st.hasPlain[o] {
				return nil, fmt.Errorf("encrypt: internal: rank %d has no plaintext of rank %d's block", st.g.rank, o)
			}
		}
		return []out{{origins: set}}, nil
	}
	if st.alg == ORD2 {
		return []out{{origins: set, sealed: true}}, nil
	}
	in := make(map[int]bool, len(set))
	for _, o := range set {
		in[o] = true
	}
	var outs []out
	var rest []int
	done := map[*piece]bool{}
	for _, o := range set {
		pc := st.ct[o]
		whole := pc != nil
		if whole {
			for _, x := range pc.origins {
				whole = whole && in[x]
			}
		}
		switch {
		case whole && !done[pc]:
			done[pc] = true
			outs = append(outs, out{origins: pc.origins, sealed: true, fwd: pc})
		case whole:
		default:
			if !st.hasPlain[o] {
				return nil, fmt.Errorf("encrypt: internal: rank %d holds rank %d's block neither whole nor opened", st.g.rank, o)
			}
			rest = append(rest, o)
		}
	}
	if len(rest) > 0 {
		outs = append(outs, out{origins: rest, sealed: true})
	}
	return outs, nil
}

// frame builds the frame of a step to dst: it seals what plan says is
// fresh (caching the ciphertext, except for O-RD2, whose next step seals
// more), then the header with the counts so far, then the envelope.
func (st *state) frame(dst, step int, outs []out) ([]byte, error) {
	m := st.m
	inter := st.inter(dst)
	sealed := inter && !st.plain
	pieces := make([]Piece, len(outs))
	for i, o := range outs {
		pieces[i] = Piece{Sealed: o.sealed, Origins: o.origins}
	}
	size := hdrLen
	for _, o := range outs {
		size += entryLen + 4*len(o.origins) + len(o.origins)*m
		if o.sealed {
			size += tagLen
		}
	}
	if sealed {
		size += tagLen
	}
	// A frame that goes through the Node is handed over to the rank
	// that takes it; one that goes over the Comm is copied out before
	// Send returns, and its buffer is this rank's again.
	var b []byte
	if inter {
		b = st.ar.alloc(size)
	} else {
		b = make([]byte, size)
	}
	off := hdrLen // the data start after the table, whose length is known
	for _, o := range outs {
		off += entryLen + 4*len(o.origins)
	}
	for i, o := range outs {
		switch {
		case o.fwd != nil:
			pieces[i].Data = b[off : off+copy(b[off:], o.fwd.data)]
			pieces[i].Encrypter, pieces[i].Counter = o.fwd.enc, o.fwd.ctr
		case o.sealed:
			pc := st.seal(b[off:off+len(o.origins)*m+tagLen], o.origins)
			if st.alg != ORD2 {
				for _, x := range o.origins {
					if st.ct[x] == nil {
						st.ct[x] = pc
					}
				}
			}
			pieces[i].Data = pc.data
			pieces[i].Encrypter, pieces[i].Counter = pc.enc, pc.ctr
		default:
			pieces[i].Data = b[off : off+copy(b[off:], st.plaintext(o.origins))]
		}
		off += len(pieces[i].Data)
	}
	h := Header{Sealed: sealed, Alg: st.alg, Src: st.g.rank, Dst: dst, Seq: st.seq, Step: step, Path: st.path}
	var lk *link
	if sealed {
		var err error
		if lk, err = st.g.link(dst); err != nil {
			return nil, err
		}
		h.LinkCtr = lk.sent
		lk.sent++
	}
	hdr := appendHeader(b[:0], &h, pieces)
	if sealed {
		var n [12]byte
		aad := envelopeAAD(hdr, pieces)
		lk.aead.Seal(b[off:off], nonceOf(&n, st.g.rank, h.LinkCtr), nil, aad)
	}
	return b, nil
}

// envelopeAAD is what the envelope authenticates: header, table and the
// pieces' tags.
func envelopeAAD(hdr []byte, pieces []Piece) []byte {
	aad := make([]byte, 0, len(hdr)+tagLen*len(pieces))
	aad = append(aad, hdr...)
	for _, pc := range pieces {
		if pc.Sealed {
			aad = append(aad, pc.Data[len(pc.Data)-tagLen:]...)
		}
	}
	return aad
}

// post sends a built frame.
func (st *state) post(dst, step int, f []byte) error {
	if st.inter(dst) {
		return st.g.c.Send(st.ctx, dst, step, f)
	}
	return st.g.node.post(st.ctx, st.g.rank, dst, f)
}

// receive takes the frame of a step from src, which must bring exactly
// the blocks of want; it authenticates it, merges its counts, and puts
// its plaintext in buf (opening its ciphertexts unless lazy).
func (st *state) receive(src, step int, want []int) error {
	g := st.g
	var b []byte
	inter := st.inter(src)
	if inter {
		b = st.ar.alloc(maxFrameSize(len(want), st.m))
		s, err := g.c.Recv(st.ctx, src, step, b)
		if err != nil {
			return fmt.Errorf("step %#x from rank %d: %w", step, src, err)
		}
		b = b[:s.Len]
	} else {
		var err error
		if b, err = g.node.take(st.ctx, g.rank, src); err != nil {
			return err
		}
	}
	f, err := DecodeFrame(b, Limits{Ranks: g.p, Origins: len(want)})
	if err != nil {
		return fmt.Errorf("from rank %d, step %#x: %w", src, step, err)
	}
	sealed := inter && !st.plain
	if f.Sealed != sealed {
		return fmt.Errorf("%w: from rank %d, step %#x: sealed %v, %v expected", ErrAuth, src, step, f.Sealed, sealed)
	}
	if sealed {
		lk, err := g.link(src)
		if err != nil {
			return err
		}
		var n [12]byte
		aad := envelopeAAD(aadHeader(b, f), f.Pieces)
		if _, err := lk.aead.Open(nil, nonceOf(&n, src, f.LinkCtr), f.Tag, aad); err != nil {
			return fmt.Errorf("%w: the frame from rank %d at step %#x", ErrAuth, src, step)
		}
		if f.LinkCtr != lk.recd {
			return fmt.Errorf("%w: frame %d of the link from rank %d where %d was due (step %#x)", ErrReplay, f.LinkCtr, src, lk.recd, step)
		}
		lk.recd++
	}
	if f.Src != src || f.Dst != g.rank || f.Seq != st.seq || f.Step != step || f.Alg != st.alg {
		return fmt.Errorf("%w: from rank %d: a frame of %d→%d, all-gather %d, step %#x, %v, where %d→%d, %d, %#x, %v was due",
			ErrFrame, src, f.Src, f.Dst, f.Seq, f.Step, f.Alg.Title(), src, g.rank, st.seq, step, st.alg.Title())
	}
	got := 0
	wanted := make(map[int]bool, len(want))
	for _, o := range want {
		wanted[o] = true
	}
	for _, pc := range f.Pieces {
		for _, o := range pc.Origins {
			if !wanted[o] {
				return fmt.Errorf("%w: from rank %d, step %#x: rank %d's block, not due", ErrFrame, src, step, o)
			}
			got++
		}
		if pc.Sealed && len(pc.Data) != len(pc.Origins)*st.m+tagLen || !pc.Sealed && len(pc.Data) != len(pc.Origins)*st.m {
			return fmt.Errorf("%w: from rank %d, step %#x: %d bytes for %d blocks of %d", ErrFrame, src, step, len(pc.Data), len(pc.Origins), st.m)
		}
		if !pc.Sealed && sealed {
			return fmt.Errorf("%w: from rank %d, step %#x: plaintext between nodes", ErrAuth, src, step)
		}
	}
	if got != len(want) {
		return fmt.Errorf("%w: from rank %d, step %#x: %d blocks, %d due", ErrFrame, src, step, got, len(want))
	}
	st.path = st.path.Max(f.Path)
	for _, pc := range f.Pieces {
		if !pc.Sealed {
			for i, o := range pc.Origins {
				copy(st.buf[o*st.m:(o+1)*st.m], pc.Data[i*st.m:])
				st.hasPlain[o] = true
			}
			continue
		}
		p := &piece{origins: pc.Origins, enc: pc.Encrypter, ctr: pc.Counter, data: pc.Data}
		for _, o := range pc.Origins {
			st.ct[o] = p
		}
		if !st.lazy && !st.plain {
			if err := st.open(p); err != nil {
				return fmt.Errorf("from rank %d, step %#x: %w", src, step, err)
			}
		}
	}
	return nil
}

// round counts one step: a round, the larger of the bytes each way.
func (st *state) round(peer int, sent, recd int) {
	n := int64(max(sent, recd) * st.m)
	st.path.Rc++
	st.path.Sc += n
	if md := st.g.opt.model; md != nil {
		l := md.Inter
		if !st.inter(peer) {
			l = md.Intra
		}
		st.path.Time += l.cost(1, n)
	}
}

// exchange sends set to dst and receives want from src in one step.
func (st *state) exchange(step, dst int, set []int, src int, want []int) error {
	outs, err := st.plan(dst, set)
	if err != nil {
		return err
	}
	f, err := st.frame(dst, step, outs)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- st.post(dst, step, f) }()
	rerr := st.receive(src, step, want)
	serr := <-done
	if serr != nil {
		return fmt.Errorf("step %#x to rank %d: %w", step, dst, serr)
	}
	if rerr != nil {
		return rerr
	}
	st.round(src, len(set), len(want))
	return nil
}

// sendOnly and recvOnly are the steps of one direction (RD's fold).
func (st *state) sendOnly(step, dst int, set []int) error {
	outs, err := st.plan(dst, set)
	if err != nil {
		return err
	}
	f, err := st.frame(dst, step, outs)
	if err != nil {
		return err
	}
	if err := st.post(dst, step, f); err != nil {
		return fmt.Errorf("step %#x to rank %d: %w", step, dst, err)
	}
	st.round(dst, len(set), 0)
	return nil
}

func (st *state) recvOnly(step, src int, want []int) error {
	if err := st.receive(src, step, want); err != nil {
		return err
	}
	st.round(src, 0, len(want))
	return nil
}
