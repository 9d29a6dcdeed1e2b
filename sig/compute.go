package sig

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
)

// ErrTooLarge is returned when count copies of a datatype hold 2^64
// elements or bytes or more: no signature can count them, and no buffer
// holds them.
var ErrTooLarge = errors.New("sig: count too large")

// nodeSig is what a Datatype caches per algebra: its signature and, for
// indexed and struct types, the signature of every prefix of whole blocks
// (blocks[i] covers blocks 0 … i-1), so that the signature of any prefix of
// elements needs O(1) Concat/Repeat steps per level instead of one per block.
type nodeSig struct {
	whole  Sig
	blocks []Sig
}

// node returns the cached signatures of t in alg, computing them (and those
// of the datatypes below t) on first use. Shared subtypes are computed once,
// so the work is proportional to the size of the description as a graph.
func node(alg Algebra, t *Datatype) *nodeSig {
	if v, ok := t.sigs.Load(alg); ok {
		return v.(*nodeSig)
	}
	n := &nodeSig{}
	switch t.kind {
	case kindBasic:
		n.whole = alg.Basic(t.code)
	case kindContiguous:
		n.whole = alg.Repeat(node(alg, t.old).whole, uint64(t.count))
	case kindVector, kindHVector:
		blk := alg.Repeat(node(alg, t.old).whole, uint64(t.blocklen))
		n.whole = alg.Repeat(blk, uint64(t.count))
	case kindIndexed, kindHIndexed, kindIndexedBlock, kindHIndexedBlock, kindStruct:
		n.blocks = make([]Sig, len(t.blocklens)+1)
		acc := alg.Empty()
		n.blocks[0] = acc
		for i := range t.blocklens {
			c, old := t.block(i)
			acc = alg.Concat(acc, alg.Repeat(node(alg, old).whole, uint64(c)))
			n.blocks[i+1] = acc
		}
		n.whole = acc
	case kindResized:
		n.whole = node(alg, t.old).whole
	}
	v, _ := t.sigs.LoadOrStore(alg, n)
	return v.(*nodeSig)
}

// total returns the number of elements in count copies of t.
func total(t *Datatype, count uint64) (uint64, error) {
	hi, n := bits.Mul64(t.elems, count)
	if hi != 0 {
		return 0, fmt.Errorf("%w: %d copies of %d elements exceed 2^64-1", ErrTooLarge, count, t.elems)
	}
	return n, nil
}

// Of returns the signature of count consecutive copies of t in alg: the
// signature of the (datatype, count) pair of an MPI call.
func Of(alg Algebra, t *Datatype, count uint64) (Sig, error) {
	if _, err := total(t, count); err != nil {
		return Sig{}, err
	}
	return alg.Repeat(node(alg, t).whole, count), nil
}

// Prefix returns the signature of the first k elements of count copies of
// t, in O(depth) Concat and Repeat steps (plus a binary search over the
// blocks at indexed and struct levels). It is what a receiver compares with
// a shorter message: MPI's rule for point-to-point is that the sender's
// type signature is a prefix of the receiver's.
func Prefix(alg Algebra, t *Datatype, count, k uint64) (Sig, error) {
	n, err := total(t, count)
	if err != nil {
		return Sig{}, err
	}
	if k > n {
		return Sig{}, fmt.Errorf("sig: prefix of %d elements of a type signature of %d", k, n)
	}
	return copies(alg, t, k), nil
}

// copies returns the signature of the first k elements of a run of copies
// of t: whole copies, then a prefix of one more.
func copies(alg Algebra, t *Datatype, k uint64) Sig {
	if k == 0 {
		return alg.Empty()
	}
	q, r := k/t.elems, k%t.elems
	whole := alg.Repeat(node(alg, t).whole, q)
	if r == 0 {
		return whole
	}
	return alg.Concat(whole, prefix(alg, t, r))
}

// prefix returns the signature of the first k elements of one t, 0 < k < t.elems.
func prefix(alg Algebra, t *Datatype, k uint64) Sig {
	switch t.kind {
	case kindContiguous:
		return copies(alg, t.old, k)
	case kindVector, kindHVector:
		per := uint64(t.blocklen) * t.old.elems // fits: t.elems does
		blk := alg.Repeat(node(alg, t.old).whole, uint64(t.blocklen))
		return alg.Concat(alg.Repeat(blk, k/per), copies(alg, t.old, k%per))
	case kindIndexed, kindHIndexed, kindIndexedBlock, kindHIndexedBlock, kindStruct:
		i := t.blockOf(k)
		_, old := t.block(i)
		return alg.Concat(node(alg, t).blocks[i], copies(alg, old, k-t.cum[i]))
	case kindResized:
		return prefix(alg, t.old, k)
	}
	panic("sig: prefix of a basic type")
}

// blockOf returns the block that holds element k (0 ≤ k < t.elems) of an
// indexed or struct type: the first block whose end is past k, which skips
// empty blocks.
func (t *Datatype) blockOf(k uint64) int {
	return sort.Search(len(t.blocklens), func(i int) bool { return t.cum[i+1] > k })
}
