package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/tree"
)

// A Manifest is a recovery set kept on disk: for one file or several, each
// file's Merkle tree (so that it can be checked later, segment by segment)
// and Reed–Solomon parity shared across all of them (so that damaged,
// truncated or missing files can be rebuilt), as par2 keeps a set.
//
// # Layout
//
//	main block, copy 1 | nodes | main block, copy 2 | parity | leaves | weak sums | main block, copy 3
//
// The main block holds what everything else is read by: the parameters,
// each file's name, size, mode and root, and an XXH3-64 of every 4 KiB
// block of the nodes and the leaves and of every chunk of parity; it has a
// checksum of its own and is kept three times, far apart (par2 repeats its
// main packet likewise). The nodes are each file's 2n-1 node hashes in
// level order; the leaves are a second copy of each file's leaf hashes;
// the weak sums (version 3) are a rolling hash of each segment, 8 bytes,
// by which a segment moved by bytes inserted or removed before it is found
// at any offset, as par2 finds its blocks by their CRC32.
//
// # What a manifest survives
//
// It is usable as long as one copy of the main block is intact; a leaf
// hash damaged in both its copies leaves its segment unchecked, and
// damaged parity costs only its chunk (each byte position of a stripe is
// a codeword of its own, so the other rows still serve there).
//
// # Parity
//
// Segments are numbered across the files in order, each file starting a
// segment of its own (its last one padded with zeros). Stripe s holds the
// segments g with g mod Stripes = s. A stripe is one code: version 3
// manifests use Leopard's Reed–Solomon code over GF(2^16)
// (github.com/klauspost/reedsolomon), so a stripe holds up to 65536
// segments and its parity rebuilds any Parity of them, wherever they are;
// a set small enough for one stripe (every set par2 can describe, at the
// same segment size) is repaired as par2 repairs it, any damage up to the
// parity's count. Larger sets are cut into interleaved stripes, so that a
// run of lost segments — a truncated tail, a missing file — spreads over
// all of them. Version 2 manifests (sigcheck before issue 28) used a
// Cauchy code over GF(2^8), 256 segments a stripe; they are still read,
// verified and repaired.
type Manifest struct {
	Version int
	Hash    *tree.Hash
	Segment int
	Parity  int // parity segments per stripe, 0 for none
	Stripes int // stripes of parity (0 without parity)
	Width   int // data segments in the widest stripe
	Files   []File
	// Damage is what opening found damaged in the manifest itself.
	Damage Damage

	f        io.ReaderAt
	fileSize int64 // the manifest's bytes in f: what is read past them is not there
	code     code
	shard    int   // bytes of a parity segment: Segment rounded up as the code needs
	chunk    int   // bytes of parity per checksum
	segments int64 // across all files
	mainLen  int64
	nodesAt  int64 // regions
	nodesLen int64
	parityAt int64
	leavesAt int64
	weakAt   int64 // version 3
	total    int64
	copies   [mainCopies]int64
	// checksums of the 4 KiB blocks of the nodes, leaves and weak sums,
	// and of the chunks of the parity segments, and which blocks checked
	// when opened.
	nodeSums, leafSums, weakSums, paritySums []uint64
	nodeOK, leafOK, weakOK                   []bool
}

// File is one file of a manifest.
type File struct {
	Name     string      // slash-separated path, relative to the set's directory
	Size     int64       // bytes
	Mode     fs.FileMode // permission bits (0777); 0 when unknown (version 2)
	Segments int
	Root     csum.Value

	first  int64 // the global index of its first segment
	nodes  int64 // offset of its nodes in the nodes region
	leaves int64 // offset of its leaves in the leaves region
	weak   int64 // offset of its weak sums in their region
}

// Damage says what opening a manifest found damaged in it.
type Damage struct {
	MainCopies int   // intact copies of the main block, of 3
	NodeBlocks int   // damaged 4 KiB blocks of the nodes
	LeafBlocks int   // damaged 4 KiB blocks of the second copy of the leaves
	WeakBlocks int   // damaged 4 KiB blocks of the weak sums: their segments are not looked for elsewhere
	LostLeaves int64 // leaf hashes damaged in both copies: their segments cannot be checked
}

