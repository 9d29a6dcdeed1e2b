package tree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/zeebo/xxh3"
)

// ErrSize is returned (wrapped) when data is not as long as it should be:
// a file that changed while its manifest was written.
var ErrSize = errors.New("tree: file size differs from the manifest's")

// Report is what Check found of one file of a manifest.
type Report struct {
	File     int   // its index in the manifest's Files
	Size     int64 // bytes found; -1 when the file is missing
	Want     int64 // bytes the manifest says
	Segments int   // the manifest's segments of the file
	// Present is the number of leading segments wholly there: fewer than
	// Segments when the file is truncated or missing.
	Present   int
	Corrupted []int // segments present whose hash differs from the manifest's
	Unchecked []int // segments whose hash the manifest lost in both copies
}

// OK reports whether the file is exactly what the manifest describes
// (segments it could not check aside).
func (r *Report) OK() bool { return r.Size == r.Want && len(r.Corrupted) == 0 }

// Missing returns where the data stops and how many bytes are missing
// after it (0 unless the file is truncated or missing).
func (r *Report) Missing() (from, n int64) {
	from = max(r.Size, 0)
	return from, max(0, r.Want-from)
}

// Appended returns the bytes found past the end the manifest says.
func (r *Report) Appended() int64 { return max(0, r.Size-r.Want) }

// Lost returns the segments a repair must rebuild: the corrupted ones and
// those not wholly there, in order.
func (r *Report) Lost() []int {
	lost := slices.Clone(r.Corrupted)
	for j := r.Present; j < r.Segments; j++ {
		lost = append(lost, j)
	}
	return lost
}

// Check compares the size bytes of file i readable from r (size -1 for a
// missing file) with the manifest. A file of another length is compared
// over what it has in common with the manifest's: the report says how
// many bytes are missing or appended, and which segments of the common
// part differ.
func (m *Manifest) Check(i int, r io.ReaderAt, size int64, opts ...Option) (*Report, error) {
	if i < 0 || i >= len(m.Files) {
		return nil, fmt.Errorf("%w: file %d of %d", ErrIndex, i, len(m.Files))
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	f := &m.Files[i]
	rep := &Report{File: i, Size: size, Want: f.Size, Segments: f.Segments, Present: f.Segments}
	if size < 0 {
		rep.Present = 0
		return rep, nil
	}
	if size < f.Size {
		rep.Present = int(size / int64(m.Segment))
	}
	seg := int64(m.Segment)
	hs := m.Hash.Size()
	per := max(1, readChunk/seg)
	buf := make([]byte, min(per*seg, f.Size))
	want := make([]byte, per*int64(hs))
	alt := make([]byte, per*int64(hs))
	word := make([]uint64, m.Hash.words)
	mine := make([]byte, 0, hs)
	for j0 := 0; j0 < rep.Present; j0 += int(per) {
		j1 := min(j0+int(per), rep.Present)
		off := int64(j0) * seg
		data := buf[:min(int64(j1)*seg, f.Size)-off]
		if k, err := r.ReadAt(data, off); k < len(data) {
			if err == nil || err == io.EOF {
				return nil, fmt.Errorf("%w: %s ends at byte %d, not %d as it said", ErrSize, f.Name, off+int64(k), size)
			}
			return nil, fmt.Errorf("tree: reading %s at byte %d: %w", f.Name, off, err)
		}
		a, b := m.leafAt(i, j0)
		w := want[:(j1-j0)*hs]
		// A truncated manifest reads short: its missing blocks are
		// already marked damaged.
		if _, err := m.f.ReadAt(w, m.nodesAt+a); err != nil && err != io.EOF {
			return nil, fmt.Errorf("tree: reading the manifest: %w", err)
		}
		altRead := false
		for j := j0; j < j1; j++ {
			k := (j - j0) * hs
			exp := w[k : k+hs]
			if !m.nodeOK[(a+int64(k))/hashBlock] {
				if !m.leafOK[(b+int64(k))/hashBlock] {
					rep.Unchecked = append(rep.Unchecked, j)
					continue
				}
				if !altRead {
					if _, err := m.f.ReadAt(alt[:len(w)], m.leavesAt+b); err != nil && err != io.EOF {
						return nil, fmt.Errorf("tree: reading the manifest: %w", err)
					}
					altRead = true
				}
				exp = alt[k : k+hs]
			}
			so := int64(j-j0) * seg
			m.Hash.leaf(data[so:min(so+seg, int64(len(data)))], uint64(j+f.Segments-1), word)
			if !bytes.Equal(appendHash(mine[:0], get(word), hs), exp) {
				rep.Corrupted = append(rep.Corrupted, j)
			}
		}
		if c.progress != nil {
			c.progress(off + int64(len(data)))
		}
	}
	return rep, nil
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
	word := make([]uint64, m.Hash.words)
	m.Hash.leaf(b, uint64(f.Segments-1), word)
	return get(word) == want
}

// Target is a file that Repair rewrites (an *os.File is one).
type Target interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
}

// repairPlan is what a repair rebuilds: per stripe, the lost places.
type repairPlan struct {
	stripes []int         // affected, in order
	lost    map[int][]int // stripe → places of lost segments in it
}

