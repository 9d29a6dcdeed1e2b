package sig

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// ErrDatatype is wrapped by every error of the datatype constructors and
// of ParseDatatype: a negative count, mismatched list lengths, a size that
// overflows, nesting deeper than MaxDepth.
var ErrDatatype = errors.New("sig: invalid datatype")

// MaxDepth bounds the nesting of datatypes, so that no description, however
// it was made, can exhaust the stack of the recursive walks.
const MaxDepth = 64

type kind uint8

const (
	kindBasic kind = iota
	kindContiguous
	kindVector
	kindHVector
	kindIndexed
	kindHIndexed
	kindIndexedBlock
	kindHIndexedBlock
	kindStruct
	kindResized
)

var kindNames = [...]string{"basic", "contiguous", "vector", "hvector", "indexed", "hindexed",
	"indexed_block", "hindexed_block", "struct", "resized"}

func (k kind) String() string { return kindNames[k] }

// Datatype describes a layout of basic elements in memory, as an MPI
// datatype does: a predefined basic type, or a constructor applied to
// other datatypes. Its type signature is the sequence of basic types in
// the order of its type map; its signature in an algebra is computed from
// the description in time proportional to the description's size, never
// to the number of elements.
//
// A Datatype is immutable once made and safe for concurrent use; it caches
// its signature per algebra, as an MPI library does at MPI_Type_commit.
type Datatype struct {
	kind    kind
	name    string   // predefined types
	aliases []string // basic types
	code    uint64   // basic types

	count     int64 // contiguous, vector, hvector: number of blocks
	blocklen  int64 // vector, hvector, indexed_block, hindexed_block
	stride    int64 // vector: in extents of old; hvector: in bytes
	blocklens []int64
	displs    []int64 // indexed, indexed_block: in extents of old; h* and struct: in bytes
	types     []*Datatype
	old       *Datatype

	// Derived at construction.
	elems      uint64   // basic elements in one instance
	size       int64    // bytes of data in one instance
	lb, ub     int64    // MPI lower and upper bounds; extent = ub - lb
	bounded    bool     // has any element or explicit bound (an empty type map has neither)
	depth      int      // 0 for basic types
	cum        []uint64 // indexed*/struct: cum[i] = elements in blocks before i
	byteOnly   bool     // every element is Byte (and there is one)
	packedOnly bool     // every element is Packed (and there is one)
	run        Run      // the whole type map as one evenly spaced run, if it is one (Type nil otherwise)

	sigs sync.Map // Algebra → *nodeSig
}

// Name returns the name of a predefined datatype ("double", "float_int"),
// or "" for a derived one.
func (t *Datatype) Name() string { return t.name }

// IsBasic reports whether t is one of the basic types (a single element).
func (t *Datatype) IsBasic() bool { return t.kind == kindBasic }

// Code returns the code of a basic type, the value the algebras hash, or 0
// for any other datatype.
func (t *Datatype) Code() uint64 { return t.code }

// Elements returns the number of basic elements in one instance of t.
func (t *Datatype) Elements() uint64 { return t.elems }

// Size returns the number of bytes of data in one instance of t (MPI_Type_size).
func (t *Datatype) Size() int64 { return t.size }

// LB returns the lower bound of t (MPI_Type_get_extent).
func (t *Datatype) LB() int64 { return t.lb }

// Extent returns ub - lb, the distance between consecutive instances of t
// in a buffer of count instances.
func (t *Datatype) Extent() int64 { return t.ub - t.lb }

// Depth returns the nesting depth: 0 for a basic type.
func (t *Datatype) Depth() int { return t.depth }

// builder accumulates the blocks of a new datatype: each block is n copies
// of old starting at byte offset off, copies one extent apart.
type builder struct {
	t   *Datatype
	op  string
	err error
}

func newBuilder(op string, k kind) *builder {
	return &builder{t: &Datatype{kind: k, byteOnly: true, packedOnly: true}, op: op}
}

func (b *builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("%w: %s: %s", ErrDatatype, b.op, fmt.Sprintf(format, args...))
	}
}

func (b *builder) mul(x, y int64) int64 {
	hi, lo := bits.Mul64(uint64(abs(x)), uint64(abs(y)))
	if hi != 0 || lo > 1<<63-1 {
		b.fail("sizes or offsets overflow int64")
		return 0
	}
	if (x < 0) != (y < 0) {
		return -int64(lo)
	}
	return int64(lo)
}

func (b *builder) add(x, y int64) int64 {
	s := x + y
	if (s > x) != (y > 0) {
		b.fail("sizes or offsets overflow int64")
	}
	return s
}