// Any reports whether anything was damaged.
func (d Damage) Any() bool {
	return d.MainCopies < mainCopies || d.NodeBlocks+d.LeafBlocks+d.WeakBlocks > 0 || d.LostLeaves > 0
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
	Name string // slash-separated relative path, as stored (clean, no "..")
	Data io.ReaderAt
	Size int64
	Mode fs.FileMode // permission bits kept, to restore a lost file with them
}

const (
	magic3       = "SIGCHKM3"
	magic2       = "SIGCHKM2"
	magic1       = "SIGCHKMF" // version 1, single file, no copies
	mainCopies   = 3
	mainFixed    = 96 // bytes of the main block before the file entries
	hashBlock    = 4096
	maxHashName  = 29
	maxNameLen   = 4096
	maxFiles     = 1 << 20
	fileEntryMin = 2 + 8 + 16 // version 2; version 3 adds a u32 mode
	// maxSetSize (1 PiB) bounds the sizes in a manifest, so that no
	// offset computed from them can overflow an int64.
	maxSetSize = 1 << 50
	// MaxSegment bounds a manifest's segment size, and with it the
	// memory that checking a file takes (a segment or 1 MiB, whichever is
	// larger).
	MaxSegment = 64 << 20
	// maxSegments bounds a file's segments, so that a segment's index is
	// an int on every machine.
	maxSegments = 1<<31 - 1
	// maxSums bounds the parity checksums, 8 bytes each in the main block:
	// beyond it, each covers more parity.
	maxSums = 1 << 20
)

// Errors of manifests. Each is wrapped with what and where.
var (
	// ErrManifest: not a manifest, another version, every copy of its
	// main block damaged.
	ErrManifest = errors.New("manifest: bad manifest")
	// ErrSize: a file changed size while its manifest was written.
	ErrSize = errors.New("manifest: file size differs from the manifest's")
	// ErrTooManyFaults: more is lost than the parity rebuilds.
	ErrTooManyFaults = errors.New("manifest: more lost segments than the parity can rebuild")
	// ErrRepairCheck: a rebuilt segment does not hash as the manifest says,
	// or has no hash to be checked by.
	ErrRepairCheck = errors.New("manifest: a rebuilt segment does not match the manifest")
	// ErrShape: arguments that do not fit the manifest (a report per file).
	ErrShape = errors.New("manifest: arguments do not fit the manifest")
)

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

// ParityBytes returns the bytes of parity the manifest holds.
func (m *Manifest) ParityBytes() int64 { return int64(m.Stripes) * int64(m.Parity) * int64(m.shard) }

// Code names the parity's code.
func (m *Manifest) Code() string {
	if m.Parity == 0 {
		return "none"
	}
	return m.code.name()
}

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

// stripeWidth returns the data segments of stripe s.
func (m *Manifest) stripeWidth(s int) int {
	return int((m.segments - int64(s) + int64(m.Stripes) - 1) / int64(m.Stripes))
}

// global returns the global segment at place k of stripe s.
func (m *Manifest) global(s, k int) int64 { return int64(k)*int64(m.Stripes) + int64(s) }

// checkName says whether a stored name is a clean relative path that
// stays inside the set's directory.
func checkName(name string) error {
	switch {
	case name == "" || len(name) > maxNameLen:
		return fmt.Errorf("file name of %d bytes", len(name))
	case path.IsAbs(name) || path.Clean(name) != name || name == "." || name == ".." || strings.HasPrefix(name, "../") ||
		strings.ContainsRune(name, 0):
		return fmt.Errorf("file name %q is not a clean relative path", name)
	case os.PathSeparator == '\\' && strings.ContainsAny(name, `\:`):
		// A backslash is a name's own here, a separator there.
		return fmt.Errorf("file name %q holds a separator of this system", name)
	}
	return nil
}

func blocks(n int64) int64 { return (n + hashBlock - 1) / hashBlock }

// chunks returns the checksummed chunks of a parity segment.
func (m *Manifest) chunks() int { return (m.shard + m.chunk - 1) / m.chunk }

// chunkRange returns the bytes of chunk c of a parity segment.
func (m *Manifest) chunkRange(c int) (c0, c1 int) {
	return c * m.chunk, min((c+1)*m.chunk, m.shard)
}

