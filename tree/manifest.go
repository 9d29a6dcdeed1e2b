package tree

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
)

// A Manifest is a recovery set kept on disk: for one file or several, each
// file's Merkle tree (so that it can be checked later, segment by segment)
// and Reed–Solomon parity shared across all of them (so that damaged,
// truncated or missing files can be rebuilt), as par2 keeps a set.
//
// # Layout (version 2)
//
//	main block, copy 1 | nodes | main block, copy 2 | parity | leaves | main block, copy 3
//
// The main block holds what everything else is read by: the parameters,
// each file's name, size and root, and an XXH3-64 of every 4 KiB block of
// the nodes and the leaves and of every KiB of parity; it has a checksum
// of its own and is kept three times, far apart (par2 repeats its main
// packet likewise). The nodes are each file's 2n-1 node hashes in level
// order, computed in the manifest itself (memory stays the same whatever
// the file's size); the leaves are a second copy of each file's leaf
// hashes.
//
// # What a manifest survives
//
// It is usable as long as one copy of the main block is intact and every
// leaf hash is intact in one of its two copies (a damaged 4 KiB block of
// hashes costs only the hashes in it). Parity is checked per KiB: each
// byte position of a stripe is a codeword of its own, so a damaged KiB of
// parity costs its row over that KiB only, and there the damaged data
// segments still in their files stand in for the missing rows, tried in
// turn until every rebuilt segment hashes right. So any damage confined
// to two of the three copies of the main block, plus nodes and leaves not
// damaged at the same hash, plus parity damage that does not fall in the
// same KiB as more damaged segments than the stripe has spare parity,
// still verifies and repairs; in particular any single damaged byte does,
// even with the data damaged to the parity's limit (the tests flip every
// byte of small manifests in turn). A truncated manifest keeps what comes
// before the cut.
//
// # Parity
//
// Segments are numbered across the files in order, each file starting a
// segment of its own (its last one padded with zeros). Stripe s holds the
// segments g with g mod Stripes = s: the stripes interleave, so a run of
// lost segments — a truncated tail, a missing file, a damaged range —
// spreads over all stripes, and with P parity segments per stripe any run
// of up to P·Stripes lost segments is rebuilt, about as much as the parity
// weighs. Scattered damage is rebuilt up to P segments per stripe.
type Manifest struct {
	Hash    *Hash
	Segment int
	Parity  int // parity segments per stripe, 0 for none
	Stripes int // stripes of parity (0 without parity)
	Width   int // data segments in the widest stripe
	Files   []ManifestFile
	// Damage is what opening found damaged in the manifest itself.
	Damage Damage

	f        ReaderAt
	segments int64 // across all files
	mainLen  int64
	nodesAt  int64 // regions
	nodesLen int64
	parityAt int64
	leavesAt int64
	total    int64
	copies   [mainCopies]int64
	// checksums of the 4 KiB blocks of the nodes and leaves, and of the
	// parity segments, and which blocks checked when opened.
	nodeSums, leafSums, paritySums []uint64
	nodeOK, leafOK                 []bool
}

// ManifestFile is one file of a manifest.
type ManifestFile struct {
	Name     string // slash-separated path, relative to the manifest's directory
	Size     int64
	Segments int
	Root     csum.Value

	first  int64 // the global index of its first segment
	nodes  int64 // offset of its nodes in the nodes region
	leaves int64 // offset of its leaves in the leaves region
}

// Damage says what opening a manifest found damaged in it.
type Damage struct {
	MainCopies int // intact copies of the main block, of 3
	NodeBlocks int // damaged 4 KiB blocks of the nodes
	LeafBlocks int // damaged 4 KiB blocks of the second copy of the leaves
	LostLeaves int // leaf hashes damaged in both copies: their segments cannot be checked
}

// Any reports whether anything was damaged.
func (d Damage) Any() bool {
	return d.MainCopies < mainCopies || d.NodeBlocks+d.LeafBlocks+d.LostLeaves > 0
}

// ReaderAt and ReadWriterAt are what manifests need of files (an *os.File
// is both).
type (
	ReaderAt     = io.ReaderAt
	ReadWriterAt interface {
		io.ReaderAt
		io.WriterAt
	}
)

