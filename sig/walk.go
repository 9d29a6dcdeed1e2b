package sig

import (
	"fmt"
	"iter"
	"strings"
)

// Step is one level of the way from a (datatype, count) pair down to one of
// its elements.
type Step struct {
	Kind  string // "count" for the top level, else the constructor: "vector", "struct", …
	Block int64  // block (struct: member) index; -1 for count and contiguous
	Copy  int64  // which copy of the block's datatype; -1 when the block has only one
	Basic bool   // the copies are basic elements, not derived datatypes
}

func (s Step) String() string {
	unit := "copy"
	if s.Basic {
		unit = "element"
	}
	switch s.Kind {
	case "count":
		return fmt.Sprintf("item %d", s.Copy)
	case "contiguous":
		return fmt.Sprintf("contiguous %s %d", unit, s.Copy)
	}
	head := fmt.Sprintf("%s block %d", s.Kind, s.Block)
	if s.Kind == "struct" {
		head = fmt.Sprintf("struct member %d", s.Block)
	}
	if s.Copy >= 0 {
		head += fmt.Sprintf(" → %s %d", unit, s.Copy)
	}
	return head
}

// Path locates an element inside a datatype, outermost level first; its
// String reads like "item 3 → struct member 2 → vector block 5 → element 1".
type Path []Step

func (p Path) String() string {
	if len(p) == 0 {
		return "the basic type itself"
	}
	parts := make([]string, len(p))
	for i, s := range p {
		parts[i] = s.String()
	}
	return strings.Join(parts, " → ")
}

// Element describes element k of a (datatype, count) pair.
type Element struct {
	Index uint64    // zero-based position in the type signature
	Type  *Datatype // its basic type
	Disp  int64     // byte displacement from the start of the buffer
	Path  Path
}

// ElementAt returns element k of count copies of t, descending the
// description in O(depth) steps (and a binary search per indexed or struct
// level), without expanding it.
func ElementAt(t *Datatype, count, k uint64) (Element, error) {
	n, err := total(t, count)
	if err != nil {
		return Element{}, err
	}
	if k >= n {
		return Element{}, fmt.Errorf("sig: element %d of a type signature of %s", k, elements(n))
	}
	e := Element{Index: k}
	q := k / t.elems
	e.Disp = int64(q) * t.Extent()
	if count > 1 {
		e.Path = append(e.Path, Step{Kind: "count", Block: -1, Copy: int64(q), Basic: t.IsBasic()})
	}
	k %= t.elems
	for !t.IsBasic() {
		var step Step
		var old *Datatype
		var off int64
		switch t.kind {
		case kindResized:
			t = t.old
			continue
		case kindContiguous:
			old = t.old
			step = Step{Kind: "contiguous", Block: -1}
		case kindVector, kindHVector:
			old = t.old
			per := uint64(t.blocklen) * old.elems
			b := k / per
			k -= b * per
			off = int64(b) * t.stride
			if t.kind == kindVector {
				off *= old.Extent()
			}
			step = Step{Kind: t.kind.String(), Block: int64(b), Copy: -1}
			if t.blocklen > 1 {
				step.Copy = 0
			}
		default: // indexed kinds and struct
			i := t.blockOf(k)
			var n int64
			n, old = t.block(i)
			k -= t.cum[i]
			off = t.displs[i]
			if t.kind == kindIndexed || t.kind == kindIndexedBlock {
				off *= old.Extent()
			}
			step = Step{Kind: t.kind.String(), Block: int64(i), Copy: -1}
			if n > 1 {
				step.Copy = 0
			}
		}
		c := k / old.elems
		k %= old.elems
		e.Disp += off + int64(c)*old.Extent()
		if step.Copy >= 0 || step.Kind == "contiguous" {
			step.Copy = int64(c)
		}
		step.Basic = old.IsBasic()
		e.Path = append(e.Path, step)
		t = old
	}
	e.Type = t
	return e, nil
}

// Run is a stretch of consecutive elements of one basic type, evenly spaced
// in memory.
type Run struct {
	Type   *Datatype
	Index  uint64 // position of the first element in the type signature
	Count  uint64
	Disp   int64 // byte displacement of the first element
	Stride int64 // bytes from one element to the next
}

