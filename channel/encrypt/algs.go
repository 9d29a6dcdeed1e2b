package encrypt

import (
	"fmt"
	"math/bits"
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
	case Naive:
		// Every rank seals its own block, the ciphertexts are all-gathered
		// as they are (inside nodes too), and each opens the p-1 it got.
		st.lazy = true
		if !st.plain {
			st.ct[g.rank] = st.seal(st.ar.alloc(st.m+tagLen), []int{g.rank})
		}
		if err := st.rd(phaseMain, all, single); err != nil {
			return err
		}
		return st.openAll()
	case ORing:
		return st.ring(phaseMain, all, single)
	case ORD, ORD2:
		return st.rd(phaseMain, all, single)
	case CRing, CRD:
		return st.concurrent()
	case HS1, HS2:
		return st.hierarchical(send)
	}
	return fmt.Errorf("encrypt: no algorithm %d", int(st.alg))
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

// union returns the origins of members [lo, hi) of a group.
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
// members 0…, which double among themselves, then give them back (lg q + 2
// steps, within the paper's 2·lg p).
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
// every member is on a node of its own (C-Ring, C-RD, the leaders of HS1
// and HS2): its first step between nodes sends them, and sealing them
// after a fold step's arrival would put two encryptions on the critical
// path where the paper's r_e is 1.
func (st *state) preseal(ms []int, own []int) {
	if st.plain || st.alg == ORD2 || st.alg == Naive || len(own) == 0 || len(ms) < 2 {
		return
	}
	seen := map[int]bool{}
	for _, r := range ms {
		k := st.g.lay.Node(r)
		if seen[k] {
			return
		}
		seen[k] = true
	}
	for _, o := range own {
		if st.ct[o] != nil {
			return
		}
	}
	pc := st.seal(st.ar.alloc(len(own)*st.m+tagLen), own)
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
	carried := func(node, grp int) []int { // the blocks group grp carries for node
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
		if st.alg == CRing {
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
	if st.alg == CRing {
		return st.ring(phaseLocal, mine, local)
	}
	return st.rd(phaseLocal, mine, local)
}

// hierarchical is HS1 and HS2, in the node's shared memory: (1) every
// rank puts its block in the shared plaintext buffer (HS2: and seals it
// into the shared ciphertexts); (2) the leader (the node's first rank)
// seals the node's blocks as one (HS1) and all-gathers the ciphertexts
// with the other leaders by RD, forwarding them as they are; (3) the
// node's ranks share out the opening of the other nodes' ciphertexts,
// into the shared plaintext buffer; (4) each copies it out. Steps meet at
// the node's barrier, where the counts of its ranks merge.
func (st *state) hierarchical(send []byte) error {
	g := st.g
	lay, node := g.lay, g.node
	recv := st.buf
	par := st.seq & 1
	k, j := lay.Node(g.rank), lay.Local(g.rank)
	mine := lay.Ranks(k)
	node.mu.Lock()
	if len(node.plain[par]) != len(recv) {
		node.plain[par] = make([]byte, len(recv))
	}
	if len(node.own[par]) != len(mine) {
		node.own[par] = make([]*piece, len(mine))
	}
	node.mu.Unlock()
	st.buf = node.plain[par]
	copy(st.buf[g.rank*st.m:], send)
	for _, r := range mine {
		st.hasPlain[r] = true
	}
	if st.alg == HS2 && !st.plain && lay.Nodes() > 1 {
		node.own[par][j] = st.seal(st.ar.alloc(st.m+tagLen), []int{g.rank})
	}
	var err error
	if st.path, err = node.sync(st.ctx, st.path); err != nil {
		return err
	}
	if j == 0 {
		if st.alg == HS2 && !st.plain && lay.Nodes() > 1 {
			for x, r := range mine {
				st.ct[r] = node.own[par][x]
			}
		}
		leaders := make([]int, lay.Nodes())
		for n := range leaders {
			leaders[n] = lay.Ranks(n)[0]
		}
		st.lazy = true
		if err := st.rd(phaseMain, leaders, lay.Ranks); err != nil {
			return err
		}
		var shared []*piece
		seen := map[*piece]bool{}
		for o, pc := range st.ct {
			if pc != nil && lay.Node(o) != k && !seen[pc] {
				seen[pc] = true
				shared = append(shared, pc)
			}
		}
		node.shared[par] = shared
	}
	if st.path, err = node.sync(st.ctx, st.path); err != nil {
		return err
	}
	for x, pc := range node.shared[par] {
		if x%len(mine) == j {
			if err := st.open(&piece{origins: pc.origins, enc: pc.enc, ctr: pc.ctr, data: pc.data}); err != nil {
				return err
			}
		}
	}
	if st.path, err = node.sync(st.ctx, st.path); err != nil {
		return err
	}
	copy(recv, st.buf)
	return nil
}
