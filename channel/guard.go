package channel

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/wire"
	"github.com/sigcheck/sigcheck/tree"
)

// guard is the receiving side of a protected message: it checks each
// frame as it arrives (a checksum per chunk, or the segments' leaves),
// and once the message is whole drives the repair — resend requests, or
// the descent and parity — until the message is right or given up.
// Its methods run on the transport goroutine of the message's sender,
// one frame at a time; those with e.mu held are marked.
type guard struct {
	p         *protection
	dataDone  bool
	discarded bool // the receiver threw the message away and told its sender
	probed    bool // the sender's probe found the data short: the rest was taken as lost

	needStamp bool // a datatype stamp goes with the message and has not come whole
	waitStamp bool // the message is verified and waits for its stamp
	stampAsks int  // times the stamp was asked for

	// checksum
	alg    *csum.Algorithm
	algIdx byte            // alg's number in the frames' flags
	bad    []span          // chunks found corrupted on arrival, not yet asked again
	again  []span          // chunks that came back corrupted, not yet asked again
	want   map[int64]int64 // chunks asked again in this round, not yet back: offset → length

	// merkle
	t        *tree.Tree
	hashed   int // leaves hashed so far
	finished bool
	root     csum.Value
	haveRoot bool
	d        *tree.Descent
	req      tree.Request       // the descent's request in hand, asked for in parts
	part     int                // the part of req asked for now
	got      []csum.Value       // the hashes of req's parts answered so far
	corrupt  int                // corrupt answers in a row
	expect   map[int]csum.Value // segments wanted again, and the hash each must have
	queue    []int              // of those, the ones not asked for yet (more than a verdict holds)
	out      int                // segments asked for in this round, not yet back
	retry    []int              // segments that came back corrupted in this round
	shards   map[int][]byte     // parity segments received

	rounds   int
	ctl      int   // control frames sent
	asks     int64 // questions asked: each carries its number (Offset), and its answer the same
	answered int64 // the last question whose answer was acted on: a duplicate of it is dropped
	last     ctlFrame
}

type span struct{ off, n int64 }

// open sets up the guard, zero until now (it is part of its message),
// for the message that h opens.
func (g *guard) open(p *protection, h wire.Header) error {
	g.p = p
	switch p.mode {
	case modeChecksum:
		g.algIdx = h.Flags &^ flagStamped
		if g.alg = algByIndex(g.algIdx); g.alg == nil {
			return fmt.Errorf("%w: checksum algorithm %d", ErrProtocol, g.algIdx)
		}
	case modeMerkle:
		if h.Total/int64(p.seg) > 1<<40 {
			return fmt.Errorf("%w: %d bytes in %d-byte segments", ErrProtocol, h.Total, p.seg)
		}
		if h.Flags&^flagStamped == flagRootInline {
			g.root, g.haveRoot = csum.Value{Lo: h.Sum}, true
		}
	}
	return nil
}

// discard tells the sender that the receiver has thrown the message away
// and why, so that its Send ends (with a *DiscardError) instead of
// waiting for a verdict that would never come. A message whose bytes are
// all in leaves the engine now; one still coming is read to its end and
// dropped. Under e.mu.
func (g *guard) discard(e *engine, m *message, reason byte) {
	if g.discarded || m.done {
		return
	}
	g.discarded = true
	g.final(e, m, []byte{verdictDiscarded, reason})
	if g.dataDone {
		e.complete(m, errDiscarded)
	}
}

// onData checks the frame just written at h.Offset of buf (the message's
// bytes up to the frame's end). Not under e.mu.
func (g *guard) onData(e *engine, buf []byte, h wire.Header) {
	switch g.p.mode {
	case modeChecksum:
		p := buf[h.Offset:]
		if fold(g.alg.Sum(p)) != h.Sum || h.Flags&^flagStamped != g.algIdx {
			e.stats.detected.Add(1)
			g.bad = append(g.bad, span{h.Offset, int64(len(p))})
		}
	case modeMerkle:
		if g.t == nil {
			return // hashed once whole: see ensureTree
		}
		upto := len(buf) / g.p.seg
		if int64(len(buf)) == g.t.Size() {
			upto = g.t.Segments()
		}
		if upto > g.hashed {
			g.t.HashSegments(buf, g.hashed, upto)
			g.hashed = upto
		}
	}
}

