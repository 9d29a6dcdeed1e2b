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
	per := min(max(1, readChunk/seg), int64(max(rep.Present, 1)))
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

// repairPlan is what a repair rebuilds: per stripe, the lost places,
// and which of them are still in their file, damaged in place (their
// bytes may serve where the parity is damaged too).
type repairPlan struct {
	stripes []int          // affected, in order
	lost    map[int][]int  // stripe → places of lost segments in it
	hint    map[int][]bool // stripe → per lost place, still in its file
}

// Plan says whether the parity can rebuild what the reports (one per file,
// nil for a file known intact) say is lost: nil if it can, else an error
// wrapping ErrTooManyFaults that names the first stripe short of parity,
// or ErrRepairCheck when a segment to rebuild has no hash to check it by.
// It reads the parity of the stripes concerned, to count its damaged
// chunks. Where a stripe's parity is damaged too, the bytes of the
// damaged segments still in their files stand in for the missing rows,
// tried in turn and accepted only if every rebuilt segment then hashes
// right; Plan passes such a stripe if enough of them are there, and
// Repair may still find that none fits (ErrTooManyFaults).
func (m *Manifest) Plan(reports []*Report) error {
	_, err := m.plan2(reports)
	return err
}

func (m *Manifest) plan2(reports []*Report) (*repairPlan, error) {
	if len(reports) != len(m.Files) {
		return nil, fmt.Errorf("%w: %d reports for %d files", ErrShape, len(reports), len(m.Files))
	}
	p := &repairPlan{lost: map[int][]int{}, hint: map[int][]bool{}}
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
			p.hint[s] = append(p.hint[s], j < r.Present)
			total++
		}
	}
	for s := range p.lost {
		p.stripes = append(p.stripes, s)
	}
	sort.Ints(p.stripes)
	buf := make([]byte, m.Segment)
	for _, s := range p.stripes {
		intact := make([]int, m.chunks()) // per chunk, intact parity rows
		for k := range m.Parity {
			for c, ok := range m.readParity(s, k, buf) {
				if ok {
					intact[c]++
				}
			}
		}
		hints := 0
		for _, h := range p.hint[s] {
			if h {
				hints++
			}
		}
		n := len(p.lost[s])
		if least := slices.Min(intact); n > least+hints || n > m.Parity {
			return nil, fmt.Errorf("%w: %d segments lost in all; stripe %d lost %d of its %d, and has %d intact parity segments of %d",
				ErrTooManyFaults, total, s, n, m.stripeWidth(s), least, m.Parity)
		}
	}
	return p, nil
}

// readParity reads parity segment k of stripe s into buf and reports
// which of its chunks are intact.
func (m *Manifest) readParity(s, k int, buf []byte) []bool {
	x := (s*m.Parity + k) * m.chunks()
	n, _ := m.f.ReadAt(buf, m.parityAt+int64(s*m.Parity+k)*int64(m.Segment))
	ok := make([]bool, m.chunks())
	for c := range ok {
		c0, c1 := m.chunkRange(c)
		ok[c] = c1 <= n && xxh3.Hash(buf[c0:c1]) == m.paritySums[x+c]
	}
	return ok
}

// DamagedParity reads all the parity and returns how many of its KiB
// chunks fail their checksum (each costs its stripe one parity row over
// that KiB).
func (m *Manifest) DamagedParity() int {
	n := 0
	buf := make([]byte, m.Segment)
	for s := range m.Stripes {
		for k := range m.Parity {
			for _, ok := range m.readParity(s, k, buf) {
				if !ok {
					n++
				}
			}
		}
	}
	return n
}

// maxTrials bounds the stand-ins a repair tries in one stripe.
const maxTrials = 1024

