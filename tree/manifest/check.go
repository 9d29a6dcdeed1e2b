package manifest

import (
	"context"
	"fmt"
	"io"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/tree"
)

// Report is what Check found of one file of a manifest.
type Report struct {
	File     int   // its index in the manifest's Files
	Size     int64 // bytes found; -1 when the file is absent
	Want     int64 // bytes the manifest says
	Segments int   // the manifest's segments of the file
	// Present is the number of leading segments wholly there, and
	// compared: fewer than Segments when the file is truncated or absent.
	Present   int
	Matched   int64 // segments present whose hash is the manifest's
	Corrupted []Run // segments present whose hash differs from the manifest's
	Unchecked []Run // segments whose hash the manifest lost in both copies
	// Moved are segments corrupted or missing at their place and found
	// whole elsewhere in the file by Find: not lost, but the file must be
	// laid out anew.
	Moved []Moved
	// ScanStopped says that Find gave up: its weak sums matched the file
	// so often without the leaf hashes agreeing that it cost as much as
	// the file again (a forged manifest).
	ScanStopped bool
	// RootChecked says that the manifest lost the hashes of some segments
	// (Unchecked) and the file, of the right size, was checked whole
	// against its root instead; RootMatches, that the root was the same:
	// the unchecked segments are intact too. A root that differs, with
	// every checked segment matching, puts the damage among the
	// unchecked ones.
	RootChecked, RootMatches bool
}

// OK reports whether the file is exactly what the manifest describes:
// its size, every segment checked matching, and, when the manifest lost
// the hashes of some segments, the file's root matching the manifest's.
func (r *Report) OK() bool {
	return r.Size == r.Want && len(r.Corrupted) == 0 && (len(r.Unchecked) == 0 || r.RootMatches)
}

// Missing returns where the data stops and how many bytes are missing
// after it (0 unless the file is truncated or absent).
func (r *Report) Missing() (from, n int64) {
	from = max(r.Size, 0)
	return from, max(0, r.Want-from)
}

// Appended returns the bytes found past the end the manifest says.
func (r *Report) Appended() int64 { return max(0, r.Size-r.Want) }

// Lost returns the segments a repair must rebuild: the corrupted ones and
// those not wholly there, less those found moved.
func (r *Report) Lost() []Run {
	lost := r.Corrupted
	if r.Present < r.Segments {
		lost = union(r.Corrupted, []Run{{r.Present, r.Segments - r.Present}})
	}
	moved := make([]Run, len(r.Moved))
	for k, mv := range r.Moved {
		moved[k] = mv.Run
	}
	return subtract(lost, moved)
}

// Foreign reports whether the file is there, not empty, and nothing of
// it matched, at its place or moved, though segments were compared or its
// size differs: it may not be the file the manifest was made of. (An empty
// segment matches any file's first bytes, so it is no evidence.)
func (r *Report) Foreign() bool {
	return r.Matched == 0 && len(r.Moved) == 0 && (len(r.Corrupted) > 0 || r.Size > 0 && r.Size != r.Want)
}

// Absent returns the report of file i when it is not there (missing, or
// something else in its place).
func (m *Manifest) Absent(i int) *Report {
	f := &m.Files[i]
	return &Report{File: i, Size: -1, Want: f.Size, Segments: f.Segments, Unchecked: m.lostLeaves(i)}
}

// Check compares the size bytes of file i readable from r with the
// manifest. A file of another length is compared over what it has in
// common with the manifest's: the report says how many bytes are missing
// or appended, and which segments of the common part differ. progress, if
// not nil, is called with the bytes done so far. Memory is a megabyte or
// a segment, whichever is larger.
func (m *Manifest) Check(ctx context.Context, i int, r io.ReaderAt, size int64, progress func(int64)) (*Report, error) {
	if i < 0 || i >= len(m.Files) {
		return nil, fmt.Errorf("%w: file %d of %d", ErrShape, i, len(m.Files))
	}
	if size < 0 {
		return m.Absent(i), nil
	}
	f := &m.Files[i]
	rep := m.Absent(i)
	rep.Size, rep.Present = size, f.Segments
	if size < f.Size {
		rep.Present = int(size / int64(m.Segment))
	}
	seg := int64(m.Segment)
	hs := m.Hash.Size()
	per := min(max(1, readChunk/seg), int64(max(rep.Present, 1)))
	buf := make([]byte, min(per*seg, f.Size, size)) // what is there, whatever the manifest claims
	want := make([]byte, per*int64(hs))
	alt := make([]byte, per*int64(hs))
	unchecked := rep.Unchecked
	// With hashes lost, the whole file is checked against its root: its
	// tree is built in memory, 16 or 32 bytes a segment, if that is no
	// more than the file's bytes or 64 MiB (else the segments stay
	// unchecked, and the file is not OK).
	var nodes []uint64
	nw := m.Hash.Size() / 8
	if n := int64(2*f.Segments-1) * int64(nw) * 8; len(rep.Unchecked) > 0 && size == f.Size && n <= max(64<<20, size) {
		nodes = make([]uint64, (2*f.Segments-1)*nw)
	}
	for j0 := 0; j0 < rep.Present; j0 += int(per) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		j1 := min(j0+int(per), rep.Present)
		off := int64(j0) * seg
		data := buf[:min(int64(j1)*seg, f.Size)-off]
		if k, err := r.ReadAt(data, off); k < len(data) {
			if err == nil || err == io.EOF {
				return nil, fmt.Errorf("%w: %s ends at byte %d, not %d as it said", ErrSize, f.Name, off+int64(k), size)
			}
			return nil, fmt.Errorf("manifest: reading %s at byte %d: %w", f.Name, off, err)
		}
		a, b := m.leafAt(i, j0)
		w := want[:(j1-j0)*hs]
		// A truncated manifest reads short: its missing blocks are
		// already marked damaged.
		if _, err := m.f.ReadAt(w, m.nodesAt+a); err != nil && err != io.EOF {
			return nil, fmt.Errorf("manifest: reading the manifest: %w", err)
		}
		altRead := false
		for j := j0; j < j1; j++ {
			so := int64(j-j0) * seg
			sb := data[so:min(so+seg, int64(len(data)))]
			got := m.Hash.Leaf(sb, uint64(j+f.Segments-1))
			if nodes != nil {
				putNode(nodes, j+f.Segments-1, nw, got)
			}
			for len(unchecked) > 0 && unchecked[0].end() <= j {
				unchecked = unchecked[1:]
			}
			if len(unchecked) > 0 && unchecked[0].First <= j {
				continue
			}
			k := (j - j0) * hs
			exp := w[k : k+hs]
			if !m.nodeOK[(a+int64(k))/hashBlock] {
				if !altRead {
					if _, err := m.f.ReadAt(alt[:len(w)], m.leavesAt+b); err != nil && err != io.EOF {
						return nil, fmt.Errorf("manifest: reading the manifest: %w", err)
					}
					altRead = true
				}
				exp = alt[k : k+hs]
			}
			if got == decodeHash(exp) {
				if len(sb) > 0 {
					rep.Matched++
				}
			} else {
				rep.Corrupted = appendSegment(rep.Corrupted, j)
			}
		}
		if progress != nil {
			progress(off + int64(len(data)))
		}
	}
	if nodes != nil {
		rep.RootChecked = true
		rep.RootMatches = rootOf(m.Hash, nodes, nw) == f.Root
	}
	return rep, nil
}