// hashesLeaves says whether onData hashes segments as bytes come (a
// Merkle message written in place), which it can do piece by piece.
func (g *guard) hashesLeaves() bool { return g.p.mode == modeMerkle && g.t != nil }

// startTree makes the tree as the message opens, when its bytes go
// straight into a receive's buffer (whose length bounds what the header
// claims); a message that waits in its own buffer gets its tree once
// whole, so that nothing is allocated on a header's word. A message of
// one frame with its root inline gets none unless the roots differ
// (verifyRoot), or unless it is of more than one hashPiece (a frame
// holds up to 1 MiB): then it too is hashed piece by piece as it is
// written in, each piece from the cache (over TCP, each piece after its
// read), rather than all of it after. Under e.mu.
func (g *guard) startTree(m *message) {
	if g.p.mode == modeMerkle && m.direct && g.t == nil && (!g.haveRoot || m.total > int64(hashPiece)) {
		g.t, _ = g.p.newTree(m.total)
	}
}

// step advances the protocol once the data is whole. Under e.mu.
func (g *guard) step(e *engine, m *message) {
	switch g.p.mode {
	case modeChecksum:
		if len(g.want) > 0 {
			return // a round is out
		}
		if len(g.bad) == 0 && len(g.again) == 0 {
			g.accept(e, m)
			return
		}
		g.resendRanges(e, m)
	case modeMerkle:
		if !g.haveRoot {
			return // the trailer will come
		}
		g.verifyRoot(e, m)
	}
}

func (g *guard) ensureTree(m *message) {
	if g.t == nil {
		g.t, _ = g.p.newTree(m.total)
	}
	if g.hashed < g.t.Segments() {
		g.t.HashSegments(m.buf(), g.hashed, g.t.Segments())
		g.hashed = g.t.Segments()
	}
	if !g.finished {
		g.t.Finish()
		g.finished = true
	}
}

// verifyRoot compares the roots, and descends if they differ.
func (g *guard) verifyRoot(e *engine, m *message) {
	if g.t == nil { // not hashed as it came: most often a small message, which needs no tree if all is well
		if root, err := g.p.h.Root(m.buf(), g.p.seg); err == nil && root == g.root {
			g.accept(e, m)
			return
		}
	}
	g.ensureTree(m)
	if g.t.Root() == g.root {
		g.accept(e, m)
		return
	}
	g.d = tree.NewDescent(g.t, g.root)
	g.corrupt = 0
	g.askNext(e, m)
}

// askNext sends the descent's next request, or acts on what it found.
//
// A request for more nodes than a frame's answer holds goes in parts of
// maxListed nodes, one exchange each, and the descent hears the whole
// answer at once.
func (g *guard) askNext(e *engine, m *message) {
	if g.part == 0 {
		req, more := g.d.Request()
		if !more {
			g.descended(e, m)
			return
		}
		g.req, g.got = req, g.got[:0]
	}
	g.askPart(e, m)
}

// askPart asks for the current part of the request in hand.
func (g *guard) askPart(e *engine, m *message) {
	lo := g.part * maxListed
	part := tree.Request{Nodes: g.req.Nodes[lo:min(lo+maxListed, len(g.req.Nodes))]}
	b, err := part.AppendBinary([]byte{askNodes})
	if err != nil {
		g.fail(e, m, err)
		return
	}
	g.control(e, m, wire.KindAsk, b)
}

