//go:build mpi

package main

/*
#include "sc.h"
#include <stdlib.h>

static int sc_envelope(MPI_Datatype dt, int *ni, int *na, int *nd, int *comb) {
	return PMPI_Type_get_envelope(dt, ni, na, nd, comb);
}
static int sc_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *ext) {
	return PMPI_Type_get_extent(dt, lb, ext);
}
static int sc_contents(MPI_Datatype dt, int ni, int na, int nd, int *is, MPI_Aint *as, MPI_Datatype *ds) {
	return PMPI_Type_get_contents(dt, ni, na, nd, is, as, ds);
}
static int sc_is_predefined(MPI_Datatype dt) {
	int ni, na, nd, comb;
	if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &comb) != MPI_SUCCESS) return 0;
	return comb == MPI_COMBINER_NAMED;
}
static void sc_free_type(MPI_Datatype dt) { PMPI_Type_free(&dt); }
enum {
	SC_COMB_NAMED = MPI_COMBINER_NAMED, SC_COMB_DUP = MPI_COMBINER_DUP,
	SC_COMB_CONTIGUOUS = MPI_COMBINER_CONTIGUOUS, SC_COMB_VECTOR = MPI_COMBINER_VECTOR,
	SC_COMB_HVECTOR = MPI_COMBINER_HVECTOR, SC_COMB_INDEXED = MPI_COMBINER_INDEXED,
	SC_COMB_HINDEXED = MPI_COMBINER_HINDEXED, SC_COMB_INDEXED_BLOCK = MPI_COMBINER_INDEXED_BLOCK,
	SC_COMB_HINDEXED_BLOCK = MPI_COMBINER_HINDEXED_BLOCK, SC_COMB_STRUCT = MPI_COMBINER_STRUCT,
	SC_COMB_SUBARRAY = MPI_COMBINER_SUBARRAY, SC_COMB_RESIZED = MPI_COMBINER_RESIZED,
	SC_ORDER_C = MPI_ORDER_C,
};
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/sigcheck/sigcheck/sig"
)

// Limits on what a decode may cost: a datatype is application input.
const (
	maxDepth    = 64      // constructor nesting
	maxContents = 1 << 22 // integers, addresses or datatypes in one constructor
)

// errUndecodable marks a datatype the library cannot describe in package
// sig's model (MPI_Type_create_darray, an unknown predefined type, a
// constructor too large): its messages pass through unchecked.
var errUndecodable = errors.New("datatype cannot be decoded")

// Ids: a predefined datatype's id is its place in sig.PredefinedNames plus
// one, the same in every process, so a receiver knows it without asking;
// derived datatypes are numbered from firstDerived in the order this
// process first used them.
const firstDerived = 1 << 12

var types struct {
	sync.Mutex
	byID   map[uint32]*sig.Datatype
	next   uint32
	predef map[string]uint32
}

func init() {
	types.byID = map[uint32]*sig.Datatype{}
	types.predef = map[string]uint32{}
	types.next = firstDerived
	for i, name := range sig.PredefinedNames() {
		t, _ := sig.Predefined(name)
		id := uint32(i + 1)
		types.byID[id] = t
		types.predef[name] = id
	}
}

// typeByID returns the datatype with this id in this process.
func typeByID(id uint32) *sig.Datatype {
	types.Lock()
	defer types.Unlock()
	return types.byID[id]
}

// predefinedByID returns the predefined datatype with this id, which every
// process numbers alike.
func predefinedByID(id uint32) *sig.Datatype {
	if id == 0 || id >= firstDerived {
		return nil
	}
	return typeByID(id)
}

// decode describes dt in package sig's model.
func decode(dt C.MPI_Datatype, depth int) (*sig.Datatype, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", errUndecodable, maxDepth)
	}
	var ni, na, nd, comb C.int
	if C.sc_envelope(dt, &ni, &na, &nd, &comb) != C.MPI_SUCCESS {
		return nil, fmt.Errorf("%w: MPI_Type_get_envelope failed", errUndecodable)
	}
	if comb == C.SC_COMB_NAMED {
		name := C.sc_type_name_of(dt)
		if name == nil {
			return nil, fmt.Errorf("%w: a predefined datatype sigcheck does not know", errUndecodable)
		}
		t, ok := sig.Predefined(C.GoString(name))
		if !ok {
			return nil, fmt.Errorf("%w: predefined %s", errUndecodable, C.GoString(name))
		}
		return t, nil
	}
	if ni < 0 || na < 0 || nd < 0 || ni > maxContents || na > maxContents || nd > maxContents {
		return nil, fmt.Errorf("%w: a constructor of %d integers, %d addresses, %d datatypes", errUndecodable, ni, na, nd)
	}
	is := make([]C.int, ni+1)
	as := make([]C.MPI_Aint, na+1)
	ds := make([]C.MPI_Datatype, nd+1)
	if C.sc_contents(dt, ni, na, nd, &is[0], &as[0], &ds[0]) != C.MPI_SUCCESS {
		return nil, fmt.Errorf("%w: MPI_Type_get_contents failed", errUndecodable)
	}
	is, as, ds = is[:ni], as[:na], ds[:nd]
	// The datatypes get_contents returns are new references to derived
	// types, which the caller frees (MPI 4.1 §5.1.13).
	olds := make([]*sig.Datatype, len(ds))
	var err error
	for i, d := range ds {
		if olds[i], err = decode(d, depth+1); err != nil {
			break
		}
	}
	for _, d := range ds {
		if C.sc_is_predefined(d) == 0 {
			C.sc_free_type(d)
		}
	}
	if err != nil {
		return nil, err
	}
	t, err := construct(comb, ints(is), addrs(as), olds)
	if err != nil {
		return nil, err
	}
	return withMPIExtent(dt, t)
}

// withMPIExtent gives t the bounds MPI gives dt. They differ where MPI
// pads a struct's extent to its members' alignment, which package sig
// leaves to an explicit Resized: {double; int} spans 16 bytes in MPI and
// 12 in sig, and the next copy starts where MPI says.
func withMPIExtent(dt C.MPI_Datatype, t *sig.Datatype) (*sig.Datatype, error) {
	var lb, ext C.MPI_Aint
	if C.sc_extent(dt, &lb, &ext) != C.MPI_SUCCESS {
		return nil, fmt.Errorf("%w: MPI_Type_get_extent failed", errUndecodable)
	}
	if int64(lb) == t.LB() && int64(ext) == t.Extent() {
		return t, nil
	}
	return sig.Resized(int64(lb), int64(ext), t)
}

func ints(is []C.int) []int64 {
	out := make([]int64, len(is))
	for i, v := range is {
		out[i] = int64(v)
	}
	return out
}

func addrs(as []C.MPI_Aint) []int64 {
	out := make([]int64, len(as))
	for i, v := range as {
		out[i] = int64(v)
	}
	return out
}

// construct applies one MPI constructor, given its contents as MPI 4.1
// §5.1.13 lays them out, to the decoded old types.
func construct(comb C.int, is, as []int64, olds []*sig.Datatype) (*sig.Datatype, error) {
	short := func(what string) error {
		return fmt.Errorf("%w: %s with too few contents", errUndecodable, what)
	}
	one := func(what string, ni, na int) (*sig.Datatype, error) {
		if len(olds) != 1 || len(is) < ni || len(as) < na {
			return nil, short(what)
		}
		return olds[0], nil
	}
	// counted returns the count in is[0] and checks that is holds at least
	// k·count more integers after extra.
	counted := func(what string, extra, k int) (int, error) {
		if len(is) < 1 || is[0] < 0 || int64(len(is)) < 1+int64(extra)+int64(k)*is[0] {
			return 0, short(what)
		}
		return int(is[0]), nil
	}
	switch comb {
	case C.SC_COMB_DUP:
		return one("dup", 0, 0)
	case C.SC_COMB_CONTIGUOUS:
		old, err := one("contiguous", 1, 0)
		if err != nil {
			return nil, err
		}
		return sig.Contiguous(is[0], old)
	case C.SC_COMB_VECTOR:
		old, err := one("vector", 3, 0)
		if err != nil {
			return nil, err
		}
		return sig.Vector(is[0], is[1], is[2], old)
	case C.SC_COMB_HVECTOR:
		old, err := one("hvector", 2, 1)
		if err != nil {
			return nil, err
		}
		return sig.HVector(is[0], is[1], as[0], old)
	case C.SC_COMB_INDEXED:
		n, err := counted("indexed", 0, 2)
		if err != nil || len(olds) != 1 {
			return nil, short("indexed")
		}
		return sig.Indexed(is[1:1+n], is[1+n:1+2*n], olds[0])
	case C.SC_COMB_HINDEXED:
		n, err := counted("hindexed", 0, 1)
		if err != nil || len(olds) != 1 || len(as) < n {
			return nil, short("hindexed")
		}
		return sig.HIndexed(is[1:1+n], as[:n], olds[0])
	case C.SC_COMB_INDEXED_BLOCK:
		n, err := counted("indexed_block", 1, 1)
		if err != nil || len(olds) != 1 {
			return nil, short("indexed_block")
		}
		return sig.IndexedBlock(is[1], is[2:2+n], olds[0])
	case C.SC_COMB_HINDEXED_BLOCK:
		n, err := counted("hindexed_block", 1, 0)
		if err != nil || len(olds) != 1 || len(as) < n {
			return nil, short("hindexed_block")
		}
		return sig.HIndexedBlock(is[1], as[:n], olds[0])
	case C.SC_COMB_STRUCT:
		n, err := counted("struct", 0, 1)
		if err != nil || len(olds) != n || len(as) < n {
			return nil, short("struct")
		}
		return sig.Struct(is[1:1+n], as[:n], olds)
	case C.SC_COMB_RESIZED:
		old, err := one("resized", 0, 2)
		if err != nil {
			return nil, err
		}
		return sig.Resized(as[0], as[1], old)
	case C.SC_COMB_SUBARRAY:
		old, err := one("subarray", 1, 0)
		if err != nil {
			return nil, err
		}
		return subarray(is, old)
	}
	return nil, fmt.Errorf("%w: combiner %d (such as MPI_Type_create_darray or a Fortran 90 parameterised type)", errUndecodable, int(comb))
}

// subarray builds MPI_Type_create_subarray from the constructors package
// sig has: one contiguous row of the innermost dimension, an hvector per
// outer dimension, the start as one displaced block, and the extent of
// the whole array. Its type signature is the subarray's, element for
// element, and so are the displacements.
func subarray(is []int64, old *sig.Datatype) (*sig.Datatype, error) {
	if len(is) < 1 || is[0] < 1 || int64(len(is)) < 2+3*is[0] {
		return nil, fmt.Errorf("%w: subarray with too few contents", errUndecodable)
	}
	n := int(is[0])
	sizes, subs, starts := is[1:1+n], is[1+n:1+2*n], is[1+2*n:1+3*n]
	order := is[1+3*n]
	dim := func(i int) int { // i-th dimension from the innermost
		if order == int64(C.SC_ORDER_C) {
			return n - 1 - i
		}
		return i
	}
	ext := old.Extent()
	stride := ext // bytes between consecutive indices of the dimension
	var off int64
	t, err := sig.Contiguous(subs[dim(0)], old)
	if err != nil {
		return nil, err
	}
	off = starts[dim(0)] * stride
	for i := 1; i < n; i++ {
		stride *= sizes[dim(i-1)]
		if t, err = sig.HVector(subs[dim(i)], 1, stride, t); err != nil {
			return nil, err
		}
		off += starts[dim(i)] * stride
	}
	total := stride * sizes[dim(n-1)]
	if t, err = sig.HIndexed([]int64{1}, []int64{off}, t); err != nil {
		return nil, err
	}
	return sig.Resized(old.LB(), total, t)
}

// register gives t an id in this process.
func register(t *sig.Datatype) uint32 {
	types.Lock()
	defer types.Unlock()
	if t.Name() != "" {
		if id, ok := types.predef[t.Name()]; ok {
			return id
		}
	}
	id := types.next
	types.next++
	types.byID[id] = t
	return id
}

//export scGoDecode
func scGoDecode(dt C.MPI_Datatype, out *C.sc_type) {
	t, err := decode(dt, 0)
	if err != nil {
		out.id = 0
		noteUndecodable(err)
		return
	}
	out.id = C.uint32_t(register(t))
	out.elems = C.uint64_t(t.Elements())
	out.size = C.int64_t(t.Size())
	out.extent = C.int64_t(t.Extent())
	out.class = C.uint8_t(classOf(t))
	out.contig = 0
	if contiguous(t) {
		out.contig = 1
	}
}

// maxContigRuns bounds the walk that decides contiguity: a type of more
// runs than this is taken as not contiguous, which is always safe (its
// data is packed).
const maxContigRuns = 4096

// contiguous says whether the data bytes of copies of t are the buffer's
// bytes in order from its start: one ascending run without gaps or
// overlaps, whose extent is its size. Equal size and extent is not
// enough: a struct whose members are listed out of order, or blocks that
// overlap inside a resized extent, have it too, and their bytes in type
// map order are not the buffer's.
func contiguous(t *sig.Datatype) bool {
	if t.LB() != 0 || t.Size() != t.Extent() {
		return false
	}
	var next int64
	n := 0
	for r := range sig.Runs(t, 1, 0) {
		if n++; n > maxContigRuns {
			return false
		}
		size := r.Type.Size()
		if r.Disp != next || (r.Count > 1 && r.Stride != size) {
			return false
		}
		next += int64(r.Count) * size
	}
	return next == t.Size()
}

// classOf is the class of one or more copies of t.
func classOf(t *sig.Datatype) sig.Class {
	st, err := sig.NewStamp(alg, t, 1)
	if err != nil {
		return sig.Typed
	}
	return st.Class
}

//export scGoTypeFree
func scGoTypeFree(id C.uint32_t) {
	if id < firstDerived {
		return
	}
	types.Lock()
	delete(types.byID, uint32(id))
	types.Unlock()
}

//export scGoOf
func scGoOf(id C.uint32_t, count C.uint64_t, out *C.uint64_t) C.int {
	t := typeByID(uint32(id))
	if t == nil {
		return -1
	}
	s, err := sig.Of(alg, t, uint64(count))
	if err != nil {
		return -1
	}
	*out = C.uint64_t(s.Value)
	return 0
}

//export scGoPrefix
func scGoPrefix(id C.uint32_t, k C.uint64_t, out *C.uint64_t) C.int {
	t := typeByID(uint32(id))
	if t == nil || t.Elements() == 0 {
		return -1
	}
	count := (uint64(k) + t.Elements() - 1) / t.Elements()
	s, err := sig.Prefix(alg, t, count, uint64(k))
	if err != nil {
		return -1
	}
	*out = C.uint64_t(s.Value)
	return 0
}

//export scGoDescribe
func scGoDescribe(id C.uint32_t, buf *C.char, size C.int) C.int {
	t := typeByID(uint32(id))
	if t == nil {
		return -1
	}
	s := t.String()
	if len(s) > int(size) {
		return -1
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(size)), s)
	return C.int(len(s))
}
