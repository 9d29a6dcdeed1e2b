package main

// The encrypted all-gather of SIGCHECK_ENCRYPT=1: the eight algorithms
// of Sadeghi Lahijani et al. (channel/encrypt's, which runs them between
// goroutines and TCP processes) rewritten for ranks that are processes
// of an MPI job. What is shared with channel/encrypt is what decides what
// goes on the wire: AES-GCM under a job key, a nonce of the sealing party
// and its counter, the associated data of a piece, the frame format and
// its decoder, and Auto's choice. What differs is the transport: every
// frame goes as an MPI message on the library's own duplicate of the
// communicator (wire), and the node memory that HS1 and HS2 share is an
// MPI shared-memory window (nodeMem), not a Go slice. Both are small
// interfaces, so that the same schedules run in a test over channels.
//
// This file is the engine: a step's frame planned, built, received and
// checked. encalgs.go has the schedules.

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/sigcheck/sigcheck/channel/encrypt"
)

// wire carries the frames of one communicator's all-gathers between its
// ranks, in the order each pair sends them. A receive into a buffer too
// short for the message fails, as MPI's does.
type wire interface {
	sendrecv(dst int, out []byte, src int, in []byte, tag int) (int, error)
	send(dst int, out []byte, tag int) error
	recv(src int, in []byte, tag int) (int, error)
}

// nodeMem is the memory that the ranks of one node share, for HS1 and
// HS2, which synchronize through counters in it (hierarchical).
type nodeMem interface {
	// mem returns at least size bytes that every rank of the node sees
	// alike, zero when first returned. Every rank of the node calls it,
	// with the same size; when it must grow, it waits for them all.
	mem(size int) ([]byte, error)
	// yield gives the processor to the node's other ranks while this one
	// waits for them (there may be more ranks than cores).
	yield() error
}

// Errors of the protocol, which the report names.
var (
	// errTampered: a ciphertext failed authentication (altered, or sealed
	// under another key, for another all-gather or other blocks).
	errTampered = errors.New("a ciphertext failed authentication")
	// errProtocol: a frame that is not the one due (it does not parse, or
	// brings other blocks, another step or another block size). The ranks
	// no longer agree on what comes next.
	errProtocol = errors.New("a frame out of step")
)

// tamperError is errTampered about one ciphertext: whose blocks it held
// and who sealed it, by the frame's word (the report says where to look).
type tamperError struct {
	origins   []int
	encrypter int
	how       string
}

func (e *tamperError) Error() string {
	return fmt.Sprintf("%v: %s of the blocks of ranks %v, sealed by rank %d", errTampered, e.how, e.origins, e.encrypter)
}

func (e *tamperError) Unwrap() error { return errTampered }

// encStats counts what a process's encrypted all-gathers did, for the
// summary; every group of the process adds to the same one.
type encStats struct {
	byAlg                    [9]atomic.Uint64 // all-gathers, by the Algorithm that ran
	sealed, opened           atomic.Uint64    // GCM calls
	sealedBytes, openedBytes atomic.Uint64    // their plaintext bytes
	tampered                 atomic.Uint64
}

// encGroup is one communicator's encrypted all-gathers on one rank. Its
// calls are collective: every rank of the communicator makes them in the
// same order, as MPI requires of MPI_Allgather.
type encGroup struct {
	w      wire
	node   nodeMem // nil: HS1 and HS2 are replaced by C-Ring
	rank   int
	p      int
	lay    encrypt.Layout
	aead   cipher.AEAD    // the communicator's key (commKey)
	prefix []uint32       // the nonce prefix of each rank: its rank in MPI_COMM_WORLD
	ctr    *atomic.Uint64 // this process's seal counter, for every key it holds
	seq    uint64
	bufs   [2]arena // by the parity of seq
	hs     hsState
	st     state // the all-gather in progress
	stats  *encStats

	// onTamper, when set, is told of a ciphertext that failed
	// authentication, and the all-gather goes on with its blocks left
	// zero (SIGCHECK_ON_ERROR=report); when nil, the all-gather fails.
	onTamper func(origins []int, encrypter int)
	// testHookTamper sees every frame that arrives from another node
	// before it is authenticated, and may alter it: an adversary on the
	// wire (SIGCHECK_TEST_TAMPER).
	testHookTamper func(f *encrypt.Frame)
	// testHookNonce sees the nonce of every seal (SIGCHECK_TEST_NONCES).
	testHookNonce func(nonce []byte)

	err error // a failure that leaves the ranks out of step
}

