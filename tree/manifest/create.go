package manifest

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/tree"
)

// Option configures Create.
type Option func(*config)

type config struct {
	seg        int
	hash       string
	redundancy float64 // percent of the data segments, as par2's -r
	count      int     // parity segments in all, as par2's -c
	perStripe  int     // parity segments per stripe
	progress   func(done, total int64)
	memory     int64
	err        error
}

// DefaultRedundancy is the parity Create makes unless told otherwise:
// par2's default, 5 % of the data segments.
const DefaultRedundancy = 5.0

// Segment sets the segment size in bytes (the default is 2048, the
// paper's): the unit a manifest checks and rebuilds, par2's block size.
func Segment(n int) Option {
	return func(c *config) {
		if n <= 0 || n > MaxSegment {
			c.err = fmt.Errorf("%w %d: want 1 to %d bytes", tree.ErrSegment, n, MaxSegment)
		}
		c.seg = n
	}
}

// UseHash sets the trees' hash (tree.LookupHash's names; "xxh3" by
// default).
func UseHash(name string) Option { return func(c *config) { c.hash = name } }

// Redundancy sets the parity as a percentage of the data segments, as
// par2's -r does: 0 for none, up to 100. Each stripe gets that share of
// its own segments, rounded up.
func Redundancy(percent float64) Option {
	return func(c *config) {
		if !(percent >= 0 && percent <= 100) {
			c.err = fmt.Errorf("manifest: redundancy %v%%: want 0 to 100", percent)
		}
		c.redundancy, c.count, c.perStripe = percent, 0, 0
	}
}

// Recovery sets the parity segments in all, as par2's -c does (rounded up
// to a multiple of the stripes).
func Recovery(n int) Option {
	return func(c *config) {
		if n < 0 || n > maxParitySegments {
			c.err = fmt.Errorf("manifest: %d parity segments: want 0 to %d", n, maxParitySegments)
		}
		c.redundancy, c.count, c.perStripe = 0, n, 0
	}
}

// PerStripe sets the parity segments of each stripe.
func PerStripe(p int) Option {
	return func(c *config) {
		if p < 0 || p > maxShards/2 {
			c.err = fmt.Errorf("manifest: %d parity segments per stripe: want 0 to %d", p, maxShards/2)
		}
		c.redundancy, c.count, c.perStripe = 0, 0, p
	}
}

// Progress sets a function called with the bytes done of the work and the
// work's total, as a manifest is written (the data is read twice: once
// for its trees, once for its parity) or a file checked.
func Progress(fn func(done, total int64)) Option { return func(c *config) { c.progress = fn } }

// Memory bounds the buffers of the parity pass (DefaultMemory unless
// set); a stripe is encoded in as many columns as it takes.
func Memory(bytes int64) Option { return func(c *config) { c.memory = bytes } }

// maxParitySegments bounds the parity segments of a manifest, and with
// them the checksums its main block keeps of them.
const maxParitySegments = 1 << 22

// DefaultMemory is the default bound on the buffers of writing and
// repairing a manifest: enough for a column of whole 2 KiB segments of the
// widest stripe, so that they are read in long runs.
const DefaultMemory = 160 << 20

// shape chooses the stripes and the parity per stripe for n segments: the
// fewest stripes whose every one is a codeword of the code.
func shape(n int64, c *config, cd code) (stripes, parity int, err error) {
	if c.redundancy == 0 && c.count == 0 && c.perStripe == 0 {
		return 0, 0, nil
	}
	for s := max(1, (n+maxShards-2)/(maxShards-1)); s <= n; s++ {
		w := (n + s - 1) / s
		var p int64
		switch {
		case c.perStripe > 0:
			p = int64(c.perStripe)
		case c.count > 0:
			p = (int64(c.count) + s - 1) / s
		default:
			p = max(1, int64(math.Ceil(float64(w)*c.redundancy/100-1e-9)))
		}
		if p > maxShards/2 {
			continue
		}
		if cd.fits(int(w), int(p)) == nil {
			if s*p > maxParitySegments {
				return 0, 0, fmt.Errorf("manifest: %d parity segments: more than %d; take larger segments", s*p, maxParitySegments)
			}
			return int(s), int(p), nil
		}
	}
	return 0, 0, fmt.Errorf("manifest: no stripes of %d segments take that parity", n)
}