// Repair rebuilds what the reports say is lost (one report per file, nil
// for a file known intact) from the parity, checks each rebuilt segment
// against the manifest's hash and writes it into files[i] (every file of
// the set, since stripes span them; a missing file as a new empty one).
// Then files of the wrong length are cut or extended to theirs. Nothing is
// written unless Plan passes; a stripe that cannot be rebuilt after all
// (ErrTooManyFaults: its damaged parity and segments overlap) or whose
// rebuilt segments do not check (ErrRepairCheck: more was damaged than the
// reports say) stops the repair there, with what was written so far
// correct.
func (m *Manifest) Repair(files []Target, reports []*Report) error {
	if len(files) != len(m.Files) {
		return fmt.Errorf("%w: %d files for a manifest of %d", ErrShape, len(files), len(m.Files))
	}
	p, err := m.plan2(reports)
	if err != nil {
		return err
	}
	st := &stripeRepair{m: m, files: files, data: make([][]byte, m.Width), parity: make([][]byte, m.Parity),
		word: make([]uint64, m.Hash.words)}
	for k := range st.data {
		st.data[k] = make([]byte, m.Segment)
	}
	for k := range st.parity {
		st.parity[k] = make([]byte, m.Segment)
	}
	for _, s := range p.stripes {
		if err := st.repair(s, p.lost[s], p.hint[s]); err != nil {
			return err
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

// stripeRepair rebuilds stripes, with buffers reused from one to the next.
type stripeRepair struct {
	m      *Manifest
	files  []Target
	data   [][]byte // the stripe's data segments, padded
	parity [][]byte
	word   []uint64
}

// group is a range of bytes of a stripe with the same intact parity rows.
type group struct {
	c0, c1 int
	rows   []int
}

func (st *stripeRepair) repair(s int, lost []int, hint []bool) error {
	m := st.m
	w := m.stripeWidth(s)
	data := st.data[:w]
	isLost := make([]bool, w)
	for _, k := range lost {
		isLost[k] = true
	}
	// Every segment's bytes, the damaged ones too where they are still
	// there: they stand in where the parity is damaged as well.
	var hints []int // places of lost segments with their bytes
	for x, k := range lost {
		if hint[x] {
			hints = append(hints, k)
		}
	}
	for k := range w {
		clear(data[k])
		if isLost[k] && !slices.Contains(hints, k) {
			continue
		}
		i, j := m.locate(int64(k)*int64(m.Stripes) + int64(s))
		off, n := m.SegmentRange(i, j)
		if got, err := st.files[i].ReadAt(data[k][:n], off); int64(got) < n {
			return fmt.Errorf("tree: reading %s at byte %d: %v", m.Files[i].Name, off, err)
		}
	}
	var groups []group
	ok := make([][]bool, m.Parity)
	for k := range m.Parity {
		ok[k] = m.readParity(s, k, st.parity[k])
	}
	for c := range m.chunks() {
		c0, c1 := m.chunkRange(c)
		var rows []int
		for k := range m.Parity {
			if ok[k][c] {
				rows = append(rows, k)
			}
		}
		if g := len(groups) - 1; g >= 0 && slices.Equal(groups[g].rows, rows) {
			groups[g].c1 = c1
			continue
		}
		groups = append(groups, group{c0, c1, rows})
	}
	// The ranges with enough parity are solved once; the others are tried
	// with stand-ins: each choice of damaged segments assumed intact over
	// the range, until every rebuilt segment hashes right.
	var short []group
	for _, g := range groups {
		if len(g.rows) >= len(lost) {
			if err := solveRange(data, lost, st.parity, g.rows[:len(lost)], g.c0, g.c1); err != nil {
				return err
			}
			continue
		}
		short = append(short, g)
	}
	saved := make(map[int][]byte, len(hints))
	for _, k := range hints {
		saved[k] = slices.Clone(data[k])
	}
	choices := make([][][]int, len(short))
	trials := 1
	for x, g := range short {
		choices[x] = combinations(hints, len(lost)-len(g.rows))
		trials *= len(choices[x])
		if trials == 0 || trials > maxTrials {
			return fmt.Errorf("%w: stripe %d: %d lost segments, %d intact parity rows over bytes %d-%d, %d damaged segments to stand in",
				ErrTooManyFaults, s, len(lost), len(g.rows), g.c0, g.c1-1, len(hints))
		}
	}
	for t := range trials {
		rest := t
		for x, g := range short {
			assume := choices[x][rest%len(choices[x])]
			rest /= len(choices[x])
			var solve []int
			for _, k := range lost {
				if slices.Contains(assume, k) {
					copy(data[k][g.c0:g.c1], saved[k][g.c0:g.c1])
				} else {
					solve = append(solve, k)
				}
			}
			if err := solveRange(data, solve, st.parity, g.rows, g.c0, g.c1); err != nil {
				return err
			}
		}
		bad, err := st.check(s, lost)
		if err != nil {
			return err
		}
		if bad < 0 {
			return st.write(s, lost)
		}
		if len(short) == 0 {
			i, j := m.locate(int64(bad)*int64(m.Stripes) + int64(s))
			return fmt.Errorf("%w: %s, segment %d", ErrRepairCheck, m.Files[i].Name, j)
		}
	}
	return fmt.Errorf("%w: stripe %d: its damaged parity and damaged segments overlap", ErrTooManyFaults, s)
}

// check hashes the rebuilt segments of stripe s and returns the first
// place whose hash is not the manifest's, or -1.
func (st *stripeRepair) check(s int, lost []int) (int, error) {
	m := st.m
	for _, k := range lost {
		i, j := m.locate(int64(k)*int64(m.Stripes) + int64(s))
		_, n := m.SegmentRange(i, j)
		want, ok, err := m.Leaf(i, j)
		if err != nil {
			return 0, err
		}
		m.Hash.leaf(st.data[k][:n], uint64(j+m.Files[i].Segments-1), st.word)
		if !ok || get(st.word) != want {
			return k, nil
		}
	}
	return -1, nil
}

func (st *stripeRepair) write(s int, lost []int) error {
	m := st.m
	for _, k := range lost {
		i, j := m.locate(int64(k)*int64(m.Stripes) + int64(s))
		off, n := m.SegmentRange(i, j)
		if _, err := st.files[i].WriteAt(st.data[k][:n], off); err != nil {
			return fmt.Errorf("tree: writing %s: %w", m.Files[i].Name, err)
		}
	}
	return nil
}

// combinations returns the subsets of n elements of set, in order.
func combinations(set []int, n int) [][]int {
	if n == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for x := 0; x+n <= len(set) && len(out) <= maxTrials; x++ {
		for _, rest := range combinations(set[x+1:], n-1) {
			out = append(out, append([]int{set[x]}, rest...))
		}
	}
	return out
}