// maxEncTotal bounds an encrypted all-gather's p·m: larger ones go in
// the clear, counted, rather than make buffers of that size.
const maxEncTotal = 1 << 30

// run is one all-gather: recv (p·m bytes) gets every rank's send (m
// bytes; it may be recv's own block) by algorithm a, Auto resolved by
// the caller. Every rank calls it with the same m and a.
func (g *encGroup) run(a encrypt.Algorithm, send, recv []byte) error {
	if g.err != nil {
		return g.err
	}
	m := len(send)
	if len(recv) != g.p*m || m == 0 || int64(g.p)*int64(m) > maxEncTotal {
		return fmt.Errorf("%w: blocks of %d bytes for a receive of %d on %d ranks", errProtocol, m, len(recv), g.p)
	}
	if a < encrypt.Naive || a > encrypt.HS2 {
		return fmt.Errorf("no algorithm %d", int(a))
	}
	g.seq++
	// The state's slices are the group's, kept from call to call: a
	// small all-gather's own cost is mostly what it allocates.
	st := &g.st
	if len(st.hasPlain) != g.p {
		st.hasPlain, st.ct, st.mark = make([]bool, g.p), make([]*piece, g.p), make([]uint64, g.p)
	}
	clear(st.hasPlain)
	clear(st.ct)
	*st = state{g: g, alg: a, m: m, buf: recv, seq: g.seq, ar: &g.bufs[g.seq&1], hasPlain: st.hasPlain, ct: st.ct,
		mark: st.mark, gen: st.gen, scratch: st.scratch[:0], aad: st.aad[:0], outs: st.outs, pieces: st.pieces, offs: st.offs}
	st.ar.reset()
	copy(recv[g.rank*m:], send)
	st.hasPlain[g.rank] = true
	if err := st.run(send); err != nil {
		g.err = fmt.Errorf("an earlier encrypted all-gather failed: %w", err)
		return err
	}
	g.stats.byAlg[a].Add(1)
	return nil
}

// piece is a ciphertext a rank holds, to forward or to open.
type piece struct {
	origins []int
	enc     int // the rank that sealed it
	ctr     uint64
	data    []byte // with its tag
	opened  bool
	off     int // HS leaders: where data starts in the node's shared half, else -1
}

// state is one all-gather on one rank.
type state struct {
	g    *encGroup
	alg  encrypt.Algorithm
	lazy bool // leave received ciphertexts sealed (Naive; HS leaders)
	m    int
	seq  uint64
	// buf holds the plaintext of rank o's block at o·m once hasPlain[o]:
	// the caller's recv, or the node's shared buffer (HS1, HS2).
	buf      []byte
	hasPlain []bool
	ct       []*piece // a sealed piece that holds o, to forward
	mark     []uint64 // set membership by generation (plan, accept)
	gen      uint64
	scratch  []byte
	aad      []byte
	nonceBuf [12]byte
	outs     []out // scratch of plan, frame and accept, kept between calls
	pieces   []encrypt.Piece
	offs     []int
	ar       *arena
	rx       *bump // HS leaders: frames from other nodes land in shared memory
	rxBase   int   // rx's offset in the shared half
}

func (st *state) inter(r int) bool { return st.g.lay.Node(r) != st.g.lay.Node(st.g.rank) }

// plaintext returns the plaintext of origins, contiguous in buf or
// gathered into scratch.
func (st *state) plaintext(origins []int) []byte {
	m := st.m
	if contiguousRanks(origins) {
		return st.buf[origins[0]*m : (origins[0]+len(origins))*m]
	}
	st.scratch = st.scratch[:0]
	for _, o := range origins {
		st.scratch = append(st.scratch, st.buf[o*m:(o+1)*m]...)
	}
	return st.scratch
}

func contiguousRanks(os []int) bool {
	for i := 1; i < len(os); i++ {
		if os[i] != os[i-1]+1 {
			return false
		}
	}
	return len(os) > 0
}

func (st *state) nonce(n *[12]byte, enc int, ctr uint64) []byte {
	return encrypt.PutNonce(n, st.g.prefix[enc], ctr)
}