func abs(x int64) int64 {
	if x < 0 {
		if x == -1<<63 {
			return 1<<63 - 1 // saturate: such an offset overflows any product with |y| ≥ 2 anyway
		}
		return -x
	}
	return x
}

// block adds n ≥ 0 copies of old at byte offset off.
func (b *builder) block(what string, n int64, off int64, old *Datatype) {
	if old == nil {
		b.fail("%s: nil datatype", what)
		return
	}
	if n < 0 {
		b.fail("%s: negative count %d", what, n)
		return
	}
	b.count(what, uint64(n), old)
	b.bound(off, n, old)
}

// count adds the elements and bytes of n copies of old.
func (b *builder) count(what string, n uint64, old *Datatype) {
	t := b.t
	t.depth = max(t.depth, old.depth+1)
	if t.depth > MaxDepth {
		b.fail("nested deeper than %d", MaxDepth)
		return
	}
	hi, e := bits.Mul64(n, old.elems)
	if hi != 0 || t.elems+e < t.elems {
		b.fail("%s: more than 2^64 elements", what)
		return
	}
	t.elems += e
	if n > 1<<63-1 {
		b.fail("%s: more than 2^63 bytes", what)
		return
	}
	t.size = b.add(t.size, b.mul(int64(n), old.size))
	if n > 0 && old.elems > 0 {
		t.byteOnly = t.byteOnly && old.byteOnly
		t.packedOnly = t.packedOnly && old.packedOnly
	}
}

// bound widens the bounds of t to cover n copies of old at byte offset off.
func (b *builder) bound(off, n int64, old *Datatype) {
	if n == 0 || !old.bounded {
		return
	}
	// Copies i = 0 … n-1 start at off + i·extent, and extents are ≥ 0.
	t := b.t
	lb := b.add(off, old.lb)
	ub := b.add(b.add(off, b.mul(n-1, old.Extent())), old.ub)
	if !t.bounded {
		t.lb, t.ub, t.bounded = lb, ub, true
	} else {
		t.lb, t.ub = min(t.lb, lb), max(t.ub, ub)
	}
}

func (b *builder) done() (*Datatype, error) {
	if b.err != nil {
		return nil, b.err
	}
	t := b.t
	if t.elems == 0 {
		t.byteOnly, t.packedOnly = false, false
	}
	t.run = t.singleRun()
	return t, nil
}

// Contiguous is count copies of old, one extent apart (MPI_Type_contiguous).
func Contiguous(count int64, old *Datatype) (*Datatype, error) {
	b := newBuilder("contiguous", kindContiguous)
	b.t.count, b.t.old = count, old
	if old != nil {
		b.block("count", count, 0, old)
	} else {
		b.fail("nil datatype")
	}
	return b.done()
}

// Vector is count blocks of blocklen copies of old, the blocks stride
// extents of old apart (MPI_Type_vector). The stride may be negative.
func Vector(count, blocklen, stride int64, old *Datatype) (*Datatype, error) {
	return vector("vector", kindVector, count, blocklen, stride, old)
}

// HVector is Vector with the stride in bytes (MPI_Type_create_hvector).
func HVector(count, blocklen, stride int64, old *Datatype) (*Datatype, error) {
	return vector("hvector", kindHVector, count, blocklen, stride, old)
}

func vector(op string, k kind, count, blocklen, stride int64, old *Datatype) (*Datatype, error) {
	b := newBuilder(op, k)
	t := b.t
	t.count, t.blocklen, t.stride, t.old = count, blocklen, stride, old
	if old == nil {
		b.fail("nil datatype")
		return b.done()
	}
	if count < 0 {
		b.fail("negative count %d", count)
	}
	if blocklen < 0 {
		b.fail("negative blocklength %d", blocklen)
	}
	if b.err != nil {
		return b.done()
	}
	step := stride
	if k == kindVector {
		step = b.mul(stride, old.Extent())
	}
	hi, n := bits.Mul64(uint64(count), uint64(blocklen))
	if hi != 0 {
		b.fail("more than 2^64 elements")
		return b.done()
	}
	b.count("blocks", n, old)
	// The blocks are translates of each other: the first and the last bound the type.
	if count > 0 {
		b.bound(0, blocklen, old)
		b.bound(b.mul(count-1, step), blocklen, old)
	}
	return b.done()
}

// Indexed is blocks of blocklens[i] copies of old at displs[i] extents of
// old (MPI_Type_indexed). The type map follows the order of the lists.
func Indexed(blocklens, displs []int64, old *Datatype) (*Datatype, error) {
	return indexed("indexed", kindIndexed, blocklens, displs, old)
}