// descended has the corrupted segments: rebuilt from parity if it can,
// else asked again.
func (g *guard) descended(e *engine, m *message) {
	faulty := g.d.Faulty()
	e.stats.detected.Add(uint64(len(faulty)))
	if len(faulty) == 0 {
		g.fail(e, m, errors.New("the roots differ but no segment does"))
		return
	}
	g.expect = map[int]csum.Value{}
	for _, j := range faulty {
		v, _ := g.d.Expected(j)
		g.expect[j] = v
	}
	if g.p.parity > 0 && g.rebuild(m, faulty) {
		e.stats.repaired.Add(uint64(len(faulty)))
		if g.t.Root() == g.root {
			g.accept(e, m)
			return
		}
	}
	g.queue = faulty
	g.resendSegments(e, m, true)
}

// rebuild tries the parity received on the faulty segments.
func (g *guard) rebuild(m *message, faulty []int) bool {
	par, err := tree.ParityLayout(m.total, g.p.seg, g.p.parity)
	if err != nil {
		return false
	}
	par.Shards = make([][]byte, par.Stripes()*par.P)
	for i, s := range g.shards {
		if i < len(par.Shards) {
			par.Shards[i] = s
		}
	}
	if m.direct {
		m.writing.Lock()
		defer m.writing.Unlock()
	}
	err = par.Repair(m.buf(), g.t, faulty, func(j int) (csum.Value, bool) {
		v, ok := g.expect[j]
		return v, ok
	})
	return err == nil
}

// resendSegments asks for the next segments of g.queue, at most
// maxListed. A round counts against the limit of rounds only when it asks
// again for segments that came back corrupted (again): a message with
// more damaged segments than a verdict lists takes more exchanges, but
// each of them makes progress.
func (g *guard) resendSegments(e *engine, m *message, again bool) {
	if again {
		g.rounds++
		e.stats.rounds.Add(1)
		if g.rounds > g.p.rounds {
			g.fail(e, m, fmt.Errorf("still corrupted after %d rounds", g.p.rounds))
			return
		}
	}
	n := min(len(g.queue), maxListed)
	segs := g.queue[:n]
	g.queue = g.queue[n:]
	g.retry, g.out = g.retry[:0], n
	b := appendResendHead(nil, verdictSegments, n)
	for _, j := range segs {
		b = appendSegment(b, j)
	}
	g.control(e, m, wire.KindVerdict, b)
}

// resendRanges asks again for chunks found corrupted, at most maxListed:
// first those that came back corrupted (which count as a round), then
// those found on arrival.
func (g *guard) resendRanges(e *engine, m *message) {
	if len(g.again) > 0 {
		g.rounds++
		e.stats.rounds.Add(1)
		if g.rounds > g.p.rounds {
			g.fail(e, m, fmt.Errorf("still corrupted after %d rounds", g.p.rounds))
			return
		}
	}
	if g.want == nil {
		g.want = map[int64]int64{}
	}
	n := min(len(g.again)+len(g.bad), maxListed)
	b := appendResendHead(nil, verdictRanges, n)
	for range n {
		var s span
		if len(g.again) > 0 {
			s, g.again = g.again[0], g.again[1:]
		} else {
			s, g.bad = g.bad[0], g.bad[1:]
		}
		g.want[s.off] = s.n
		b = appendRange(b, s.off, s.n)
	}
	g.control(e, m, wire.KindVerdict, b)
}