// Source is a file to put in a manifest.
type Source struct {
	Name string // slash-separated relative path, as stored (path.Clean'd, no "..")
	Data io.ReaderAt
	Size int64
}

const (
	mainMagic     = "SIGCHKM2"
	oldMagic      = "SIGCHKMF" // version 1, single file, no copies
	mainVersion   = 2
	mainCopies    = 3
	mainFixed     = 96 // bytes of the main block before the file entries
	hashBlock     = 4096
	maxHashName   = 29
	maxNameLen    = 4096
	maxFiles      = 1 << 20
	fileEntryMin  = 2 + 8 + 16
	parityBudget0 = 256 << 20
	// maxManifestSize (1 PiB) bounds the sizes in a manifest, so that no
	// offset computed from them can overflow an int64.
	maxManifestSize = 1 << 50
	// MaxManifestSegment bounds a manifest's segment size, and with it the
	// memory that checking a file takes (a segment or 1 MiB, whichever is
	// larger). With parity, whole stripes are read at once, so segments
	// are at most MaxParitySegment.
	MaxManifestSegment = 64 << 20
	MaxParitySegment   = 1 << 20
)

// parityBudget bounds the parity CreateManifest holds in memory: beyond
// it, the data is read once more for each further share of the stripes.
var parityBudget int64 = parityBudget0

// ErrManifest is wrapped by the errors of a manifest that cannot be
// trusted: not a manifest, another version, every copy of its main block
// damaged.
var ErrManifest = errors.New("tree: bad manifest")

// WithParity sets, for manifests, the number of parity segments per stripe
// (0, the default, for none).
func WithParity(p int) Option { return func(c *config) { c.parity = p } }

// Progress sets a function called with the number of bytes of data done,
// as a manifest is written or a file checked.
func Progress(fn func(done int64)) Option { return func(c *config) { c.progress = fn } }

// Size returns the bytes of all the files.
func (m *Manifest) Size() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Bytes returns the manifest's own size.
func (m *Manifest) Bytes() int64 { return m.total }

// Segments returns the segments of all the files.
func (m *Manifest) Segments() int64 { return m.segments }

// SegmentRange returns the byte offset and length of segment j of file i.
func (m *Manifest) SegmentRange(i, j int) (off, n int64) {
	off = int64(j) * int64(m.Segment)
	return off, max(0, min(int64(m.Segment), m.Files[i].Size-off))
}

// Global returns the index of segment j of file i among all the files'.
func (m *Manifest) Global(i, j int) int64 { return m.Files[i].first + int64(j) }

// locate returns the file and segment of global segment g.
func (m *Manifest) locate(g int64) (i, j int) {
	i = sort.Search(len(m.Files), func(k int) bool { return m.Files[k].first > g }) - 1
	return i, int(g - m.Files[i].first)
}

// Stripe returns the stripe of global segment g and its place in it.
func (m *Manifest) stripe(g int64) (s, i int) {
	return int(g % int64(m.Stripes)), int(g / int64(m.Stripes))
}

// stripeWidth returns the data segments of stripe s.
func (m *Manifest) stripeWidth(s int) int {
	return int((m.segments - int64(s) + int64(m.Stripes) - 1) / int64(m.Stripes))
}

// checkName says whether a stored name is a clean relative path that
// stays inside the manifest's directory.
func checkName(name string) error {
	switch {
	case name == "" || len(name) > maxNameLen:
		return fmt.Errorf("file name of %d bytes", len(name))
	case path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || strings.ContainsAny(name, "\\\x00"):
		return fmt.Errorf("file name %q is not a clean relative path", name)
	}
	return nil
}

func blocks(n int64) int64 { return (n + hashBlock - 1) / hashBlock }

// parityChunk is the granularity of the parity's checksums. Each byte
// position of a stripe is a codeword of its own, so a damaged byte of
// parity costs only its chunk: the rest of the segment still serves.
const parityChunk = 1024

// chunks returns the checksummed chunks of a parity segment.
func (m *Manifest) chunks() int { return (m.Segment + parityChunk - 1) / parityChunk }

// chunkRange returns the bytes of chunk c of a parity segment.
func (m *Manifest) chunkRange(c int) (c0, c1 int) {
	return c * parityChunk, min((c+1)*parityChunk, m.Segment)
}