// Runs returns the type map of count copies of t from element from on, as
// runs of basic elements, merging a run into the previous one when it
// continues it. Runs are produced lazily: stop early for large types.
func Runs(t *Datatype, count, from uint64) iter.Seq[Run] {
	return func(yield func(Run) bool) {
		n, err := total(t, count)
		if err != nil || from >= n {
			return
		}
		var cur Run
		have := false
		merged := 0
		emit := func(r Run) bool {
			// Merging is best effort: after maxMerge pieces a run is
			// yielded as it stands, so that no structure can make the
			// consumer wait for more than a bounded amount of work.
			if have && r.Type == cur.Type && merged < maxMerge {
				merged++
				switch {
				case cur.Count == 1 && (r.Count == 1 || r.Disp-cur.Disp == r.Stride):
					// A lone element sets the stride of the run it starts.
					cur.Stride = r.Disp - cur.Disp
					cur.Count += r.Count
					return true
				case r.Disp == cur.Disp+int64(cur.Count)*cur.Stride && (r.Count == 1 || r.Stride == cur.Stride):
					cur.Count += r.Count
					return true
				}
			}
			if have && !yield(cur) {
				return false
			}
			cur, have, merged = r, true, 0
			return true
		}
		w := &walker{emit: emit, index: from}
		if w.copies(t, count, 0, from) && have {
			yield(cur)
		}
	}
}

type walker struct {
	emit  func(Run) bool
	index uint64
}

// maxMerge bounds the pieces Runs merges into one run.
const maxMerge = 1 << 16

// walk emits the elements of one t at byte offset disp, skipping its first
// skip elements; it returns false when the consumer has had enough.
func (w *walker) walk(t *Datatype, disp int64, skip uint64) bool {
	if r := t.run; r.Type != nil && t.kind != kindBasic {
		// The whole type is one run: one step, whatever its size.
		k := r.Count - skip
		w.index += k
		return w.emit(Run{Type: r.Type, Index: w.index - k, Count: k, Disp: disp + r.Disp + int64(skip)*r.Stride, Stride: r.Stride})
	}
	switch t.kind {
	case kindBasic:
		w.index++
		return w.emit(Run{Type: t, Index: w.index - 1, Count: 1, Disp: disp, Stride: t.Extent()})
	case kindResized:
		return w.walk(t.old, disp, skip)
	case kindContiguous:
		return w.copies(t.old, uint64(t.count), disp, skip)
	case kindVector, kindHVector:
		per := uint64(t.blocklen) * t.old.elems
		if per == 0 {
			return true
		}
		step := t.stride
		if t.kind == kindVector {
			step *= t.old.Extent()
		}
		for b := skip / per; b < uint64(t.count); b++ {
			if !w.copies(t.old, uint64(t.blocklen), disp+int64(b)*step, skip%per) {
				return false
			}
			skip = 0
		}
		return true
	}
	if skip >= t.elems {
		return true
	}
	for i := t.blockOf(skip); i < len(t.blocklens); i++ {
		n, old := t.block(i)
		off := t.displs[i]
		if t.kind == kindIndexed || t.kind == kindIndexedBlock {
			off *= old.Extent()
		}
		s := uint64(0)
		if skip > t.cum[i] {
			s = skip - t.cum[i]
		}
		if !w.copies(old, uint64(n), disp+off, s) {
			return false
		}
	}
	return true
}

// copies emits n copies of old from disp, one extent apart, skipping skip elements.
func (w *walker) copies(old *Datatype, n uint64, disp int64, skip uint64) bool {
	if old.elems == 0 || skip >= n*old.elems {
		return true
	}
	if r, ok := old.copiesRun(n); ok {
		// The copies are one run: emit it whole, so that
		// contiguous(1e9, double) or vector(1e9, 3, 3, double) costs one step,
		// and vector(1e9, 3, 5, double) one step per block.
		k := r.Count - skip
		w.index += k
		return w.emit(Run{Type: r.Type, Index: w.index - k, Count: k, Disp: disp + r.Disp + int64(skip)*r.Stride, Stride: r.Stride})
	}
	c := skip / old.elems
	for ; c < n; c++ {
		if !w.walk(old, disp+int64(c)*old.Extent(), skip%old.elems) {
			return false
		}
		skip = 0
	}
	return true
}