// layout lays the manifest out from its files and parameters (Segment,
// Parity, Stripes and the code set), bounding every size so that no offset
// overflows.
func (m *Manifest) layout() error {
	hs := int64(m.Hash.Size())
	var segs, nodes, leaves, weak, size int64
	for i := range m.Files {
		f := &m.Files[i]
		if f.Size < 0 || f.Size > maxSetSize {
			return fmt.Errorf("file %q of %d bytes: more than a manifest describes", f.Name, f.Size)
		}
		size += f.Size
		if size > maxSetSize {
			return fmt.Errorf("%d bytes in all: more than a manifest describes (%d)", size, int64(maxSetSize))
		}
		n := max(1, (f.Size+int64(m.Segment)-1)/int64(m.Segment))
		if n > maxSegments {
			return fmt.Errorf("file %q: %d segments of %d bytes, more than %d: take larger segments", f.Name, n, m.Segment, maxSegments)
		}
		f.Segments = int(n)
		f.first, f.nodes, f.leaves, f.weak = segs, nodes, leaves, weak
		segs += int64(f.Segments)
		nodes += int64(2*f.Segments-1) * hs
		leaves += int64(f.Segments) * hs
		if m.Version >= 3 {
			weak += int64(f.Segments) * weakSize
		}
	}
	m.segments = segs
	m.Width, m.shard, m.chunk = 0, 0, 0
	if m.Parity == 0 {
		m.Stripes = 0
	} else {
		if m.Stripes < 1 || int64(m.Stripes) > segs {
			return fmt.Errorf("%d stripes for %d segments", m.Stripes, segs)
		}
		m.Width = int((segs + int64(m.Stripes) - 1) / int64(m.Stripes))
		if err := m.code.fits(m.Width, m.Parity); err != nil {
			return err
		}
		m.shard = m.code.shardSize(m.Segment)
		m.chunk = m.code.chunkSize(int64(m.Stripes)*int64(m.Parity), m.shard)
	}
	entry := int64(fileEntryMin)
	if m.Version >= 3 {
		entry += 4
	}
	entries := int64(0)
	for _, f := range m.Files {
		entries += entry + int64(len(f.Name))
	}
	var paritySums int64
	if m.Parity > 0 {
		paritySums = int64(m.Stripes) * int64(m.Parity) * int64(m.chunks())
	}
	sums := blocks(nodes) + blocks(leaves) + blocks(weak) + paritySums
	m.mainLen = mainFixed + entries + 8*sums + 8
	m.nodesAt, m.nodesLen = m.mainLen, nodes
	m.copies[0] = 0
	m.copies[1] = m.nodesAt + nodes
	m.parityAt = m.copies[1] + m.mainLen
	m.leavesAt = m.parityAt + m.ParityBytes()
	m.weakAt = m.leavesAt + leaves
	m.copies[2] = m.weakAt + weak
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

// leafSource returns where in the manifest the intact copy of leaf j of
// file i is, and false when both copies are damaged.
func (m *Manifest) leafSource(i, j int) (int64, bool) {
	a, b := m.leafAt(i, j)
	if m.nodeOK[a/hashBlock] {
		return m.nodesAt + a, true
	}
	if m.leafOK[b/hashBlock] {
		return m.leavesAt + b, true
	}
	return 0, false
}

// Leaf returns the manifest's hash of segment j of file i, and false when
// both its copies are damaged.
func (m *Manifest) Leaf(i, j int) (csum.Value, bool, error) {
	if i < 0 || i >= len(m.Files) || j < 0 || j >= m.Files[i].Segments {
		return csum.Value{}, false, fmt.Errorf("%w: segment %d of file %d", ErrShape, j, i)
	}
	at, ok := m.leafSource(i, j)
	if !ok {
		return csum.Value{}, false, nil
	}
	var b [16]byte
	hb := b[:m.Hash.Size()]
	if _, err := m.f.ReadAt(hb, at); err != nil {
		return csum.Value{}, false, fmt.Errorf("manifest: reading a leaf hash: %w", err)
	}
	return decodeHash(hb), true, nil
}

// ParityRange returns where parity segment k of stripe s is in the
// manifest, and its length: for tools and tests that damage it on purpose.
func (m *Manifest) ParityRange(s, k int) (off, n int64) {
	return m.parityAt + (int64(s)*int64(m.Parity)+int64(k))*int64(m.shard), int64(m.shard)
}