// plan lays the manifest out from its files and parameters, bounding every
// size so that no offset overflows.
func (m *Manifest) plan() error {
	hs := int64(m.Hash.Size())
	var segs, nodes, leaves, size int64
	for i := range m.Files {
		f := &m.Files[i]
		if f.Size < 0 || f.Size > maxManifestSize {
			return fmt.Errorf("file %q of %d bytes: more than a manifest describes", f.Name, f.Size)
		}
		size += f.Size
		if size > maxManifestSize {
			return fmt.Errorf("%d bytes in all: more than a manifest describes (%d)", size, int64(maxManifestSize))
		}
		f.Segments = int(max(1, (f.Size+int64(m.Segment)-1)/int64(m.Segment)))
		f.first, f.nodes, f.leaves = segs, nodes, leaves
		segs += int64(f.Segments)
		nodes += int64(2*f.Segments-1) * hs
		leaves += int64(f.Segments) * hs
	}
	m.segments = segs
	m.Stripes, m.Width = 0, 0
	if m.Parity != 0 {
		if m.Parity < 1 || m.Parity > MaxParity {
			return fmt.Errorf("%d parity segments per stripe: want 1 to %d", m.Parity, MaxParity)
		}
		if m.Segment > MaxParitySegment {
			return fmt.Errorf("%w %d: segments are at most %d bytes with parity", ErrSegment, m.Segment, MaxParitySegment)
		}
		w := int64(256 - m.Parity)
		m.Stripes = int((segs + w - 1) / w)
		m.Width = int((segs + int64(m.Stripes) - 1) / int64(m.Stripes))
	}
	entries := int64(0)
	for _, f := range m.Files {
		entries += fileEntryMin + int64(len(f.Name))
	}
	sums := blocks(nodes) + blocks(leaves) + int64(m.Stripes)*int64(m.Parity)*int64(m.chunks())
	m.mainLen = mainFixed + entries + 8*sums + 8
	m.nodesAt, m.nodesLen = m.mainLen, nodes
	m.copies[0] = 0
	m.copies[1] = m.nodesAt + nodes
	m.parityAt = m.copies[1] + m.mainLen
	m.leavesAt = m.parityAt + int64(m.Stripes)*int64(m.Parity)*int64(m.Segment)
	m.copies[2] = m.leavesAt + leaves
	m.total = m.copies[2] + m.mainLen
	return nil
}

// leafAt returns where the first copy of leaf j of file i is, in the
// nodes region, and the second, in the leaves region (both relative).
func (m *Manifest) leafAt(i, j int) (a, b int64) {
	f := &m.Files[i]
	hs := int64(m.Hash.Size())
	return f.nodes + int64(j+f.Segments-1)*hs, f.leaves + int64(j)*hs
}

// CreateManifest writes to out the manifest of the files: their trees and,
// WithParity, parity shared across them. out must allow reading back what
// was written (an *os.File). Names must be clean relative paths, distinct.
// Options: Segment, UseHash, WithParity, Progress (bytes of data hashed).
// The data is read once (and once more per 256 MiB of parity beyond the
// first), through ReadAt, so that nothing but the parity grows with it.
func CreateManifest(out ReadWriterAt, files []Source, opts ...Option) (*Manifest, error) {
	c := config{seg: DefaultSegment, hash: DefaultHash}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if len(files) == 0 || len(files) > maxFiles {
		return nil, fmt.Errorf("tree: a manifest of %d files: want 1 to %d", len(files), maxFiles)
	}
	h, _, err := shape(0, c.seg, c.hash)
	if err != nil {
		return nil, err
	}
	if c.seg > MaxManifestSegment {
		return nil, fmt.Errorf("%w %d: a manifest's segments are at most %d bytes", ErrSegment, c.seg, MaxManifestSegment)
	}
	if len(h.Name()) > maxHashName {
		return nil, fmt.Errorf("tree: hash name %q too long for a manifest", h.Name())
	}
	m := &Manifest{Hash: h, Segment: c.seg, Parity: c.parity, f: out}
	seen := map[string]bool{}
	for _, s := range files {
		if err := checkName(s.Name); err != nil {
			return nil, fmt.Errorf("tree: %v", err)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("tree: file %q twice in a manifest", s.Name)
		}
		seen[s.Name] = true
		m.Files = append(m.Files, ManifestFile{Name: s.Name, Size: s.Size})
	}
	if err := m.plan(); err != nil {
		return nil, fmt.Errorf("tree: %v", err)
	}
	w := &writer{m: m, out: out, src: files}
	if err := w.write(c.progress); err != nil {
		return nil, err
	}
	m.nodeOK = trues(len(m.nodeSums))
	m.leafOK = trues(len(m.leafSums))
	m.Damage = Damage{MainCopies: mainCopies}
	return m, nil
}