// onRepair takes a resent part, already written at h.Offset; ok says
// whether it checked. Under e.mu.
func (g *guard) onRepair(e *engine, m *message, h wire.Header) {
	switch g.p.mode {
	case modeChecksum:
		if n, asked := g.want[h.Offset]; !asked || n != int64(h.Plen) {
			return // not asked for: ignored
		}
		delete(g.want, h.Offset)
		if fold(g.alg.Sum(m.buf()[h.Offset:h.Offset+int64(h.Plen)])) == h.Sum {
			e.stats.repaired.Add(1)
		} else {
			e.stats.detected.Add(1)
			g.again = append(g.again, span{h.Offset, int64(h.Plen)})
		}
		if len(g.want) == 0 {
			g.step(e, m)
		}
	case modeMerkle:
		seg := int64(g.p.seg)
		j := int(h.Offset / seg)
		want, asked := g.expect[j]
		if !asked || h.Offset%seg != 0 {
			return
		}
		delete(g.expect, j)
		if m.direct {
			m.writing.Lock()
		}
		g.t.Update(m.buf(), j)
		if m.direct {
			m.writing.Unlock()
		}
		g.out--
		if g.t.Node(g.t.Leaf(j)) == want {
			e.stats.repaired.Add(1)
		} else {
			e.stats.detected.Add(1)
			g.retry = append(g.retry, j)
			g.expect[j] = want // still wanted, in the next round
		}
		if g.out > 0 {
			return // more to come in this round
		}
		if len(g.retry) > 0 || len(g.queue) > 0 {
			slices.Sort(g.retry)
			g.queue = append(slices.Clone(g.retry), g.queue...)
			g.resendSegments(e, m, len(g.retry) > 0)
			return
		}
		if g.t.Root() == g.root {
			g.accept(e, m)
			return
		}
		g.verifyRoot(e, m) // something else is wrong: descend again
	}
}

// onTrailer takes the sender's root. Under e.mu.
func (g *guard) onTrailer(e *engine, m *message, b []byte, ok bool) {
	if !ok {
		g.control(e, m, wire.KindAsk, []byte{askRoot})
		return
	}
	v, _, err := tree.DecodeRoot(b)
	if err != nil {
		g.fail(e, m, err)
		return
	}
	g.root, g.haveRoot = v, true
	if g.dataDone && len(g.expect) == 0 {
		g.verifyRoot(e, m)
	}
}

// onAnswer takes the sender's answer to the descent: to the question
// asked last (asked), else it is a stale or duplicated one, dropped —
// applied to a later question it would be taken for a corrupt answer.
// Under e.mu.
func (g *guard) onAnswer(e *engine, m *message, b []byte, ok bool, asked int64) {
	if g.d == nil || asked != g.asks || asked == g.answered {
		return // an answer to another question, or one acted on already (a duplicate)
	}
	if !ok {
		g.askNext(e, m) // the same request again
		return
	}
	g.answered = asked
	a, _, err := tree.DecodeAnswer(b)
	if err == nil {
		lo := g.part * maxListed
		if want := min(len(g.req.Nodes)-lo, maxListed); len(a.Hashes) != want {
			err = fmt.Errorf("%w: %d hashes for %d nodes", tree.ErrCorruptAnswer, len(a.Hashes), want)
		}
	}
	if err == nil {
		g.got = append(g.got, a.Hashes...)
		if len(g.got) < len(g.req.Nodes) {
			g.corrupt = 0
			g.part++
			g.askPart(e, m)
			return
		}
		g.part = 0
		err = g.d.Answer(tree.Answer{Hashes: g.got})
	}
	switch {
	case err == nil:
		g.corrupt = 0
		g.askNext(e, m)
	case errors.Is(err, tree.ErrCorruptAnswer) && g.corrupt < 3:
		g.corrupt++
		if g.corrupt == 3 { // perhaps the root itself: ask for it again
			g.haveRoot = false
			g.part = 0
			g.control(e, m, wire.KindAsk, []byte{askRoot})
			return
		}
		g.askPart(e, m) // the same part again
	default:
		g.fail(e, m, err)
	}
}

// onParity keeps a parity segment (a corrupted one is dropped: the code
// treats it as missing). Under e.mu.
func (g *guard) onParity(e *engine, m *message, h wire.Header, b []byte, ok bool) {
	if !ok || g.p.parity == 0 || len(b) != g.p.seg || h.Offset < 0 || h.Offset > m.total/int64(g.p.seg)*int64(g.p.parity)+int64(g.p.parity) {
		return
	}
	if g.shards == nil {
		g.shards = map[int][]byte{}
	}
	g.shards[int(h.Offset)] = keep(b) // b is lent (arriveControl)
}

// control sends a control frame about m to its sender (through the
// control queue) and remembers it for KindAgain. Under e.mu.
func (g *guard) control(e *engine, m *message, kind byte, payload []byte) {
	g.ctl++
	limit := 64 + 8*g.p.rounds
	if g.p.mode == modeMerkle {
		limit += 4 * treeDepth(m.total, g.p.seg) * g.p.rounds
	}
	if g.ctl > limit && kind != wire.KindVerdict {
		g.fail(e, m, fmt.Errorf("no agreement after %d control frames", limit))
		return
	}
	h := wire.Header{Kind: kind, Ctx: m.ctx, Tag: m.tag, ID: m.id, Total: m.total}
	switch kind {
	case wire.KindAgain:
		h.Offset = againToSender
	case wire.KindAsk:
		g.asks++
		h.Offset = g.asks
	}
	g.last = ctlFrame{m.src, h, payload}
	e.ctl.push(m.src, h, payload)
}

// resendLast answers a KindAgain: the sender's last control frame came
// corrupted, or none came (the sender's probe). Under e.mu.
func (g *guard) resendLast(e *engine, m *message) {
	switch {
	case g.last.h.Kind != 0:
		g.ctl++
		e.ctl.push(g.last.dst, g.last.h, g.last.payload)
	case !g.dataDone:
		g.lostTail(e, m)
	case g.p.mode == modeMerkle && !g.haveRoot:
		g.control(e, m, wire.KindAsk, []byte{askRoot}) // the trailer was lost
	}
}

// lostTail takes the bytes of m that have not come when the sender's
// probe does as lost: links keep order, so every frame sent before the
// probe is in. They are then repaired as corrupted ones are: resent
// chunks, or the segments the descent finds. Under e.mu.
func (g *guard) lostTail(e *engine, m *message) {
	if !m.direct && m.total > e.limit {
		g.fail(e, m, fmt.Errorf("%d of %d bytes lost, more than this rank holds (WithHeldLimit)", m.total-m.got, m.total))
		return
	}
	if !m.direct && int64(cap(m.own)) < m.total {
		grown := make([]byte, len(m.own), m.total)
		copy(grown, m.own)
		m.own = grown
	}
	if !m.direct {
		m.own = m.own[:m.total]
	}
	if g.p.mode == modeChecksum {
		for off := m.got; off < m.total; off += int64(g.p.chunk) {
			g.bad = append(g.bad, span{off, min(int64(g.p.chunk), m.total-off)})
		}
	}
	e.stats.detected.Add(1)
	g.probed = true
	m.got = m.total
	g.dataDone = true
	g.step(e, m)
}

// onStamp takes the message's datatype stamp, asked for again. Under e.mu.
func (g *guard) onStamp(e *engine, m *message, st stamp) {
	m.stamp = st
	if !st.ok {
		e.stats.detected.Add(1)
		return // asked again when the message is verified, or now:
	}
	g.needStamp = false
	if g.waitStamp {
		g.waitStamp = false
		g.accept(e, m)
	}
}

// accept ends a verified message: once its datatype stamp, if it has one,
// has come whole (it is asked for again, a few times, before the message
// fails on both sides).
func (g *guard) accept(e *engine, m *message) {
	if g.needStamp || m.stamp.b != nil && !m.stamp.ok {
		if g.stampAsks++; g.stampAsks > 3 {
			g.fail(e, m, errors.New("its datatype stamp never came whole"))
			return
		}
		g.needStamp, g.waitStamp = true, true
		g.control(e, m, wire.KindAsk, []byte{askStamp})
		return
	}
	// The receive first: its goroutine wakes while the verdict is made
	// (both under e.mu, so nothing sees one without the other).
	e.complete(m, nil)
	g.final(e, m, okVerdict)
}

func (g *guard) fail(e *engine, m *message, err error) {
	g.final(e, m, failVerdict)
	e.stats.bad.Add(1)
	e.complete(m, fmt.Errorf("%w: message %d from rank %d: %v", ErrCorrupted, m.id, m.src, err))
}

// final sends the final verdict (body) three times over (flagTriple),
// and remembers it for a sender that asks again. Under e.mu.
func (g *guard) final(e *engine, m *message, body []byte) {
	g.ctl++
	h := verdictHeader(m.ctx, m.tag, m.id, m.total)
	p := triple(body)
	g.last = ctlFrame{m.src, h, p}
	if len(body) == 1 && body[0] == verdictOK && m == e.syncMsg {
		e.syncOK = true // arriveSync's caller hands it to the sender
	} else if len(body) == 1 && body[0] == verdictOK && e.ctl.holding() {
		e.ctl.hold(m.src, h, p) // it goes with the next frame to m.src (ctl.go)
	} else {
		e.ctl.push(m.src, h, p)
	}
	e.remember(m, body)
}

// remember keeps the final verdict (body) of a finished message for a
// while: if it reaches the sender corrupted, the sender asks for it again
// after the message has left the engine. Under e.mu.
func (e *engine) remember(m *message, body []byte) {
	const keep = 4096
	if e.recent == nil {
		e.recent = make([]recentVerdict, keep)
	}
	old := &e.recent[e.recentNext%keep]
	if old.n != 0 && old.id > e.forgotten[old.rank] {
		e.forgotten[old.rank] = old.id
	}
	if len(body) > len(recentVerdict{}.body) {
		panic(fmt.Sprintf("channel: a final verdict of %d bytes does not fit the ring", len(body)))
	}
	v := recentVerdict{id: m.id, tag: m.tag, total: m.total, ctx: m.ctx, rank: int32(m.src)}
	v.n = uint8(copy(v.body[:], body))
	*old = v
	e.recentNext++
}

// A ring, not a map: every message is remembered and almost none is asked
// for again, and a map of 4096 keys churned once per message (an insert
// and a delete, each hashing its key, and the map's growth and cleanup)
// was a large share of the CPU of a small protected message, where a
// ring's slot is one store.
//
// An entry holds what makes the verdict's frame again, in 40 bytes, so
// that the ring is 160 KiB a rank; with the frame itself (ctlFrame, 128
// bytes with its key) it was 512 KiB. (Its speed measured the same.)
type recentVerdict struct {
	id    uint64
	tag   int64
	total int64
	ctx   uint32
	rank  int32
	body  [2]byte // a final verdict's body: 1 byte, or 2 (verdictDiscarded and its reason)
	n     uint8   // of body; 0 for a slot never filled
}

// recentVerdict finds the verdict remembered for k, newest first. Under e.mu.
func (e *engine) recentVerdict(k msgKey) (ctlFrame, bool) {
	n := uint64(len(e.recent))
	for i := uint64(1); i <= min(e.recentNext, n); i++ {
		if r := &e.recent[(e.recentNext-i)%n]; r.id == k.id && int(r.rank) == k.rank && r.n != 0 {
			return ctlFrame{k.rank, verdictHeader(r.ctx, r.tag, r.id, r.total), triple(r.body[:r.n])}, true
		}
	}
	return ctlFrame{}, false
}

// arriveRepair writes a resent part of a protected message in place.
func (e *engine) arriveRepair(src int, h wire.Header, fill func([]byte) error) error {
	e.mu.Lock()
	m := e.inflight.get(src, h.ID)
	if m == nil || m.g == nil || m.discard || !m.g.dataDone || h.Total != m.total {
		e.mu.Unlock()
		_, err := readSmall(h.Plen, fill) // late or stray: read and dropped
		return err
	}
	dst := m.buf()[h.Offset : h.Offset+int64(h.Plen)]
	direct := m.direct
	if direct {
		m.writing.Lock()
	}
	m.repairing++
	e.mu.Unlock()
	err := fill(dst)
	if direct {
		m.writing.Unlock()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	m.repairing--
	if err != nil {
		return err
	}
	if !m.discard && !m.done {
		m.g.onRepair(e, m, h)
	}
	return nil
}