// seal encrypts the blocks of origins into dst (room for them and the
// tag) under a fresh counter of this process.
func (st *state) seal(dst []byte, origins []int) *piece {
	g := st.g
	pc := &piece{origins: origins, enc: g.rank, ctr: g.ctr.Add(1) - 1, opened: true, off: -1}
	nonce := st.nonce(&st.nonceBuf, pc.enc, pc.ctr)
	if g.testHookNonce != nil {
		g.testHookNonce(nonce)
	}
	st.aad = encrypt.AppendPieceAAD(st.aad[:0], st.alg, st.seq, origins)
	pc.data = g.aead.Seal(dst[:0], nonce, st.plaintext(origins), st.aad)
	g.stats.sealed.Add(1)
	g.stats.sealedBytes.Add(uint64(len(origins) * st.m))
	return pc
}

// open decrypts a piece into buf. A piece that fails authentication
// fails the all-gather, or, with onTamper, is reported and its blocks
// left zero.
func (st *state) open(pc *piece) error {
	if pc.opened {
		return nil
	}
	g, m := st.g, st.m
	var dst []byte
	if contiguousRanks(pc.origins) {
		dst = st.buf[pc.origins[0]*m : pc.origins[0]*m]
	} else {
		dst = st.scratch[:0]
	}
	st.aad = encrypt.AppendPieceAAD(st.aad[:0], st.alg, st.seq, pc.origins)
	out, err := g.aead.Open(dst, st.nonce(&st.nonceBuf, pc.enc, pc.ctr), pc.data, st.aad)
	g.stats.opened.Add(1)
	g.stats.openedBytes.Add(uint64(len(pc.origins) * m))
	if err != nil {
		g.stats.tampered.Add(1)
		if g.onTamper == nil {
			return &tamperError{origins: pc.origins, encrypter: pc.enc, how: "the ciphertext"}
		}
		g.onTamper(pc.origins, pc.enc)
		for _, o := range pc.origins {
			clear(st.buf[o*m : (o+1)*m])
		}
	} else if !contiguousRanks(pc.origins) {
		for i, o := range pc.origins {
			copy(st.buf[o*m:(o+1)*m], out[i*m:])
		}
		st.scratch = out
	}
	for _, o := range pc.origins {
		st.hasPlain[o] = true
	}
	pc.opened = true
	return nil
}

// next starts a new set for mark.
func (st *state) next() uint64 { st.gen++; return st.gen }

// out is a piece of a frame to send: fresh, sealed or in the clear from
// buf, or a held ciphertext forwarded.
type out struct {
	origins []int
	sealed  bool
	fwd     *piece
}

// plan says how the blocks of set go to dst: in the clear inside a node
// (Naive excepted); between nodes,
// held ciphertexts forwarded whole and the rest sealed together (O-RD2:
// everything sealed afresh, as one).
func (st *state) plan(dst int, set []int) ([]out, error) {
	if len(set) == 0 {
		return nil, nil
	}
	if !st.inter(dst) && st.alg != encrypt.Naive {
		for _, o := range set {
			if !st.hasPlain[o] {
				return nil, fmt.Errorf("internal: rank %d has no plaintext of rank %d's block", st.g.rank, o)
			}
		}
		return []out{{origins: set}}, nil
	}
	if st.alg == encrypt.ORD2 {
		return []out{{origins: set, sealed: true}}, nil
	}
	in := st.next()
	for _, o := range set {
		st.mark[o] = in
	}
	outs := st.outs[:0]
	var rest []int
	for _, o := range set {
		pc := st.ct[o]
		whole := pc != nil
		if whole {
			for _, x := range pc.origins {
				whole = whole && st.mark[x] == in
			}
		}
		switch {
		case whole && !planned(outs, pc):
			outs = append(outs, out{origins: pc.origins, sealed: true, fwd: pc})
		case whole:
		default:
			if !st.hasPlain[o] {
				return nil, fmt.Errorf("internal: rank %d holds rank %d's block neither whole nor opened", st.g.rank, o)
			}
			rest = append(rest, o)
		}
	}
	if len(rest) > 0 {
		outs = append(outs, out{origins: rest, sealed: true})
	}
	st.outs = outs
	return outs, nil
}