func trues(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

// writer writes a manifest.
type writer struct {
	m   *Manifest
	out ReadWriterAt
	src []Source
}

func (w *writer) write(progress func(int64)) error {
	m := w.m
	per := int64(1)
	if m.Parity > 0 {
		per = max(1, parityBudget/(int64(m.Parity)*int64(m.Segment)))
	}
	// The first pass hashes every segment and accumulates the parity of
	// the first share of the stripes; further passes read only the
	// segments of their share.
	for s0 := int64(0); s0 < max(1, int64(m.Stripes)); s0 += per {
		s1 := min(s0+per, int64(m.Stripes))
		var parity [][]byte
		if m.Parity > 0 {
			parity = make([][]byte, (s1-s0)*int64(m.Parity))
			for k := range parity {
				parity[k] = make([]byte, m.Segment)
			}
		}
		if err := w.pass(s0, s1, s0 == 0, parity, progress); err != nil {
			return err
		}
		for k, p := range parity {
			if _, err := w.out.WriteAt(p, m.parityAt+(s0*int64(m.Parity)+int64(k))*int64(m.Segment)); err != nil {
				return err
			}
			for c := range m.chunks() {
				c0, c1 := m.chunkRange(c)
				m.paritySums = append(m.paritySums, xxh3.Hash(p[c0:c1]))
			}
		}
	}
	for i := range m.Files {
		f := &m.Files[i]
		if err := writeInner(w.out, m.nodesAt+f.nodes, f.Segments, m.Hash); err != nil {
			return err
		}
		root := make([]byte, m.Hash.Size())
		if _, err := w.out.ReadAt(root, m.nodesAt+f.nodes); err != nil {
			return err
		}
		f.Root = decodeHash(root)
	}
	var err error
	if m.nodeSums, err = blockSums(w.out, m.nodesAt, m.nodesLen); err != nil {
		return err
	}
	if m.leafSums, err = blockSums(w.out, m.leavesAt, m.copies[2]-m.leavesAt); err != nil {
		return err
	}
	main := m.encodeMain()
	for _, at := range m.copies {
		if _, err := w.out.WriteAt(main, at); err != nil {
			return err
		}
	}
	return nil
}

// blockSums returns the XXH3-64 of each 4 KiB block of n bytes at off.
func blockSums(r ReaderAt, off, n int64) ([]uint64, error) {
	sums := make([]uint64, 0, blocks(n))
	buf := make([]byte, min(256*hashBlock, n))
	for at := int64(0); at < n; at += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), n-at)]
		if _, err := r.ReadAt(b, off+at); err != nil {
			return nil, err
		}
		for k := 0; k < len(b); k += hashBlock {
			sums = append(sums, xxh3.Hash(b[k:min(k+hashBlock, len(b))]))
		}
	}
	return sums, nil
}

// readChunk is about how many bytes a pass reads at a time.
const readChunk = 1 << 20

