package tree

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sigcheck/sigcheck/csum"
)

// Diff returns the segments whose hashes differ between two trees of the
// same shape, in increasing order, by descending from the root through the
// nodes that differ only: O(k log n) comparisons for k differing segments.
func Diff(a, b *Tree) ([]int, error) {
	if err := a.sameShape(b); err != nil {
		return nil, err
	}
	var out []int
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if a.Node(i) == b.Node(i) {
			continue
		}
		if j := a.SegmentOf(i); j >= 0 {
			out = append(out, j)
			continue
		}
		stack = append(stack, 2*i+1, 2*i+2)
	}
	slices.Sort(out)
	return out, nil
}

// CriticalPath returns the paper's set of critical-path hashes: the root
// and every left child (the nodes 1, 3, 5, …), n hashes in all. With it a
// receiver can locate one corrupted segment without asking again (see
// LocateCritical); the descent finds them all for less.
func (t *Tree) CriticalPath() []csum.Value {
	out := make([]csum.Value, 0, t.n)
	out = append(out, t.Root())
	for i := 1; i < t.Nodes(); i += 2 {
		out = append(out, t.Node(i))
	}
	return out
}

// LocateCritical is the paper's localization (merkle-mpi's
// compare_hashes), kept for comparison: given the sender's critical path,
// it returns one corrupted segment of t's data, or -1 if the roots agree.
// It takes the deepest left child whose hash differs and follows right
// children from there to a leaf — the right answer when one segment is
// corrupted, one of them when several are, so that the paper's protocol
// needs a round per corrupted segment.
func (t *Tree) LocateCritical(theirs []csum.Value) (int, error) {
	if len(theirs) != t.n {
		return 0, fmt.Errorf("%w: critical path of %d hashes for a tree of %d segments", ErrShape, len(theirs), t.n)
	}
	mine := t.CriticalPath()
	if mine[0] == theirs[0] {
		return -1, nil
	}
	last := 0
	for i := range mine {
		if mine[i] != theirs[i] {
			last = i
		}
	}
	node := 2*last - 1 // critical index k > 0 is node 2k-1; k = 0 gives -1, so the walk starts at the root
	for 2*node+1 < t.Nodes() {
		node = 2*node + 2
	}
	return t.SegmentOf(node), nil
}

// Errors of the descent.
var (
	// ErrCorruptAnswer: the sender's hashes of two children do not hash to
	// the parent's hash the receiver already trusts. Either the answer or
	// the root it descends from was corrupted on the way.
	ErrCorruptAnswer = errors.New("tree: answer does not match the hashes above it")
	// ErrInconsistent: the receiver's own tree contradicts itself (a node
	// differs from the sender's while its children agree): its data changed
	// after the tree was built.
	ErrInconsistent = errors.New("tree: the receiver's tree is inconsistent")
	// ErrProtocol: an answer that does not fit the request.
	ErrProtocol = errors.New("tree: answer does not fit the request")
)

// Request asks the sender for the hashes of some nodes.
type Request struct{ Nodes []int }

// Answer carries the hashes of the nodes of a Request, in its order.
type Answer struct{ Hashes []csum.Value }

// Answer returns the hashes the request asks for. A request for a node
// out of range, or for more nodes than the tree has, is refused.
func (t *Tree) Answer(r Request) (Answer, error) {
	if len(r.Nodes) > t.Nodes() {
		return Answer{}, fmt.Errorf("%w: %d nodes asked of a tree of %d", ErrIndex, len(r.Nodes), t.Nodes())
	}
	a := Answer{Hashes: make([]csum.Value, len(r.Nodes))}
	for k, i := range r.Nodes {
		if i < 0 || i >= t.Nodes() {
			return Answer{}, fmt.Errorf("%w: node %d of %d", ErrIndex, i, t.Nodes())
		}
		a.Hashes[k] = t.Node(i)
	}
	return a, nil
}