func putNode(nodes []uint64, i, w int, v csum.Value) {
	nodes[i*w] = v.Lo
	if w == 2 {
		nodes[i*w+1] = v.Hi
	}
}

func getNode(nodes []uint64, i, w int) csum.Value {
	v := csum.Value{Lo: nodes[i*w]}
	if w == 2 {
		v.Hi = nodes[i*w+1]
	}
	return v
}

// rootOf computes, in nodes, the inner nodes of a tree whose leaves are
// there already, as tree.Build does (node i's children are 2i+1 and 2i+2,
// leaf j is node j+n-1), and returns its root.
func rootOf(h *tree.Hash, nodes []uint64, w int) csum.Value {
	n := (len(nodes)/w + 1) / 2
	for i := n - 2; i >= 0; i-- {
		putNode(nodes, i, w, h.Inner(getNode(nodes, 2*i+1, w), getNode(nodes, 2*i+2, w), uint64(i)))
	}
	return getNode(nodes, 0, w)
}

// Matches reports whether r (size bytes) looks like file i: the same size
// and the same first segment. It finds a renamed file cheaply; Check says
// whether all of it matches.
func (m *Manifest) Matches(i int, r io.ReaderAt, size int64) bool {
	f := &m.Files[i]
	if size != f.Size {
		return false
	}
	want, ok, err := m.Leaf(i, 0)
	if err != nil || !ok {
		return false
	}
	_, n := m.SegmentRange(i, 0)
	b := make([]byte, n)
	if k, _ := r.ReadAt(b, 0); int64(k) != n {
		return false
	}
	return m.Hash.Leaf(b, uint64(f.Segments-1)) == want
}

func decodeHash(b []byte) csum.Value {
	v := csum.Value{Lo: le64(b)}
	if len(b) == 16 {
		v.Hi = le64(b[8:])
	}
	return v
}

// Recheck checks again, in r (size bytes), only the segments of runs of
// file i, where a repair wrote, and returns the report the file now has,
// from prev, its report before: what was intact is taken as still
// intact. A repair's own reading back of what it wrote, at the cost of
// the writes, where a whole Check would read the whole file again.
func (m *Manifest) Recheck(ctx context.Context, i int, r io.ReaderAt, size int64, prev *Report, runs []Run) (*Report, error) {
	f := &m.Files[i]
	rep := &Report{File: i, Size: size, Want: f.Size, Segments: f.Segments, Present: f.Segments, Unchecked: prev.Unchecked}
	if size < f.Size {
		rep.Present = int(size / int64(m.Segment))
	}
	// What prev found intact and was not rewritten.
	bad := subtract(prev.Lost(), runs)
	rep.Matched = int64(rep.Present) - Count(intersect(bad, []Run{{0, rep.Present}})) - Count(intersect(prev.Unchecked, []Run{{0, rep.Present}}))
	rep.Corrupted = intersect(bad, []Run{{0, rep.Present}})
	buf := make([]byte, m.Segment)
	for _, run := range intersect(runs, []Run{{0, rep.Present}}) {
		for j := run.First; j < run.end(); j++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if intersects(prev.Unchecked, j) {
				continue
			}
			off, n := m.SegmentRange(i, j)
			b := buf[:n]
			if k, err := r.ReadAt(b, off); int64(k) < n {
				return nil, fmt.Errorf("manifest: reading %s at byte %d: %w", f.Name, off+int64(k), err)
			}
			want, ok, err := m.Leaf(i, j)
			if err != nil {
				return nil, err
			}
			if ok && m.Hash.Leaf(b, uint64(j+f.Segments-1)) == want {
				continue
			}
			rep.Matched--
			rep.Corrupted = union(rep.Corrupted, []Run{{j, 1}})
		}
	}
	return rep, nil
}
