package tree

import (
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/csum"
)

// ErrProof is returned (wrapped) by VerifyProof when a segment does not
// belong to the root by its proof.
var ErrProof = errors.New("tree: proof does not verify")

// Proof shows that one segment belongs to a tree whose root is known: the
// hashes of the siblings on the path from the segment's leaf to the root,
// leaf level first. Its length is the depth of the leaf, ⌈log2 n⌉ at most.
type Proof struct {
	Segment  int // the segment proved
	Segments int // n, which fixes the layout
	Siblings []csum.Value
}

// Prove returns the audit proof of segment j.
func (t *Tree) Prove(j int) (Proof, error) {
	if j < 0 || j >= t.n {
		return Proof{}, fmt.Errorf("%w: segment %d of %d", ErrIndex, j, t.n)
	}
	p := Proof{Segment: j, Segments: t.n}
	for i := t.Leaf(j); i > 0; i = (i - 1) / 2 {
		p.Siblings = append(p.Siblings, t.Node(sibling(i)))
	}
	return p, nil
}

// sibling returns the other child of i's parent: left children are odd.
func sibling(i int) int {
	if i%2 == 1 {
		return i + 1
	}
	return i - 1
}

// VerifyProof checks that segment is segment p.Segment of a tree with this
// root, built with hash h: it hashes the segment into its leaf and climbs
// to the root with the siblings of the proof.
func VerifyProof(h *Hash, root csum.Value, p Proof, segment []byte) error {
	if p.Segments < 1 || p.Segment < 0 || p.Segment >= p.Segments || int64(p.Segments) > 1<<62 {
		return fmt.Errorf("%w: segment %d of %d", ErrProof, p.Segment, p.Segments)
	}
	i := p.Segment + p.Segments - 1
	depth := 0
	for k := i; k > 0; k = (k - 1) / 2 {
		depth++
	}
	if len(p.Siblings) != depth {
		return fmt.Errorf("%w: %d siblings for a leaf at depth %d", ErrProof, len(p.Siblings), depth)
	}
	w := h.words
	cur, sib, par := make([]uint64, w), make([]uint64, w), make([]uint64, w)
	h.leaf(segment, uint64(i), cur)
	for _, s := range p.Siblings {
		put(s, sib)
		parent := (i - 1) / 2
		if i%2 == 1 {
			h.inner(cur, sib, uint64(parent), par)
		} else {
			h.inner(sib, cur, uint64(parent), par)
		}
		cur, par = par, cur
		i = parent
	}
	if get(cur) != root {
		return fmt.Errorf("%w: segment %d", ErrProof, p.Segment)
	}
	return nil
}