// Descent finds every corrupted segment of the receiver's data, asking the
// sender level by level for the children of the nodes that differ.
//
// Only the root crosses when nothing is wrong. Otherwise each round asks
// for the two children of every node that differs at the level reached,
// so k corrupted segments among n are found in at most ⌈log2 n⌉ rounds
// (the depth of the deepest corrupted leaf), each request and answer
// holding at most 2k entries: O(k log n) hashes in all, 2·(d-1)+… for k = 1
// exactly 2 per round. Every answer is checked against the parent hash
// the receiver already trusts (the root, then what the previous rounds
// proved), so a corrupted answer is caught at once (ErrCorruptAnswer) and
// can be asked again, and the number of rounds is bounded by the depth
// whatever the sender says.
type Descent struct {
	mine     *Tree
	trusted  map[int]csum.Value // the sender's hashes of the nodes that differ, verified
	frontier []int              // inner nodes that differ, whose children to ask for
	asked    []int              // the outstanding request
	faulty   []int
	rounds   int
	received int // hashes received
}

// NewDescent starts a descent of the receiver's tree against the sender's root.
func NewDescent(mine *Tree, theirRoot csum.Value) *Descent {
	d := &Descent{mine: mine, trusted: map[int]csum.Value{}}
	if mine.Root() != theirRoot {
		d.trusted[0] = theirRoot
		if mine.n == 1 {
			d.faulty = []int{0}
		} else {
			d.frontier = []int{0}
		}
	}
	return d
}

// Request returns the next request, or false when the descent is over.
// After a failed Answer it returns the same request again.
func (d *Descent) Request() (Request, bool) {
	if len(d.frontier) == 0 {
		return Request{}, false
	}
	if d.asked == nil {
		d.asked = make([]int, 0, 2*len(d.frontier))
		for _, p := range d.frontier {
			d.asked = append(d.asked, 2*p+1, 2*p+2)
		}
	}
	return Request{Nodes: slices.Clone(d.asked)}, true
}

// Answer takes the sender's answer to the outstanding request. On error
// nothing changes and Request asks the same again.
func (d *Descent) Answer(a Answer) error {
	if d.asked == nil {
		return fmt.Errorf("%w: no request outstanding", ErrProtocol)
	}
	if len(a.Hashes) != len(d.asked) {
		return fmt.Errorf("%w: %d hashes for %d nodes", ErrProtocol, len(a.Hashes), len(d.asked))
	}
	t := d.mine
	w := t.h.words
	lw, rw, pw := make([]uint64, w), make([]uint64, w), make([]uint64, w)
	for k, p := range d.frontier {
		l, r := a.Hashes[2*k], a.Hashes[2*k+1]
		put(l, lw)
		put(r, rw)
		t.h.inner(lw, rw, uint64(p), pw)
		if get(pw) != d.trusted[p] {
			return fmt.Errorf("%w: children of node %d", ErrCorruptAnswer, p)
		}
		if l == t.Node(2*p+1) && r == t.Node(2*p+2) {
			// The sender's children hash to its parent and equal ours, yet
			// our parent differs: our tree is not the hash of our data.
			return fmt.Errorf("%w: node %d differs though its children agree", ErrInconsistent, p)
		}
	}
	var next []int
	for k, i := range d.asked {
		h := a.Hashes[k]
		if h == t.Node(i) {
			continue
		}
		d.trusted[i] = h
		if j := t.SegmentOf(i); j >= 0 {
			d.faulty = append(d.faulty, j)
		} else {
			next = append(next, i)
		}
	}
	d.rounds++
	d.received += len(a.Hashes)
	d.frontier, d.asked = next, nil
	return nil
}

// Faulty returns the corrupted segments found so far, in increasing order.
func (d *Descent) Faulty() []int {
	out := slices.Clone(d.faulty)
	slices.Sort(out)
	return out
}

// Expected returns the sender's hash of a segment found corrupted: a
// verified hash against which a repaired segment can be checked.
func (d *Descent) Expected(segment int) (csum.Value, bool) {
	v, ok := d.trusted[d.mine.Leaf(segment)]
	return v, ok && slices.Contains(d.faulty, segment)
}

// Rounds returns the number of answered rounds, and Received the number of
// hashes received in them.
func (d *Descent) Rounds() int   { return d.rounds }
func (d *Descent) Received() int { return d.received }

func put(v csum.Value, out []uint64) {
	out[0] = v.Lo
	if len(out) > 1 {
		out[1] = v.Hi
	}
}

func get(w []uint64) csum.Value {
	v := csum.Value{Lo: w[0]}
	if len(w) > 1 {
		v.Hi = w[1]
	}
	return v
}