// Plan says whether the parity can rebuild what the reports (one per file,
// nil for a file known intact) say is lost: nil if it can, else an error
// wrapping ErrTooManyFaults that names the first stripe short of parity,
// or ErrRepairCheck when a segment to rebuild has no hash to check it by.
// It reads the parity of the stripes concerned, to count damaged parity
// segments as lost.
func (m *Manifest) Plan(reports []*Report) error {
	_, err := m.plan2(reports)
	return err
}

func (m *Manifest) plan2(reports []*Report) (*repairPlan, error) {
	if len(reports) != len(m.Files) {
		return nil, fmt.Errorf("%w: %d reports for %d files", ErrShape, len(reports), len(m.Files))
	}
	p := &repairPlan{lost: map[int][]int{}}
	var total int64
	for i, r := range reports {
		if r == nil {
			continue
		}
		unchecked := map[int]bool{}
		for _, j := range r.Unchecked {
			unchecked[j] = true
		}
		for _, j := range r.Lost() {
			if unchecked[j] {
				return nil, fmt.Errorf("%w: %s, segment %d: the manifest lost its hash", ErrRepairCheck, m.Files[i].Name, j)
			}
			if m.Parity == 0 {
				return nil, fmt.Errorf("%w: the manifest has no parity", ErrTooManyFaults)
			}
			s, k := m.stripe(m.Global(i, j))
			p.lost[s] = append(p.lost[s], k)
			total++
		}
	}
	for s := range p.lost {
		p.stripes = append(p.stripes, s)
	}
	sort.Ints(p.stripes)
	buf := make([]byte, m.Segment)
	for _, s := range p.stripes {
		intact := 0
		for k := range m.Parity {
			if m.readParity(s, k, buf) {
				intact++
			}
		}
		if n := len(p.lost[s]); n > intact {
			return nil, fmt.Errorf("%w: %d segments lost in all; stripe %d lost %d of its %d, and %d of its %d parity segments are intact",
				ErrTooManyFaults, total, s, n, m.stripeWidth(s), intact, m.Parity)
		}
	}
	return p, nil
}

// readParity reads parity segment k of stripe s into buf and reports
// whether it is intact.
func (m *Manifest) readParity(s, k int, buf []byte) bool {
	x := s*m.Parity + k
	n, _ := m.f.ReadAt(buf, m.parityAt+int64(x)*int64(m.Segment))
	return n == len(buf) && xxh3.Hash(buf) == m.paritySums[x]
}

// Repair rebuilds what the reports say is lost (one report per file, nil
// for a file known intact) from the parity, checks each rebuilt segment
// against the manifest's hash and writes it into files[i] (every file of
// the set, since stripes span them; a missing file as a new empty one).
// Then files of the wrong length are cut or extended to theirs. Nothing is
// written unless Plan passes; a rebuilt segment that does not check
// (ErrRepairCheck: more was damaged than the reports say) stops the repair
// there, with the segments written so far correct.
func (m *Manifest) Repair(files []Target, reports []*Report) error {
	if len(files) != len(m.Files) {
		return fmt.Errorf("%w: %d files for a manifest of %d", ErrShape, len(files), len(m.Files))
	}
	p, err := m.plan2(reports)
	if err != nil {
		return err
	}
	seg := m.Segment
	data := make([][]byte, m.Width)
	for k := range data {
		data[k] = make([]byte, seg)
	}
	parity := make([][]byte, m.Parity)
	parbuf := make([][]byte, m.Parity)
	for k := range parbuf {
		parbuf[k] = make([]byte, seg)
	}
	word := make([]uint64, m.Hash.words)
	for _, s := range p.stripes {
		w := m.stripeWidth(s)
		lost := p.lost[s]
		isLost := make([]bool, w)
		for _, k := range lost {
			isLost[k] = true
		}
		for k := range w {
			if isLost[k] {
				continue
			}
			i, j := m.locate(int64(k)*int64(m.Stripes) + int64(s))
			off, n := m.SegmentRange(i, j)
			clear(data[k][n:])
			if got, err := files[i].ReadAt(data[k][:n], off); int64(got) < n {
				return fmt.Errorf("tree: reading %s at byte %d: %v", m.Files[i].Name, off, err)
			}
		}
		for k := range m.Parity {
			parity[k] = nil
			if m.readParity(s, k, parbuf[k]) {
				parity[k] = parbuf[k]
			}
		}
		if err := solveStripe(data[:w], lost, parity); err != nil {
			return fmt.Errorf("tree: stripe %d: %w", s, err)
		}
		for _, k := range lost {
			i, j := m.locate(int64(k)*int64(m.Stripes) + int64(s))
			off, n := m.SegmentRange(i, j)
			content := data[k][:n]
			want, ok, err := m.Leaf(i, j)
			if err != nil {
				return err
			}
			m.Hash.leaf(content, uint64(j+m.Files[i].Segments-1), word)
			if !ok || get(word) != want {
				return fmt.Errorf("%w: %s, segment %d", ErrRepairCheck, m.Files[i].Name, j)
			}
			if _, err := files[i].WriteAt(content, off); err != nil {
				return fmt.Errorf("tree: writing %s: %w", m.Files[i].Name, err)
			}
		}
	}
	for i, r := range reports {
		if r != nil && r.Size != r.Want {
			if err := files[i].Truncate(r.Want); err != nil {
				return fmt.Errorf("tree: %s back to %d bytes: %w", m.Files[i].Name, r.Want, err)
			}
		}
	}
	return nil
}
