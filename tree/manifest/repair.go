package manifest

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/tree"
)

// Target is a file that Repair reads where it is intact and writes where
// it is lost (an *os.File is one).
type Target interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
}

// A plan is what a repair rebuilds: per stripe, the places of its lost
// segments, sorted. Its size is bounded by the parity: no stripe is
// listed with more lost segments than it has parity.
type plan struct {
	stripes []int              // affected, in order
	lost    map[int][]int      // stripe → places of lost segments in it
	intact  map[int][]chunkSet // stripe → per parity row, its intact chunks
	total   int64
}

// chunkSet is a set of chunks.
type chunkSet []uint64

func newChunkSet(n int) chunkSet  { return make(chunkSet, (n+63)/64) }
func (b chunkSet) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b chunkSet) has(i int) bool { return b[i/64]>>(i%64)&1 == 1 }
func (b chunkSet) count(n int) (c int) {
	for i := range n {
		if b.has(i) {
			c++
		}
	}
	return c
}

// Plan says whether the parity can rebuild what the reports (one per file)
// say is lost: nil if it can, else an error wrapping ErrTooManyFaults that
// names the first stripe short of parity, or ErrRepairCheck when a segment
// to rebuild has no hash to check it by. It reads the parity of the
// stripes concerned, to count its damaged chunks. Its work is bounded by
// the runs in the reports, the stripes and the parity read, never by the
// sizes the manifest claims.
func (m *Manifest) Plan(reports []*Report) error {
	_, err := m.plan(reports)
	return err
}

func (m *Manifest) plan(reports []*Report) (*plan, error) {
	if len(reports) != len(m.Files) {
		return nil, fmt.Errorf("%w: %d reports for %d files", ErrShape, len(reports), len(m.Files))
	}
	p := &plan{lost: map[int][]int{}, intact: map[int][]chunkSet{}}
	lost := make([][]Run, len(reports))
	for i, r := range reports {
		if r == nil || r.File != i {
			return nil, fmt.Errorf("%w: no report of file %d", ErrShape, i)
		}
		lost[i] = r.Lost()
		if bad := intersect(lost[i], r.Unchecked); len(bad) > 0 {
			return nil, fmt.Errorf("%w: %s, %s: the manifest lost its hash", ErrRepairCheck, m.Files[i].Name, bad[0])
		}
		if r.RootChecked && !r.RootMatches {
			return nil, fmt.Errorf("%w: %s: its root differs, among segments whose hashes the manifest lost", ErrRepairCheck, m.Files[i].Name)
		}
		p.total += Count(lost[i])
	}
	if p.total == 0 {
		return p, nil
	}
	if m.Parity == 0 {
		return nil, fmt.Errorf("%w: the manifest has no parity", ErrTooManyFaults)
	}
	// Lost segments per stripe: each run adds a whole number of turns
	// round the stripes to all of them, and one more to a circular range,
	// kept as differences.
	S := int64(m.Stripes)
	diff := make([]int64, S+1)
	var all int64
	for i, runs := range lost {
		for _, r := range runs {
			g, n := m.Global(i, r.First), int64(r.N)
			all += n / S
			if n %= S; n > 0 {
				a := g % S
				if a+n <= S {
					diff[a]++
					diff[a+n]--
				} else {
					diff[a]++
					diff[S]--
					diff[0]++
					diff[a+n-S]--
				}
			}
		}
	}
	counts := make([]int64, S)
	var run int64
	for s := range S {
		run += diff[s]
		counts[s] = all + run
		if counts[s] > int64(m.Parity) {
			return nil, fmt.Errorf("%w: %d segments lost in all; stripe %d lost %d of its %d, more than its %d parity segments",
				ErrTooManyFaults, p.total, s, counts[s], m.stripeWidth(int(s)), m.Parity)
		}
		if counts[s] > 0 {
			p.stripes = append(p.stripes, int(s))
		}
	}
	// The work of a repair grows as the stripes' segments, data and
	// parity; a manifest could claim far more of them than it or the
	// files hold. Honest damage never costs more than a few times what
	// is there (what is lost is at most the parity present).
	present := m.fileSize
	for _, r := range reports {
		present += max(0, min(r.Size, r.Want))
	}
	var work int64
	for _, s := range p.stripes {
		work += int64(m.stripeWidth(s)+m.Parity) * int64(m.shard)
	}
	if work > maxWork*present+MaxSegment {
		return nil, fmt.Errorf("%w: rebuilding would take codes of %d bytes, from %d bytes present: the manifest claims far more than it holds (truncated, or forged)",
			ErrTooManyFaults, work, present)
	}
	buf := make([]byte, readChunk)
	for _, s := range p.stripes {
		rows := m.intactRows(s, buf)
		p.intact[s] = rows
		least := m.Parity
		for c := range m.chunks() {
			n := 0
			for _, r := range rows {
				if r.has(c) {
					n++
				}
			}
			least = min(least, n)
		}
		if int64(least) < counts[s] {
			return nil, fmt.Errorf("%w: %d segments lost in all; stripe %d lost %d of its %d, and has %d intact parity segments of %d",
				ErrTooManyFaults, p.total, s, counts[s], m.stripeWidth(s), least, m.Parity)
		}
	}
	for i, runs := range lost {
		for _, r := range runs {
			for j := r.First; j < r.end(); j++ {
				g := m.Global(i, j)
				s := int(g % S)
				p.lost[s] = append(p.lost[s], int(g/S))
			}
		}
	}
	return p, nil
}

// maxWork bounds the bytes of the codes a repair solves, as a multiple of
// the bytes present.
const maxWork = 8

// intactRows reads the parity of stripe s and returns, per row, which of
// its chunks are intact.
func (m *Manifest) intactRows(s int, buf []byte) []chunkSet {
	rows := make([]chunkSet, m.Parity)
	for k := range rows {
		rows[k] = m.checkParity(s, k, buf)
	}
	return rows
}

// checkParity reads parity segment k of stripe s through buf and returns
// which of its chunks are intact. A chunk longer than buf is hashed as it
// streams; a segment the manifest's bytes end before is not read at all.
func (m *Manifest) checkParity(s, k int, buf []byte) chunkSet {
	ok := newChunkSet(m.chunks())
	x := (s*m.Parity + k) * m.chunks()
	base, _ := m.ParityRange(s, k)
	if base >= m.fileSize {
		return ok
	}
	h := xxh3.New()
	for c := range m.chunks() {
		lo, hi := m.chunkRange(c)
		if base+int64(hi) > m.fileSize {
			break
		}
		h.Reset()
		for a := lo; a < hi; {
			b := buf[:min(len(buf), hi-a)]
			n, _ := m.f.ReadAt(b, base+int64(a))
			if n < len(b) {
				return ok
			}
			h.Write(b)
			a += len(b)
		}
		if h.Sum64() == m.paritySums[x+c] {
			ok.set(c)
		}
	}
	return ok
}

// DamagedParity reads all the parity and returns how many of its chunks
// fail their checksum (each costs its stripe one parity row over its
// bytes), and the bytes a chunk holds.
func (m *Manifest) DamagedParity() (damaged int, chunk int) {
	buf := make([]byte, readChunk)
	for s := range m.Stripes {
		for _, r := range m.intactRows(s, buf) {
			damaged += m.chunks() - r.count(m.chunks())
		}
	}
	return damaged, m.chunk
}

// Repair rebuilds what the reports (one per file) say is lost from the
// parity, checks each rebuilt segment against the manifest's hash and
// writes it into its target; then targets of the wrong length are cut or
// extended to theirs. A nil target is left alone: its file must be absent
// in its report (all its segments lost), so that it is neither read nor
// written, and what is rebuilt of it only serves the others. Nothing is
// written unless Plan passes; a stripe whose rebuilt segments do not
// check (ErrRepairCheck: more was damaged than the reports say) stops the
// repair there, with what was written so far correct. memory bounds the
// buffers (0 for DefaultMemory; the lost segments of a stripe may take a
// quarter more): a stripe is rebuilt a column at a time, and one whose
// lost segments do not fit is rebuilt twice, once to check them and once
// to write them. It returns, per file, the segments written, also when
// it stops.
func (m *Manifest) Repair(ctx context.Context, targets []Target, reports []*Report, memory int64) ([]int64, error) {
	p, err := m.plan(reports)
	if err != nil {
		return make([]int64, len(m.Files)), err
	}
	return m.repair(ctx, targets, reports, p, memory)
}

// repair is Repair with its plan made: a Set's Prepare has made it, and
// read the parity for it, already.
func (m *Manifest) repair(ctx context.Context, targets []Target, reports []*Report, p *plan, memory int64) ([]int64, error) {
	written := make([]int64, len(m.Files))
	if len(targets) != len(m.Files) {
		return written, fmt.Errorf("%w: %d targets for a manifest of %d files", ErrShape, len(targets), len(m.Files))
	}
	for i, t := range targets {
		if t == nil && reports[i] != nil && reports[i].Size >= 0 {
			return written, fmt.Errorf("%w: %s is left alone but reported present", ErrShape, m.Files[i].Name)
		}
	}
	if memory <= 0 {
		memory = DefaultMemory
	}
	if len(p.stripes) > 0 {
		st := &stripeRepair{m: m, targets: targets, memory: memory, written: written,
			cols: newColumns(m, m.Width, m.Parity, memory)}
		for _, s := range p.stripes {
			if err := ctx.Err(); err != nil {
				return written, err
			}
			st.intact = p.intact[s]
			if err := st.repair(ctx, s, p.lost[s]); err != nil {
				return written, err
			}
		}
	}
	for i, r := range reports {
		if targets[i] != nil && r.Size != r.Want {
			if err := targets[i].Truncate(r.Want); err != nil {
				return written, fmt.Errorf("manifest: %s back to %d bytes: %w", m.Files[i].Name, r.Want, err)
			}
		}
	}
	return written, nil
}

// stripeRepair rebuilds stripes, with buffers reused from one to the next.
type stripeRepair struct {
	m       *Manifest
	targets []Target
	memory  int64
	cols    *columns
	intact  []chunkSet // the stripe's intact parity chunks, per row, as the plan read them
	written []int64    // segments written, per file
}

// lostSegment is a lost segment of a stripe being rebuilt.
type lostSegment struct {
	place   int   // in the stripe
	file    int   // i
	segment int   // j
	off, n  int64 // its bytes in the file
	data    []byte
	hash    tree.LeafHasher
}