// pass reads the segments of stripes [s0, s1) — every segment when
// hashing — adding them into parity (P per stripe of the share), and
// writes their leaves when hashing.
func (w *writer) pass(s0, s1 int64, hashing bool, parity [][]byte, progress func(int64)) error {
	m := w.m
	seg := int64(m.Segment)
	S := int64(m.Stripes)
	pad := make([]byte, seg)
	word := make([]uint64, m.Hash.words)
	var leaves []byte
	var done int64
	for i := range m.Files {
		f := &m.Files[i]
		per := max(1, readChunk/seg)
		buf := make([]byte, min(per*seg, max(f.Size, 0)))
		for j0 := int64(0); j0 < int64(f.Segments); {
			j1 := min(j0+per, int64(f.Segments))
			if !hashing {
				// Skip to the next segment of the share, and read up to
				// the last one before the share ends in its row.
				g := f.first + j0
				s := g % S
				if s < s0 {
					g += s0 - s
				} else if s >= s1 {
					g += S - s + s0
				}
				if g-f.first >= int64(f.Segments) {
					break
				}
				j0 = g - f.first
				j1 = min(j0+(s1-g%S), int64(f.Segments), j0+per)
			}
			off := j0 * seg
			n := min(j1*seg, f.Size) - off
			data := buf[:max(n, 0)]
			if k, err := w.src[i].Data.ReadAt(data, off); k < len(data) {
				if err == nil || err == io.EOF {
					return fmt.Errorf("%w: %s ends at byte %d, not %d (did it change?)", ErrSize, f.Name, off+int64(k), f.Size)
				}
				return fmt.Errorf("tree: reading %s at byte %d: %w", f.Name, off, err)
			}
			leaves = leaves[:0]
			for j := j0; j < j1; j++ {
				so := (j - j0) * seg
				d := data[so:min(so+seg, int64(len(data)))]
				if hashing {
					m.Hash.leaf(d, uint64(j+int64(f.Segments)-1), word)
					leaves = appendHash(leaves, get(word), m.Hash.Size())
				}
				if parity == nil {
					continue
				}
				g := f.first + j
				if s := g % S; s >= s0 && s < s1 {
					if int64(len(d)) < seg {
						clear(pad)
						copy(pad, d)
						d = pad
					}
					p := (s - s0) * int64(m.Parity)
					addParity(parity[p:p+int64(m.Parity)], int(g/S), d)
				}
			}
			if hashing {
				a, b := m.leafAt(i, int(j0))
				if _, err := w.out.WriteAt(leaves, m.nodesAt+a); err != nil {
					return err
				}
				if _, err := w.out.WriteAt(leaves, m.leavesAt+b); err != nil {
					return err
				}
				done += int64(len(data))
				if progress != nil {
					progress(done)
				}
			}
			j0 = j1
		}
	}
	return nil
}

func decodeHash(b []byte) csum.Value {
	v := csum.Value{Lo: le64(b)}
	if len(b) == 16 {
		v.Hi = le64(b[8:])
	}
	return v
}

// innerBlock is how many inner nodes writeInner computes per read-back.
const innerBlock = 1 << 15

// writeInner computes the inner nodes of a tree of n leaves whose nodes
// are at base in f, from the last inner node back to the root, a block of
// parents [lo, hi] at a time. Their children [2lo+1, 2hi+2] are either in
// the block (near the root; children come after parents, so they are
// computed first) or past it and already written, in which case they are
// read back: the memory is a few blocks whatever the number of segments.
func writeInner(f ReadWriterAt, base int64, n int, h *Hash) error {
	hs := int64(h.Size())
	w := h.words
	parents := make([]uint64, min(innerBlock, n)*w)
	children := make([]uint64, 2*min(innerBlock, n)*w)
	raw := make([]byte, 2*int64(min(innerBlock, n))*hs)
	for hi := n - 2; hi >= 0; {
		lo := max(0, hi-innerBlock+1)
		first, last := max(2*lo+1, hi+1), 2*hi+2 // children to read back
		b := raw[:int64(last-first+1)*hs]
		if _, err := f.ReadAt(b, base+int64(first)*hs); err != nil {
			return err
		}
		for i := range last - first + 1 {
			put(decodeHash(b[int64(i)*hs:int64(i+1)*hs]), children[i*w:(i+1)*w])
		}
		at := func(i int) []uint64 {
			if i <= hi {
				return parents[(i-lo)*w : (i-lo+1)*w]
			}
			return children[(i-first)*w : (i-first+1)*w]
		}
		for i := hi; i >= lo; i-- {
			h.inner(at(2*i+1), at(2*i+2), uint64(i), at(i))
		}
		out := raw[:0]
		for i := lo; i <= hi; i++ {
			out = appendHash(out, get(at(i)), int(hs))
		}
		if _, err := f.WriteAt(out, base+int64(lo)*hs); err != nil {
			return err
		}
		hi = lo - 1
	}
	return nil
}