// TypeMap renders up to maxRuns runs of the type map of count copies of t
// from element from, like "int×4 @0, double @16, … (+1000 elements)". A run
// with a stride other than its type's size shows it: "double×3 @0 stride 16".
// The element at mark, if it lies in the window, is set apart in brackets:
// "[double] @8000". Use mark = ^uint64(0) for none.
func TypeMap(t *Datatype, count, from, mark uint64, maxRuns int) string {
	n, err := total(t, count)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	if n == 0 {
		return "(empty)"
	}
	var b strings.Builder
	shown, end := 0, from
	put := func(r Run, marked bool) {
		if shown > 0 {
			b.WriteString(", ")
		}
		name := r.Type.Name()
		if marked {
			name = "[" + name + "]"
		}
		b.WriteString(name)
		if r.Count > 1 {
			fmt.Fprintf(&b, "×%d", r.Count)
		}
		fmt.Fprintf(&b, " @%d", r.Disp)
		if r.Count > 1 && r.Stride != r.Type.Size() {
			fmt.Fprintf(&b, " stride %d", r.Stride)
		}
		shown++
		end = r.Index + r.Count
	}
	if from > 0 {
		b.WriteString("… ")
	}
	for r := range Runs(t, count, from) {
		if shown >= maxRuns {
			break
		}
		if mark >= r.Index && mark < r.Index+r.Count {
			// Split the run around the marked element.
			before := mark - r.Index
			if before > 0 {
				put(Run{r.Type, r.Index, before, r.Disp, r.Stride}, false)
			}
			put(Run{r.Type, mark, 1, r.Disp + int64(before)*r.Stride, r.Stride}, true)
			if after := r.Count - before - 1; after > 0 && shown < maxRuns {
				put(Run{r.Type, mark + 1, after, r.Disp + int64(before+1)*r.Stride, r.Stride}, false)
			}
			continue
		}
		put(r, false)
	}
	if end < n {
		fmt.Fprintf(&b, ", … (+%s)", elements(n-end))
	}
	return b.String()
}

// copiesRun returns n ≥ 1 copies of t, one extent apart, as one run
// relative to the first copy's origin, if they form one.
func (t *Datatype) copiesRun(n uint64) (Run, bool) {
	r := t.run
	if r.Type == nil {
		return Run{}, false
	}
	if n == 1 {
		return r, true
	}
	switch {
	case r.Count == 1:
		r.Stride = t.Extent()
	case t.Extent() != int64(r.Count)*r.Stride:
		return Run{}, false
	}
	r.Count *= n // ≤ elements of an existing type, or of a checked total
	return r, true
}

// singleRun returns the type map of t as one evenly spaced run of one
// basic type, relative to t's origin, or a Run with a nil Type if it is not
// one. It looks at each block once, so it costs what the description does.
func (t *Datatype) singleRun() Run {
	var acc Run
	add := func(off int64, n uint64, old *Datatype) bool {
		if n == 0 || old.elems == 0 {
			return true
		}
		r, ok := old.copiesRun(n)
		if !ok {
			return false
		}
		r.Disp += off
		if acc.Type == nil {
			acc = r
			return true
		}
		if r.Type != acc.Type {
			return false
		}
		if acc.Count == 1 {
			acc.Stride = r.Disp - acc.Disp
			if r.Count > 1 && r.Stride != acc.Stride {
				return false
			}
		} else if r.Disp != acc.Disp+int64(acc.Count)*acc.Stride || r.Count > 1 && r.Stride != acc.Stride {
			return false
		}
		acc.Count += r.Count
		return true
	}
	switch t.kind {
	case kindBasic:
		return Run{Type: t, Count: 1, Stride: t.size}
	case kindResized:
		return t.old.run
	case kindContiguous:
		if !add(0, uint64(t.count), t.old) {
			return Run{}
		}
	case kindVector, kindHVector:
		step := t.stride
		if t.kind == kindVector {
			step *= t.old.Extent()
		}
		// Two blocks decide: the rest are translates by the same step.
		for b := range min(t.count, 2) {
			if !add(b*step, uint64(t.blocklen), t.old) {
				return Run{}
			}
		}
		if t.count > 2 && acc.Type != nil {
			acc.Count = t.elems
		}
	default:
		for i := range t.blocklens {
			n, old := t.block(i)
			off := t.displs[i]
			if t.kind == kindIndexed || t.kind == kindIndexedBlock {
				off *= old.Extent()
			}
			if !add(off, uint64(n), old) {
				return Run{}
			}
		}
	}
	return acc
}