func planned(outs []out, pc *piece) bool {
	for _, o := range outs {
		if o.fwd == pc {
			return true
		}
	}
	return false
}

// frame builds the frame of a step to dst, sealing what plan says is
// fresh (and keeping the ciphertext to forward, except for O-RD2, whose
// next step seals more). The pieces' data are written in place first,
// sealed straight into the frame, then the header and table before them.
// Frames carry no envelope: see doc.go.
func (st *state) frame(dst, step int, outs []out) ([]byte, error) {
	m := st.m
	pieces := slices.Grow(st.pieces[:0], len(outs))[:len(outs)]
	st.pieces = pieces
	start := encrypt.FrameHeaderLen
	size := 0
	for i, o := range outs {
		pieces[i] = encrypt.Piece{Sealed: o.sealed, Origins: o.origins}
		start += encrypt.FrameEntryLen + 4*len(o.origins)
		size += len(o.origins) * m
		if o.sealed {
			size += encrypt.TagLen
		}
	}
	b := st.ar.alloc(start + size)
	off := start
	for i, o := range outs {
		switch {
		case o.fwd != nil:
			pieces[i].Data = b[off : off+copy(b[off:], o.fwd.data)]
			pieces[i].Encrypter, pieces[i].Counter = o.fwd.enc, o.fwd.ctr
		case o.sealed:
			pc := st.seal(b[off:off+len(o.origins)*m+encrypt.TagLen], o.origins)
			if st.alg != encrypt.ORD2 {
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
	h := encrypt.Header{Alg: st.alg, Src: st.g.rank, Dst: dst, Seq: st.seq, Step: step}
	if hdr := encrypt.AppendFrameHeader(b[:0:start], &h, pieces); len(hdr) != start || off != len(b) {
		return nil, fmt.Errorf("internal: a frame of %d+%d bytes where %d+%d were planned", len(hdr), off-start, start, size)
	}
	return b, nil
}

// tagOf is the MPI tag of a step: phases apart, within the 32767 that
// MPI promises. Frames between two ranks match in the order they were
// sent whatever their tags, and each says its step, which accept checks.
func tagOf(step int) int { return (step>>20)<<12 | step&0xfff }

// rxBuf returns a buffer for the frame of a step from src that brings
// want blocks.
func (st *state) rxBuf(src, want int) ([]byte, int, error) {
	n := encrypt.MaxFrameSize(want, st.m)
	if st.rx != nil && st.inter(src) {
		b, off, ok := st.rx.alloc(n)
		if !ok {
			return nil, 0, fmt.Errorf("internal: no room for a frame of %d bytes in the node's shared memory", n)
		}
		return b, st.rxBase + off, nil
	}
	return st.ar.alloc(n), -1, nil
}

// accept checks the frame b (at off in the node's shared half, or -1)
// of a step from src, which must bring exactly the blocks of want, and
// takes its blocks: plaintext into buf, ciphertexts kept and (unless
// lazy) opened.
func (st *state) accept(src, step int, want []int, b []byte, off int) error {
	g := st.g
	inter := st.inter(src)
	f, err := encrypt.DecodeFrame(b, encrypt.Limits{Ranks: g.p, Origins: len(want)})
	if err != nil {
		return fmt.Errorf("%w: from rank %d: %v", errProtocol, src, err)
	}
	if inter && g.testHookTamper != nil {
		g.testHookTamper(f)
	}
	if f.Sealed || f.Src != src || f.Dst != g.rank || f.Seq != st.seq || f.Step != step || f.Alg != st.alg {
		return fmt.Errorf("%w: from rank %d: a frame of %d→%d, all-gather %d, step %#x, %v, where %d→%d, %d, %#x, %v was due",
			errProtocol, src, f.Src, f.Dst, f.Seq, f.Step, f.Alg.Title(), src, g.rank, st.seq, step, st.alg.Title())
	}
	wanted := st.next()
	for _, o := range want {
		st.mark[o] = wanted
	}
	got := 0
	for _, pc := range f.Pieces {
		for _, o := range pc.Origins {
			if st.mark[o] != wanted {
				return fmt.Errorf("%w: from rank %d, step %#x: rank %d's block, not due", errProtocol, src, step, o)
			}
			got++
		}
		n := len(pc.Origins) * st.m
		if pc.Sealed {
			n += encrypt.TagLen
		}
		if len(pc.Data) != n {
			return fmt.Errorf("%w: from rank %d, step %#x: %d bytes for %d blocks of %d (do the ranks disagree on the all-gather's size?)",
				errProtocol, src, step, len(pc.Data), len(pc.Origins), st.m)
		}
		if !pc.Sealed && inter {
			return &tamperError{origins: pc.Origins, encrypter: src, how: "plaintext between nodes in place"}
		}
	}
	if got != len(want) {
		return fmt.Errorf("%w: from rank %d, step %#x: %d blocks, %d due", errProtocol, src, step, got, len(want))
	}
	// The pieces' data follow the table in order and end the frame.
	end := len(b)
	offs := slices.Grow(st.offs[:0], len(f.Pieces))[:len(f.Pieces)]
	st.offs = offs
	for i := len(f.Pieces) - 1; i >= 0; i-- {
		end -= len(f.Pieces[i].Data)
		offs[i] = end
	}
	for i, pc := range f.Pieces {
		if !pc.Sealed {
			for x, o := range pc.Origins {
				copy(st.buf[o*st.m:(o+1)*st.m], pc.Data[x*st.m:])
				st.hasPlain[o] = true
			}
			continue
		}
		p := &piece{origins: pc.Origins, enc: pc.Encrypter, ctr: pc.Counter, data: pc.Data, off: -1}
		if off >= 0 {
			p.off = off + offs[i]
		}
		for _, o := range pc.Origins {
			st.ct[o] = p
		}
		if !st.lazy {
			if err := st.open(p); err != nil {
				return fmt.Errorf("from rank %d, step %#x: %w", src, step, err)
			}
		}
	}
	return nil
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
	in, off, err := st.rxBuf(src, len(want))
	if err != nil {
		return err
	}
	n, err := st.g.w.sendrecv(dst, f, src, in, tagOf(step))
	if err != nil {
		return fmt.Errorf("step %#x, to rank %d and from rank %d: %w", step, dst, src, err)
	}
	return st.accept(src, step, want, in[:n], off)
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
	if err := st.g.w.send(dst, f, tagOf(step)); err != nil {
		return fmt.Errorf("step %#x, to rank %d: %w", step, dst, err)
	}
	return nil
}

func (st *state) recvOnly(step, src int, want []int) error {
	in, off, err := st.rxBuf(src, len(want))
	if err != nil {
		return err
	}
	n, err := st.g.w.recv(src, in, tagOf(step))
	if err != nil {
		return fmt.Errorf("step %#x, from rank %d: %w", step, src, err)
	}
	return st.accept(src, step, want, in[:n], off)
}

// arena hands out the buffers of one all-gather from chunks it keeps, as
// channel/encrypt's does: a run of all-gathers allocates little once warm.
type arena struct {
	chunks [][]byte
	i, off int
}

const arenaChunk = 256 << 10

func (a *arena) reset() { a.i, a.off = 0, 0 }

// alloc returns n bytes, not zeroed: every caller writes them all, or
// receives into them.
func (a *arena) alloc(n int) []byte {
	for a.i < len(a.chunks) {
		c := a.chunks[a.i]
		if len(c)-a.off >= n {
			b := c[a.off : a.off+n : a.off+n]
			a.off += n
			return b
		}
		if a.off == 0 && len(c) < n {
			a.chunks[a.i] = make([]byte, max(n, arenaChunk))
			continue
		}
		a.i++
		a.off = 0
	}
	c := make([]byte, max(n, arenaChunk))
	a.chunks = append(a.chunks, c)
	a.i, a.off = len(a.chunks)-1, n
	return c[:n:n]
}

// bump hands out a fixed region (of the node's shared memory) in order.
type bump struct {
	buf []byte
	off int
}

func (b *bump) alloc(n int) ([]byte, int, bool) {
	if n > len(b.buf)-b.off {
		return nil, 0, false
	}
	s := b.buf[b.off : b.off+n : b.off+n]
	off := b.off
	b.off += n
	return s, off, true
}

func le64(b []byte) uint64     { return binary.LittleEndian.Uint64(b) }
func put64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
func le32(b []byte) uint32     { return binary.LittleEndian.Uint32(b) }
func put32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }
