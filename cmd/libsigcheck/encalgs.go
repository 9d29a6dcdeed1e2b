package main

// The schedules of the encrypted all-gather, as channel/encrypt runs
// them (its algs.go says why each is built so), over the engine of
// encgather.go. HS1 and HS2 keep their buffers in the node's shared
// memory, laid out by hsLayoutOf.

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/sigcheck/sigcheck/channel/encrypt"
)

// Phases of the steps, which frames carry (and tagOf folds into a tag).
const (
	phaseMain   = 1 << 20 // the all-gather among all ranks, a group, or the leaders
	phaseLocal  = 2 << 20 // C-Ring, C-RD: the all-gather inside a node
	phaseExtras = 3 << 20 // C-Ring, C-RD: a node's ranks beyond the smallest node's count
	stepFold    = 0
	stepUnfold  = 1<<20 - 1
)

// run is the algorithm's schedule on this rank.
func (st *state) run(send []byte) error {
	g := st.g
	all := make([]int, g.p)
	for i := range all {
		all[i] = i
	}
	single := func(i int) []int { return []int{i} }
	switch st.alg {
	case encrypt.Naive:
		// Every rank seals its own block, the ciphertexts are all-gathered
		// as they are (inside nodes too), and each opens the p-1 it got.
		st.lazy = true
		st.ct[g.rank] = st.seal(st.ar.alloc(st.m+encrypt.TagLen), []int{g.rank})
		if err := st.rd(phaseMain, all, single); err != nil {
			return err
		}
		return st.openAll()
	case encrypt.ORing:
		return st.ring(phaseMain, all, single)
	case encrypt.ORD, encrypt.ORD2:
		return st.rd(phaseMain, all, single)
	case encrypt.CRing, encrypt.CRD:
		return st.concurrent()
	case encrypt.HS1, encrypt.HS2:
		return st.hierarchical(send)
	}
	return fmt.Errorf("no algorithm %d", int(st.alg))
}

// openAll opens every ciphertext still sealed.
func (st *state) openAll() error {
	for o, pc := range st.ct {
		if pc != nil && !st.hasPlain[o] {
			if err := st.open(pc); err != nil {
				return err
			}
		}
	}
	return nil
}

func indexOf(ms []int, r int) int {
	for i, x := range ms {
		if x == r {
			return i
		}
	}
	return -1
}

func union(contrib func(int) []int, idx ...int) []int {
	var u []int
	for _, i := range idx {
		u = append(u, contrib(i)...)
	}
	return u
}

// rd is recursive doubling among the members ms (ranks), member i
// starting with the blocks contrib(i). For a member count n that is not a
// power of two, q = 2^⌊lg n⌋: members q… first fold their blocks into
// members 0…, which double among themselves, then give them back.
func (st *state) rd(phase int, ms []int, contrib func(int) []int) error {
	n, i := len(ms), indexOf(ms, st.g.rank)
	st.preseal(ms, contrib(i))
	q := 1 << (bits.Len(uint(n)) - 1)
	withFold := func(j int) []int {
		if j+q < n {
			return union(contrib, j, j+q)
		}
		return contrib(j)
	}
	group := func(j, b int) []int { // what member j < q holds before the step of distance b
		var u []int
		for k := j &^ (b - 1); k < (j&^(b-1))+b; k++ {
			u = append(u, withFold(k)...)
		}
		return u
	}
	if i >= q {
		if err := st.sendOnly(phase|stepFold, ms[i-q], contrib(i)); err != nil {
			return err
		}
	} else if i+q < n {
		if err := st.recvOnly(phase|stepFold, ms[i+q], contrib(i+q)); err != nil {
			return err
		}
	}
	if i < q {
		for b := 1; b < q; b <<= 1 {
			j := i ^ b
			if err := st.exchange(phase|bits.Len(uint(b)), ms[j], group(i, b), ms[j], group(j, b)); err != nil {
				return err
			}
		}
	}
	rest := func(skip int) []int {
		var u []int
		for k := range n {
			if k != skip {
				u = append(u, contrib(k)...)
			}
		}
		return u
	}
	if i+q < n {
		return st.sendOnly(phase|stepUnfold, ms[i+q], rest(i+q))
	} else if i >= q {
		return st.recvOnly(phase|stepUnfold, ms[i-q], rest(i))
	}
	return nil
}

// preseal seals a member's own blocks before anything arrives, when
// every member is on a node of its own (C-Ring, C-RD, the HS leaders):
// its first step between nodes sends them, and sealing them after a fold
// step's arrival would put two encryptions on the critical path.
func (st *state) preseal(ms []int, own []int) {
	if st.alg == encrypt.ORD2 || st.alg == encrypt.Naive || len(own) == 0 || len(ms) < 2 {
		return
	}
	seen := st.next()
	for _, r := range ms {
		k := st.g.lay.Ranks(st.g.lay.Node(r))[0] // the node, by its first rank
		if st.mark[k] == seen {
			return
		}
		st.mark[k] = seen
	}
	for _, o := range own {
		if st.ct[o] != nil {
			return
		}
	}
	pc := st.seal(st.ar.alloc(len(own)*st.m+encrypt.TagLen), own)
	for _, o := range own {
		st.ct[o] = pc
	}
}

// ring is the ring among ms: at step s member i passes on the blocks of
// member i-s and takes those of member i-s-1.
func (st *state) ring(phase int, ms []int, contrib func(int) []int) error {
	n, i := len(ms), indexOf(ms, st.g.rank)
	st.preseal(ms, contrib(i))
	right, left := ms[(i+1)%n], ms[(i-1+n)%n]
	for s := range n - 1 {
		if err := st.exchange(phase|s, right, contrib((i-s+n)%n), left, contrib((i-s-1+n)%n)); err != nil {
			return err
		}
	}
	return nil
}

// concurrent is C-Ring and C-RD: the ranks of local index j (one per
// node) run an encrypted all-gather among themselves, each sealing its
// block once and forwarding the others' ciphertexts; then each node
// all-gathers in the clear what its ranks got. When nodes hold different
// numbers of ranks, those beyond the smallest node's count ℓmin first
// hand their block to the rank of index j mod ℓmin, which carries it.
func (st *state) concurrent() error {
	g := st.g
	lay := g.lay
	lmin, _ := lay.PerNode()
	k, j := lay.Node(g.rank), lay.Local(g.rank)
	mine := lay.Ranks(k)
	carried := func(node, grp int) []int {
		var u []int
		for x, r := range lay.Ranks(node) {
			if x%lmin == grp {
				u = append(u, r)
			}
		}
		return u
	}
	if j >= lmin {
		if err := st.sendOnly(phaseExtras, mine[j%lmin], []int{g.rank}); err != nil {
			return err
		}
	} else {
		for x := j + lmin; x < len(mine); x += lmin {
			if err := st.recvOnly(phaseExtras, mine[x], []int{mine[x]}); err != nil {
				return err
			}
		}
		ms := make([]int, lay.Nodes())
		for node := range ms {
			ms[node] = lay.Ranks(node)[j]
		}
		contrib := func(node int) []int { return carried(node, j) }
		var err error
		if st.alg == encrypt.CRing {
			err = st.ring(phaseMain, ms, contrib)
		} else {
			err = st.rd(phaseMain, ms, contrib)
		}
		if err != nil {
			return err
		}
	}
	local := func(x int) []int {
		if x >= lmin {
			return nil
		}
		var u []int
		for node := range lay.Nodes() {
			u = append(u, carried(node, x)...)
		}
		return u
	}
	if st.alg == encrypt.CRing {
		return st.ring(phaseLocal, mine, local)
	}
	return st.rd(phaseLocal, mine, local)
}

// hsLayout places HS1's and HS2's buffers in one half of the node's
// shared memory (there are two, by the parity of the all-gather, so that
// a rank may start the next all-gather while another still copies out
// of this one):
//
//	ctl     three counters, a cache line each (hierarchical)
//	plain   p·m      every rank's block, in the clear
//	own     ℓ slots  HS2: each local rank's sealed block (m + tag)
//	ctrs    ℓ × 8    HS2: the counter each sealed it under
//	dir     the leader's list of the other nodes' ciphertexts:
//	        count u32, then 0 (the node's ranks share out their opening)
//	        or 1 (the leader opened them and lists none) u32, then per
//	        piece: offset u64, length u32, encrypter u32, counter u64,
//	        origins u32, origins × u32
//	region  the frames the leader receives from the other leaders,
//	        where its node's ranks open them
type hsLayout struct {
	plain, own, ctrs, dir, region, regionLen, half int
}

const (
	ctlArrived = 0   // ranks that have put their block in (all-gathers × ℓ)
	ctlDir     = 64  // the all-gather whose list the leader has written
	ctlOpened  = 128 // ranks that have opened their share (shared openings × ℓ)
	ctlLen     = 192
)

// maxHSHalf bounds one half of the node's shared memory (the window is
// twice this): an all-gather that needs more runs C-Ring instead.
const maxHSHalf = 256 << 20

// hsLayoutOf lays out a half for p ranks, l of them on this node (the
// largest node's count, so that every node decides alike), nodes nodes,
// blocks of m bytes; false if it would exceed maxHSHalf.
func hsLayoutOf(p, l, nodes, m int) (hsLayout, bool) {
	if int64(p)*int64(m+encrypt.TagLen+64) > maxHSHalf {
		return hsLayout{}, false
	}
	align := func(n int) int { return (n + 63) &^ 63 }
	h := hsLayout{plain: ctlLen}
	h.own = align(h.plain + p*m)
	h.ctrs = align(h.own + l*(m+encrypt.TagLen))
	h.dir = align(h.ctrs + 8*l)
	h.region = align(h.dir + 8 + 32*p)
	// The leader receives at most lg N + 2 frames (RD's fold, its
	// doublings, its unfold), which bring each other rank's block once.
	steps := bits.Len(uint(nodes)) + 2
	h.regionLen = steps*encrypt.MaxFrameSize(1, m) + encrypt.MaxFrameSize(p, m)
	h.half = align(h.region + h.regionLen)
	return h, h.half <= maxHSHalf
}

// hsFeasible says whether HS1 and HS2 can run for blocks of m bytes.
func (g *encGroup) hsFeasible(m int) bool {
	_, lmax := g.lay.PerNode()
	_, ok := hsLayoutOf(g.p, lmax, g.lay.Nodes(), m)
	return g.node != nil && ok
}

// hsState is what a rank counts of its node's HS all-gathers, by parity:
// every rank of the node counts alike, so each knows what the shared
// counters will read when all have come. A new window starts them again.
type hsState struct {
	mem           []byte
	calls, shared [2]uint64
	leaders       []int           // of each node, its first rank
	nodeRanks     func(int) []int // lay.Ranks, made once
}

// hsShareMin is the size of the other nodes' ciphertexts from which the
// node's ranks share out their opening, as the paper's step 3 does.
// Below it the leader opens them all: that costs it less than the round
// of waiting that sharing adds, while every rank is waiting anyway.
const hsShareMin = 16 << 10

// await waits until the shared counter at off reads at least want.
func (st *state) await(half []byte, off int, want uint64) error {
	c := (*uint64)(unsafe.Pointer(&half[off]))
	for i := 0; atomic.LoadUint64(c) < want; i++ {
		if i >= 64 {
			if err := st.g.node.yield(); err != nil {
				return err
			}
		}
	}
	return nil
}

func counter(half []byte, off int) *uint64 { return (*uint64)(unsafe.Pointer(&half[off])) }

// hierarchical is HS1 and HS2 in the node's shared memory: (1) every
// rank puts its block in the shared plaintext buffer (HS2: and seals it
// into its slot); (2) the leader (the node's first rank), once all have,
// seals the node's blocks as one (HS1) and all-gathers the ciphertexts
// with the other leaders by RD, forwarding them as they are, into the
// shared region, and lists them; (3) the node's ranks share out the
// opening of the other nodes' ciphertexts into the shared plaintext
// buffer (the leader opens them all when they are small); (4) each
// copies it out. The ranks wait for each other on counters in the shared
// memory, not MPI barriers: a rank that is not the leader waits once for
// the list, and once more only when the opening is shared.
func (st *state) hierarchical(send []byte) error {
	g := st.g
	lay := g.lay
	k, j := lay.Node(g.rank), lay.Local(g.rank)
	mine := lay.Ranks(k)
	l := uint64(len(mine))
	_, lmax := lay.PerNode()
	hl, ok := hsLayoutOf(g.p, lmax, lay.Nodes(), st.m)
	if !ok || g.node == nil {
		return fmt.Errorf("internal: %v without the node's shared memory", st.alg.Title())
	}
	mem, err := g.node.mem(2 * hl.half)
	if err != nil {
		return err
	}
	if len(g.hs.mem) != len(mem) || &g.hs.mem[0] != &mem[0] {
		g.hs = hsState{mem: mem, leaders: g.hs.leaders, nodeRanks: g.hs.nodeRanks}
	}
	par := st.seq & 1
	g.hs.calls[par]++
	call := g.hs.calls[par]
	halfLen := len(mem) / 2 &^ 63
	half := mem[int(par)*halfLen:][:hl.half]
	m := st.m
	recv := st.buf
	st.buf = half[hl.plain : hl.plain+g.p*m]
	copy(st.buf[g.rank*m:], send)
	for _, r := range mine {
		st.hasPlain[r] = true
	}
	slot := func(x int) []byte { return half[hl.own+x*(m+encrypt.TagLen):][:m+encrypt.TagLen] }
	hs2 := st.alg == encrypt.HS2
	if hs2 {
		pc := st.seal(slot(j), []int{g.rank})
		put64(half[hl.ctrs+8*j:], pc.ctr)
	}
	atomic.AddUint64(counter(half, ctlArrived), 1)
	if j == 0 {
		if err := st.await(half, ctlArrived, call*l); err != nil {
			return err
		}
		if hs2 {
			for x, r := range mine {
				st.ct[r] = &piece{origins: []int{r}, enc: r, ctr: le64(half[hl.ctrs+8*x:]), data: slot(x), off: -1}
			}
		}
		if g.hs.leaders == nil {
			g.hs.leaders = make([]int, lay.Nodes())
			for n := range g.hs.leaders {
				g.hs.leaders[n] = lay.Ranks(n)[0]
			}
			g.hs.nodeRanks = lay.Ranks
		}
		st.lazy = true
		st.rx, st.rxBase = &bump{buf: half[hl.region:][:hl.regionLen]}, hl.region
		err := st.rd(phaseMain, g.hs.leaders, g.hs.nodeRanks)
		st.rx = nil
		if err != nil {
			return err
		}
		foreign, size := st.foreign(k)
		dir := half[hl.dir:hl.region]
		if size < hsShareMin {
			// The leader opens them all, and lists none.
			for _, pc := range foreign {
				if err := st.open(pc); err != nil {
					return err
				}
			}
			put32(dir, 0)
			put32(dir[4:], 1)
		} else if err := writeDir(dir, foreign); err != nil {
			return err
		}
		atomic.StoreUint64(counter(half, ctlDir), call)
	} else if err := st.await(half, ctlDir, call); err != nil {
		return err
	}
	if le32(half[hl.dir+4:]) == 0 { // shared out
		g.hs.shared[par]++
		if err := st.openShare(half, hl, j, len(mine)); err != nil {
			return err
		}
		atomic.AddUint64(counter(half, ctlOpened), 1)
		if err := st.await(half, ctlOpened, g.hs.shared[par]*l); err != nil {
			return err
		}
	}
	copy(recv, st.buf)
	return nil
}

// openShare opens the listed ciphertexts x with x mod of = j.
func (st *state) openShare(half []byte, hl hsLayout, j, of int) error {
	pieces, err := readDir(half, hl, st.g.p)
	if err != nil {
		return err
	}
	for x, pc := range pieces {
		if x%of == j {
			if err := st.open(pc); err != nil {
				return err
			}
		}
	}
	return nil
}

// foreign returns the distinct ciphertexts of the other nodes' blocks
// that the leader holds, and their size.
func (st *state) foreign(node int) ([]*piece, int) {
	var out []*piece
	size := 0
	seen := st.next()
	for o, pc := range st.ct {
		if pc == nil || st.g.lay.Node(o) == node || st.mark[pc.origins[0]] == seen {
			continue
		}
		st.mark[pc.origins[0]] = seen
		out = append(out, pc)
		size += len(pc.data)
	}
	return out, size
}

// writeDir lists in dir the ciphertexts that the leader received into
// the shared region, for the node's ranks to share out their opening.
func writeDir(dir []byte, pieces []*piece) error {
	off := 8
	for _, pc := range pieces {
		if pc.off < 0 || off+28+4*len(pc.origins) > len(dir) {
			return fmt.Errorf("internal: the ciphertext of ranks %v is not in the node's shared memory", pc.origins)
		}
		put64(dir[off:], uint64(pc.off))
		put32(dir[off+8:], uint32(len(pc.data)))
		put32(dir[off+12:], uint32(pc.enc))
		put64(dir[off+16:], pc.ctr)
		put32(dir[off+24:], uint32(len(pc.origins)))
		off += 28
		for _, x := range pc.origins {
			put32(dir[off:], uint32(x))
			off += 4
		}
	}
	put32(dir, uint32(len(pieces)))
	put32(dir[4:], 0)
	return nil
}

// readDir reads the leader's list back, each entry checked against the
// half it points into.
func readDir(half []byte, hl hsLayout, p int) ([]*piece, error) {
	dir := half[hl.dir:hl.region]
	bad := func(what string) ([]*piece, error) {
		return nil, fmt.Errorf("internal: the node's list of ciphertexts: %s", what)
	}
	n := uint64(le32(dir))
	if n > uint64(p) {
		return bad(fmt.Sprintf("%d entries for %d ranks", n, p))
	}
	pieces := make([]*piece, 0, n)
	off := 8
	for range n {
		if off+28 > len(dir) {
			return bad("past its end")
		}
		at, size, enc, ctr, no := le64(dir[off:]), le32(dir[off+8:]), le32(dir[off+12:]), le64(dir[off+16:]), le32(dir[off+24:])
		off += 28
		if at < uint64(hl.region) || at > uint64(hl.region+hl.regionLen) || uint64(size) > uint64(hl.region+hl.regionLen)-at ||
			enc >= uint32(p) || no == 0 || no > uint32(p) || off+4*int(no) > len(dir) {
			return bad("an entry out of bounds")
		}
		pc := &piece{enc: int(enc), ctr: ctr, data: half[at : at+uint64(size)], off: int(at), origins: make([]int, no)}
		for x := range pc.origins {
			o := le32(dir[off:])
			if o >= uint32(p) {
				return bad("an origin out of bounds")
			}
			pc.origins[x] = int(o)
			off += 4
		}
		pieces = append(pieces, pc)
	}
	return pieces, nil
}