func (st *stripeRepair) repair(ctx context.Context, s int, places []int) error {
	m := st.m
	lost := make([]lostSegment, len(places))
	for x, k := range places {
		i, j := m.locate(m.global(s, k))
		off, n := m.SegmentRange(i, j)
		lost[x] = lostSegment{place: k, file: i, segment: j, off: off, n: n}
	}
	// Kept whole when they fit; else rebuilt once to hash them a column at
	// a time, and once more, if they all check, to write them.
	keep := int64(len(lost))*int64(m.shard) <= st.memory/4
	if keep {
		for x := range lost {
			lost[x].data = make([]byte, m.shard)
		}
	}
	for x := range lost {
		lost[x].hash = m.Hash.NewLeaf(uint64(lost[x].segment+m.Files[lost[x].file].Segments-1), lost[x].n)
	}
	err := st.rebuild(ctx, s, places, func(c0, c1 int, col [][]byte) error {
		for x := range lost {
			l := &lost[x]
			b := col[x][:max(0, min(int64(c1), l.n)-int64(c0))]
			l.hash.Write(b)
			if keep {
				copy(l.data[c0:], col[x])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for x := range lost {
		l := &lost[x]
		want, ok, err := m.Leaf(l.file, l.segment)
		if err != nil {
			return err
		}
		if !ok || l.hash.Sum() != want {
			return fmt.Errorf("%w: %s, segment %d (stripe %d)", ErrRepairCheck, m.Files[l.file].Name, l.segment, s)
		}
	}
	write := func(l *lostSegment, b []byte, at int64) error {
		t := st.targets[l.file]
		if t == nil {
			return nil
		}
		if at == l.off { // its first bytes: it counts as written from here
			st.written[l.file]++
		}
		if len(b) == 0 {
			return nil
		}
		if _, err := t.WriteAt(b, at); err != nil {
			return fmt.Errorf("manifest: writing %s: %w", m.Files[l.file].Name, err)
		}
		return nil
	}
	if keep {
		for x := range lost {
			if err := write(&lost[x], lost[x].data[:lost[x].n], lost[x].off); err != nil {
				return err
			}
		}
		return nil
	}
	return st.rebuild(ctx, s, places, func(c0, c1 int, col [][]byte) error {
		for x := range lost {
			l := &lost[x]
			if err := write(l, col[x][:max(0, min(int64(c1), l.n)-int64(c0))], l.off+int64(c0)); err != nil {
				return err
			}
		}
		return nil
	})
}

// rebuild rebuilds the lost places of stripe s a column at a time, and
// hands each column of them to use, in order. Within a column, each run
// of chunks with the same intact parity rows is solved with those rows.
func (st *stripeRepair) rebuild(ctx context.Context, s int, places []int, use func(c0, c1 int, col [][]byte) error) error {
	m := st.m
	width := m.stripeWidth(s)
	cols := st.cols
	out := make([][]byte, len(places))
	for c0 := 0; c0 < m.shard; c0 += cols.width {
		if err := ctx.Err(); err != nil {
			return err
		}
		c1 := min(c0+cols.width, m.shard)
		data, parity := cols.data(width, c1-c0), cols.parity(c1-c0)
		_, err := cols.read(s, width, c0, c1, places, func(i int, b []byte, off int64) error {
			if k, err := st.targets[i].ReadAt(b, off); k < len(b) {
				return fmt.Errorf("manifest: reading %s at byte %d: %v", m.Files[i].Name, off, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		// The parity as it is; which chunks of it are intact, the plan read.
		for k := range m.Parity {
			off, _ := m.ParityRange(s, k)
			if n, _ := m.f.ReadAt(parity[k], off+int64(c0)); n < len(parity[k]) {
				clear(parity[k][n:])
			}
		}
		// Each run of chunks of the column with the same intact rows is
		// solved with those rows.
		rowsAt := func(c int) []int {
			var rows []int
			for k := range m.Parity {
				if st.intact[k].has(c) {
					rows = append(rows, k)
				}
			}
			return rows
		}
		for a := 0; a < c1-c0; {
			rows := rowsAt((c0 + a) / m.chunk)
			b := a
			for b < c1-c0 && slices.Equal(rowsAt((c0+b)/m.chunk), rows) {
				b = min(((c0+b)/m.chunk+1)*m.chunk-c0, c1-c0)
			}
			sub := func(x [][]byte) [][]byte {
				y := make([][]byte, len(x))
				for k := range x {
					y[k] = x[k][a:b]
				}
				return y
			}
			if len(rows) < len(places) {
				return fmt.Errorf("%w: stripe %d: %d lost, %d intact parity segments over bytes %d-%d",
					ErrTooManyFaults, s, len(places), len(rows), c0+a, c0+b-1)
			}
			if err := m.code.rebuild(sub(data), places, sub(parity), rows); err != nil {
				return err
			}
			a = b
		}
		for x, k := range places {
			out[x] = data[k]
		}
		if err := use(c0, c1, out); err != nil {
			return err
		}
	}
	return nil
}