// Create writes to out the manifest of the files: their trees and parity
// shared across them (DefaultRedundancy unless an option says otherwise).
// out must allow reading back what was written (an *os.File). Names must
// be clean relative paths, distinct. The data is read twice through
// ReadAt, once for the trees and once for the parity, and nothing held in
// memory grows with it but what Memory allows.
func Create(out ReadWriterAt, files []Source, opts ...Option) (*Manifest, error) {
	c := config{seg: tree.DefaultSegment, hash: tree.DefaultHash, redundancy: DefaultRedundancy, memory: DefaultMemory}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	if len(files) == 0 || len(files) > maxFiles {
		return nil, fmt.Errorf("manifest: %d files: want 1 to %d", len(files), maxFiles)
	}
	h, err := tree.LookupHash(c.hash)
	if err != nil {
		return nil, err
	}
	if len(h.Name()) > maxHashName {
		return nil, fmt.Errorf("manifest: hash name %q too long for a manifest", h.Name())
	}
	m := &Manifest{Version: 3, Hash: h, Segment: c.seg, code: codeLeopard16{}, f: out}
	seen := map[string]bool{}
	var size int64
	for _, s := range files {
		if err := checkName(s.Name); err != nil {
			return nil, fmt.Errorf("manifest: %v", err)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("manifest: file %q twice", s.Name)
		}
		seen[s.Name] = true
		m.Files = append(m.Files, File{Name: s.Name, Size: s.Size, Mode: s.Mode.Perm()})
		size += max(0, s.Size)
	}
	if err := m.layout(); err != nil { // the segments, for shape
		return nil, fmt.Errorf("manifest: %v", err)
	}
	if m.Stripes, m.Parity, err = shape(m.segments, &c, m.code); err != nil {
		return nil, err
	}
	if err := m.layout(); err != nil {
		return nil, fmt.Errorf("manifest: %v", err)
	}
	w := &writer{m: m, out: out, src: files, progress: c.progress, total: size}
	if m.Parity > 0 {
		w.total *= 2
	}
	if err := w.hashPass(); err != nil {
		return nil, err
	}
	if err := w.parityPass(c.memory); err != nil {
		return nil, err
	}
	if m.nodeSums, err = blockSums(out, m.nodesAt, m.nodesLen); err != nil {
		return nil, err
	}
	if m.leafSums, err = blockSums(out, m.leavesAt, m.weakAt-m.leavesAt); err != nil {
		return nil, err
	}
	if m.weakSums, err = blockSums(out, m.weakAt, m.copies[2]-m.weakAt); err != nil {
		return nil, err
	}
	main := m.encodeMain()
	for _, at := range m.copies {
		if _, err := out.WriteAt(main, at); err != nil {
			return nil, err
		}
	}
	m.fileSize = m.total
	m.nodeOK = trues(len(m.nodeSums))
	m.leafOK = trues(len(m.leafSums))
	m.weakOK = trues(len(m.weakSums))
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
	m        *Manifest
	out      ReadWriterAt
	src      []Source
	progress func(done, total int64)
	done     int64
	total    int64
}

func (w *writer) advance(n int64) {
	w.done += n
	if w.progress != nil {
		w.progress(w.done, w.total)
	}
}

// readData reads len(b) bytes of file i at off, or says how the file
// changed.
func (w *writer) readData(i int, b []byte, off int64) error {
	f := &w.m.Files[i]
	if k, err := w.src[i].Data.ReadAt(b, off); k < len(b) {
		if err == nil || err == io.EOF {
			return fmt.Errorf("%w: %s ends at byte %d, not %d (did it change?)", ErrSize, f.Name, off+int64(k), f.Size)
		}
		return fmt.Errorf("manifest: reading %s at byte %d: %w", f.Name, off, err)
	}
	return nil
}

// hashPass reads every file in order and writes its leaves (both copies)
// and inner nodes.
func (w *writer) hashPass() error {
	m := w.m
	seg := int64(m.Segment)
	hs := m.Hash.Size()
	per := max(1, readChunk/seg)
	buf := make([]byte, min(per*seg, max(1, m.Size())))
	leaves := make([]byte, 0, per*int64(hs))
	weak := make([]byte, 0, per*weakSize)
	for i := range m.Files {
		f := &m.Files[i]
		for j0 := int64(0); j0 < int64(f.Segments); j0 += per {
			j1 := min(j0+per, int64(f.Segments))
			off := j0 * seg
			data := buf[:max(0, min(j1*seg, f.Size)-off)]
			if err := w.readData(i, data, off); err != nil {
				return err
			}
			leaves, weak = leaves[:0], weak[:0]
			for j := j0; j < j1; j++ {
				so := (j - j0) * seg
				d := data[min(so, int64(len(data))):min(so+seg, int64(len(data)))]
				leaves = appendHash(leaves, m.Hash.Leaf(d, uint64(j+int64(f.Segments)-1)), hs)
				weak = binary.LittleEndian.AppendUint64(weak, weakSum(d))
			}
			a, b := m.leafAt(i, int(j0))
			if _, err := w.out.WriteAt(leaves, m.nodesAt+a); err != nil {
				return err
			}
			if _, err := w.out.WriteAt(leaves, m.leavesAt+b); err != nil {
				return err
			}
			if _, err := w.out.WriteAt(weak, m.weakAt+f.weak+j0*weakSize); err != nil {
				return err
			}
			w.advance(int64(len(data)))
		}
		if err := writeInner(w.out, m.nodesAt+f.nodes, f.Segments, m.Hash); err != nil {
			return err
		}
		root := make([]byte, hs)
		if _, err := w.out.ReadAt(root, m.nodesAt+f.nodes); err != nil {
			return err
		}
		f.Root = decodeHash(root)
	}
	return nil
}