// HIndexed is Indexed with displacements in bytes (MPI_Type_create_hindexed).
func HIndexed(blocklens, displs []int64, old *Datatype) (*Datatype, error) {
	return indexed("hindexed", kindHIndexed, blocklens, displs, old)
}

// IndexedBlock is Indexed with one block length for all blocks
// (MPI_Type_create_indexed_block).
func IndexedBlock(blocklen int64, displs []int64, old *Datatype) (*Datatype, error) {
	t, err := indexed("indexed_block", kindIndexedBlock, repeatLen(blocklen, len(displs)), displs, old)
	if t != nil {
		t.blocklen = blocklen
	}
	return t, err
}

// HIndexedBlock is IndexedBlock with displacements in bytes
// (MPI_Type_create_hindexed_block).
func HIndexedBlock(blocklen int64, displs []int64, old *Datatype) (*Datatype, error) {
	t, err := indexed("hindexed_block", kindHIndexedBlock, repeatLen(blocklen, len(displs)), displs, old)
	if t != nil {
		t.blocklen = blocklen
	}
	return t, err
}

func repeatLen(n int64, k int) []int64 {
	s := make([]int64, k)
	for i := range s {
		s[i] = n
	}
	return s
}

func indexed(op string, k kind, blocklens, displs []int64, old *Datatype) (*Datatype, error) {
	b := newBuilder(op, k)
	t := b.t
	t.blocklens, t.displs, t.old = clone(blocklens), clone(displs), old
	if old == nil {
		b.fail("nil datatype")
		return b.done()
	}
	if len(blocklens) != len(displs) {
		b.fail("%d block lengths but %d displacements", len(blocklens), len(displs))
		return b.done()
	}
	t.cum = make([]uint64, len(blocklens)+1)
	for i, n := range blocklens {
		off := displs[i]
		if k == kindIndexed || k == kindIndexedBlock {
			off = b.mul(off, old.Extent())
		}
		b.block(fmt.Sprintf("block %d", i), n, off, old)
		if b.err != nil {
			break
		}
		t.cum[i+1] = t.elems
	}
	return b.done()
}

// Struct is blocks of blocklens[i] copies of types[i] at displs[i] bytes
// (MPI_Type_create_struct). No alignment padding is added to the extent;
// use Resized for that, as portable MPI code does.
func Struct(blocklens, displs []int64, types []*Datatype) (*Datatype, error) {
	b := newBuilder("struct", kindStruct)
	t := b.t
	t.blocklens, t.displs, t.types = clone(blocklens), clone(displs), clone(types)
	if len(blocklens) != len(displs) || len(blocklens) != len(types) {
		b.fail("%d block lengths, %d displacements and %d types", len(blocklens), len(displs), len(types))
		return b.done()
	}
	t.cum = make([]uint64, len(blocklens)+1)
	for i, n := range blocklens {
		b.block(fmt.Sprintf("member %d", i), n, displs[i], types[i])
		if b.err != nil {
			break
		}
		t.cum[i+1] = t.elems
	}
	return b.done()
}

// Resized is old with its lower bound and extent set (MPI_Type_create_resized):
// the same elements, a different spacing between consecutive copies.
func Resized(lb, extent int64, old *Datatype) (*Datatype, error) {
	b := newBuilder("resized", kindResized)
	t := b.t
	t.old = old
	if old == nil {
		b.fail("nil datatype")
		return b.done()
	}
	if extent < 0 {
		b.fail("negative extent %d", extent)
		return b.done()
	}
	t.depth = old.depth + 1
	if t.depth > MaxDepth {
		b.fail("nested deeper than %d", MaxDepth)
	}
	t.elems, t.size = old.elems, old.size
	t.byteOnly, t.packedOnly = old.byteOnly, old.packedOnly
	t.lb, t.ub, t.bounded = lb, b.add(lb, extent), true
	return b.done()
}

// Must returns t, or panics if err is not nil: for datatypes written as
// literals in programs and tests, like regexp.MustCompile.
func Must(t *Datatype, err error) *Datatype {
	if err != nil {
		panic(err)
	}
	return t
}

func clone[T any](s []T) []T { return append([]T(nil), s...) }

// block returns block i of an indexed or struct type: its length and type.
func (t *Datatype) block(i int) (n int64, old *Datatype) {
	switch t.kind {
	case kindStruct:
		return t.blocklens[i], t.types[i]
	case kindIndexed, kindHIndexed, kindIndexedBlock, kindHIndexedBlock:
		return t.blocklens[i], t.old
	}
	panic("sig: block of a " + t.kind.String())
}
