package channel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/internal/wire"
	"github.com/sigcheck/sigcheck/tree"
)

// How a protected message goes out: its frames with their checksums, or
// for Merkle its frames, parity and root, the hashing overlapped with the
// transfer (transmit, transmitBeside), its checks computed ahead of its
// turn when it waits behind other sends (preHash); and the control frames
// the sender sends about it.

// merkleChunk is the payload of a Merkle message's frames: as many whole
// segments as a frame holds, or over a transport that moves messages in
// pieces (transport.Piecer: TCP) as a piece holds. Each frame
// is hashed while the receiver copies out another (transmit), so that a
// large message's hashing overlaps its transfer, where in one frame of
// MaxFrame the root would be computed before any byte was written
// (BenchmarkProtectionOverhead/transport=tcp/size=1MiB measures Merkle
// over unprotected). In process, where the receiver's copy is the write,
// smaller frames gain nothing.
func merkleChunk(seg, piece int) int {
	n := MaxFrame
	if piece > 0 {
		n = min(piece, MaxFrame)
	}
	return max(seg, n/seg*seg)
}

// rootInline says whether a Merkle message of n bytes goes as one frame
// with its root in the header (transmit), rather than in frames followed
// by a trailer with the root. Over a transport whose large frames are
// still being read after they are posted (transport.Poster: Open MPI), a
// frame of more than postedRootInline goes without its root, and the
// sender hashes it while the receiver copies it: the trailer costs less
// than the sender's pass over the message before the frame could leave.
func (p *protection) rootInline(n int, piece int, posted bool) bool {
	return n <= merkleChunk(p.seg, piece) && p.parity == 0 && p.h.Size() == 8 && !(posted && n > postedRootInline)
}

// postedRootInline is the largest Merkle message that goes with its root
// inline over a transport.Poster: Open MPI's frames of at most 16 KiB of
// payload are copied out with their header, and Post returns with
// nothing left to overlap.
const postedRootInline = 16 << 10

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
	piece := s.e.caps.piece
	chunk := merkleChunk(seg, piece)
	if s.e.ctl.inline && len(s.data) > hashPiece && runtime.GOMAXPROCS(0) > 1 {
		return s.transmitBeside(ctx, chunk)
	}
	if s.p.rootInline(len(s.data), piece, s.e.caps.post != nil) {
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
	if p := s.e.caps.post; p != nil && len(s.data) <= chunk && s.dst != s.e.rank {
		// One frame over a transport.Poster: hashed while it is read.
		h.Plen = len(s.data)
		finish, err := s.e.postFrame(ctx, p, s.dst, &h, s.data)
		if err != nil {
			return err
		}
		t.HashSegments(s.data, 0, max(1, (len(s.data)+seg-1)/seg))
		t.Finish()
		// The root goes as soon as it is known, behind the frame, while
		// the receiver may still be reading the payload.
		err = s.transmitRest(ctx)
		if ferr := finish(); err == nil {
			err = ferr
		}
		return err
	}
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
// where delivering it is a call into the receiver (transport.Caller),
// s.inCall is set if the receiver verified the message in that call:
// its OK is this send's to take (sendProtectedIn), not a control frame.
// Only in the send's first transmit (s.first): a frame sent again (a
// verdictUnknown) is answered as any other, in await.
func (s *sender) frameOne(ctx context.Context, h *wire.Header) error {
	if lt := s.e.caps.call; lt != nil && s.first && s.dst != s.e.rank {
		verified, err := lt.SendCall(ctx, s.dst, *h, s.data)
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
	case p.rootInline(len(data), e.caps.piece, e.caps.post != nil):
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