// parityPass encodes every stripe, a column of bytes at a time, and
// writes its parity and the parity's checksums.
func (w *writer) parityPass(memory int64) error {
	m := w.m
	if m.Parity == 0 {
		return nil
	}
	m.paritySums = make([]uint64, int64(m.Stripes)*int64(m.Parity)*int64(m.chunks()))
	cols := newColumns(m, m.Width, m.Parity, memory)
	var hashers []*xxh3.Hasher
	if cols.width%m.chunk != 0 && cols.width != m.shard {
		hashers = make([]*xxh3.Hasher, m.Parity)
		for k := range hashers {
			hashers[k] = xxh3.New()
		}
	}
	for s := range m.Stripes {
		width := m.stripeWidth(s)
		for c0 := 0; c0 < m.shard; c0 += cols.width {
			c1 := min(c0+cols.width, m.shard)
			data, parity := cols.data(width, c1-c0), cols.parity(c1-c0)
			n, err := cols.read(s, width, c0, c1, nil, func(i int, b []byte, off int64) error { return w.readData(i, b, off) })
			if err != nil {
				return err
			}
			if err := m.code.encode(data, parity); err != nil {
				return err
			}
			for k, p := range parity {
				at := m.parityAt + (int64(s)*int64(m.Parity)+int64(k))*int64(m.shard) + int64(c0)
				if _, err := w.out.WriteAt(p, at); err != nil {
					return err
				}
				x := (s*m.Parity + k) * m.chunks()
				if hashers == nil {
					for c := c0 / m.chunk; c*m.chunk < c1; c++ {
						a, b := m.chunkRange(c)
						m.paritySums[x+c] = xxh3.Hash(p[a-c0 : b-c0])
					}
					continue
				}
				// Columns narrower than a chunk: each row's chunk is
				// hashed as its columns come.
				for a := c0; a < c1; {
					c := a / m.chunk
					_, end := m.chunkRange(c)
					b := min(end, c1)
					hashers[k].Write(p[a-c0 : b-c0])
					if b == end {
						m.paritySums[x+c] = hashers[k].Sum64()
						hashers[k].Reset()
					}
					a = b
				}
			}
			w.advance(n)
		}
	}
	return nil
}

// blockSums returns the XXH3-64 of each 4 KiB block of n bytes at off.
func blockSums(r io.ReaderAt, off, n int64) ([]uint64, error) {
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

// appendHash appends a node hash as the manifest stores it: 8 or 16
// little-endian bytes, low half first.
func appendHash(b []byte, v csum.Value, size int) []byte {
	b = binary.LittleEndian.AppendUint64(b, v.Lo)
	if size == 16 {
		b = binary.LittleEndian.AppendUint64(b, v.Hi)
	}
	return b
}

// innerBlock is how many inner nodes writeInner computes per read-back.
const innerBlock = 1 << 15

// writeInner computes the inner nodes of a tree of n leaves whose nodes
// are at base in f, from the last inner node back to the root, a block of
// parents [lo, hi] at a time. Their children [2lo+1, 2hi+2] are either in
// the block (near the root; children come after parents, so they are
// computed first) or past it and already written, in which case they are
// read back: the memory is a few blocks whatever the number of segments.
func writeInner(f ReadWriterAt, base int64, n int, h *tree.Hash) error {
	hs := int64(h.Size())
	parents := make([]csum.Value, min(innerBlock, n))
	children := make([]csum.Value, 2*min(innerBlock, n))
	raw := make([]byte, 2*int64(min(innerBlock, n))*hs)
	for hi := n - 2; hi >= 0; {
		lo := max(0, hi-innerBlock+1)
		first, last := max(2*lo+1, hi+1), 2*hi+2 // children to read back
		b := raw[:int64(last-first+1)*hs]
		if _, err := f.ReadAt(b, base+int64(first)*hs); err != nil {
			return err
		}
		for i := range last - first + 1 {
			children[i] = decodeHash(b[int64(i)*hs : int64(i+1)*hs])
		}
		at := func(i int) csum.Value {
			if i <= hi {
				return parents[i-lo]
			}
			return children[i-first]
		}
		for i := hi; i >= lo; i-- {
			parents[i-lo] = h.Inner(at(2*i+1), at(2*i+2), uint64(i))
		}
		out := raw[:0]
		for i := lo; i <= hi; i++ {
			out = appendHash(out, parents[i-lo], int(hs))
		}
		if _, err := f.WriteAt(out, base+int64(lo)*hs); err != nil {
			return err
		}
		hi = lo - 1
	}
	return nil
}
