package tree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
)

// A manifest is a file's tree (and, optionally, parity) kept beside it, so
// that the file can be checked later, segment by segment, and repaired.
//
// Layout: a 128-byte header (magic "SIGCHKMF", version, hash, segment
// size, file size, segment count, parity per stripe, stripe width, root,
// the file's base name), the 2n-1 node hashes in level order, the parity
// segments stripe by stripe, and the XXH3-64 of all that as an 8-byte
// trailer, which catches a corrupt manifest before anything is trusted.
// Writing and checking stream: memory stays the same whatever the file's
// size (the tree is computed in the manifest itself, deepest level first).
type Manifest struct {
	Hash     *Hash
	Segment  int
	Size     int64 // bytes of the file
	Segments int
	Parity   int // parity segments per stripe, 0 for none
	Stripe   int // data segments per stripe
	Root     csum.Value
	Name     string // the file's base name when the manifest was made (informational)

	f ReaderAt
}

// ReaderAt and ReadWriterAt are what manifests and repairs need of files
// (an *os.File is both).
type (
	ReaderAt     = io.ReaderAt
	ReadWriterAt interface {
		io.ReaderAt
		io.WriterAt
	}
)

const (
	manifestMagic   = "SIGCHKMF"
	manifestVersion = 1
	headerSize      = 128
	trailerSize     = 8
	maxNameLen      = 31 // bytes of the file name kept
	maxHashNameLen  = 31
	// maxManifestSize (1 PiB) bounds the sizes in a header, so that no
	// offset computed from them can overflow an int64.
	maxManifestSize = 1 << 50
	// MaxManifestSegment bounds a manifest's segment size, and with it the
	// memory that checking a file takes (a segment or 1 MiB, whichever is
	// larger). With parity a whole stripe (up to 255 segments) is encoded
	// at once, so its segments are at most MaxParitySegment.
	MaxManifestSegment = 64 << 20
	MaxParitySegment   = 1 << 20
)

// ErrManifest is wrapped by the errors of a manifest that cannot be
// trusted: not a manifest, another version, corrupted, truncated.
var ErrManifest = errors.New("tree: bad manifest")

// WithParity sets, for manifests, the number of parity segments per stripe
// (0, the default, for none).
func WithParity(p int) Option { return func(c *config) { c.parity = p } }

// Progress sets a function called with the number of bytes of data done,
// as a manifest is written or checked.
func Progress(fn func(done int64)) Option { return func(c *config) { c.progress = fn } }

func (m *Manifest) hashSize() int { return m.Hash.Size() }

func (m *Manifest) nodesOffset() int64 { return headerSize }

func (m *Manifest) parityOffset() int64 {
	return headerSize + int64(2*m.Segments-1)*int64(m.hashSize())
}

func (m *Manifest) stripes() int {
	if m.Parity == 0 {
		return 0
	}
	return (m.Segments + m.Stripe - 1) / m.Stripe
}

func (m *Manifest) trailerOffset() int64 {
	return m.parityOffset() + int64(m.stripes())*int64(m.Parity)*int64(m.Segment)
}

// SegmentRange returns the byte offset and length of segment j in the file.
func (m *Manifest) SegmentRange(j int) (off, n int64) {
	off = int64(j) * int64(m.Segment)
	return off, min(int64(m.Segment), m.Size-off)
}

func (m *Manifest) header() []byte {
	h := make([]byte, headerSize)
	copy(h, manifestMagic)
	h[8] = manifestVersion
	h[9] = byte(m.hashSize())
	h[10] = byte(len(m.Hash.Name()))
	copy(h[11:42], m.Hash.Name())
	binary.LittleEndian.PutUint64(h[48:], uint64(m.Segment))
	binary.LittleEndian.PutUint64(h[56:], uint64(m.Size))
	binary.LittleEndian.PutUint64(h[64:], uint64(m.Segments))
	binary.LittleEndian.PutUint16(h[72:], uint16(m.Parity))
	binary.LittleEndian.PutUint16(h[74:], uint16(m.Stripe))
	binary.LittleEndian.PutUint64(h[80:], m.Root.Lo)
	binary.LittleEndian.PutUint64(h[88:], m.Root.Hi)
	name := m.Name
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	h[96] = byte(len(name))
	copy(h[97:], name)
	return h
}

// CreateManifest writes to out the manifest of size bytes of data read from
// r, naming the file name; out must allow reading back what was written
// (an *os.File). Options: Segment, UseHash, WithParity, Progress.
func CreateManifest(out ReadWriterAt, r io.Reader, size int64, name string, opts ...Option) (*Manifest, error) {
	c := config{seg: DefaultSegment, hash: DefaultHash}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	h, n, err := shape(size, c.seg, c.hash)
	if err != nil {
		return nil, err
	}
	if size > maxManifestSize {
		return nil, fmt.Errorf("tree: %d bytes, more than a manifest describes (%d)", size, int64(maxManifestSize))
	}
	if c.seg > MaxManifestSegment || c.parity != 0 && c.seg > MaxParitySegment {
		return nil, fmt.Errorf("%w %d: a manifest's segments are at most %d bytes, %d with parity", ErrSegment, c.seg, MaxManifestSegment, MaxParitySegment)
	}
	m := &Manifest{Hash: h, Segment: c.seg, Size: size, Segments: n, Name: filepath.Base(name), f: out}
	if c.parity != 0 {
		layout, err := newParityLayout(size, c.seg, c.parity)
		if err != nil {
			return nil, err
		}
		m.Parity, m.Stripe = layout.P, layout.Stripe
	}
	if len(m.Hash.Name()) > maxHashNameLen {
		return nil, fmt.Errorf("tree: hash name %q too long for a manifest", m.Hash.Name())
	}
	if _, err := out.WriteAt(m.header(), 0); err != nil {
		return nil, err
	}
	if err := m.writeLeaves(out, r, c.progress); err != nil {
		return nil, err
	}
	if err := m.writeInner(out); err != nil {
		return nil, err
	}
	root := make([]byte, m.hashSize())
	if _, err := out.ReadAt(root, m.nodesOffset()); err != nil {
		return nil, err
	}
	m.Root = decodeHash(root)
	if _, err := out.WriteAt(m.header(), 0); err != nil {
		return nil, err
	}
	sum, err := m.checksum(out)
	if err != nil {
		return nil, err
	}
	if _, err := out.WriteAt(binary.LittleEndian.AppendUint64(nil, sum), m.trailerOffset()); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeHash(b []byte) csum.Value {
	v := csum.Value{Lo: binary.LittleEndian.Uint64(b)}
	if len(b) == 16 {
		v.Hi = binary.LittleEndian.Uint64(b[8:])
	}
	return v
}

// chunkSegments returns how many segments to read at a time: a stripe when
// there is parity (it is encoded whole), else about 1 MiB.
func (m *Manifest) chunkSegments() int {
	if m.Parity > 0 {
		return m.Stripe
	}
	return max(1, (1<<20)/m.Segment)
}

// writeLeaves reads the data once, hashing each segment into its leaf
// (the leaves are the last n nodes, in segment order, so they are written
// in order) and encoding each stripe's parity.
func (m *Manifest) writeLeaves(out io.WriterAt, r io.Reader, progress func(int64)) error {
	return m.scan(r, m.chunkSegments(), progress, func(first int, data, leaves []byte) error {
		if _, err := out.WriteAt(leaves, m.leafOffset(first)); err != nil {
			return err
		}
		if m.Parity == 0 {
			return nil
		}
		// A chunk is one stripe: encode it alone, as a buffer of its own.
		local := &Parity{P: m.Parity, Stripe: m.Stripe, Segment: m.Segment, Size: int64(len(data))}
		shards, err := local.encodeStripe(local.stripeData(data, 0))
		if err != nil {
			return err
		}
		s := first / m.Stripe
		for k, sh := range shards {
			if _, err := out.WriteAt(sh, m.parityOffset()+int64(s*m.Parity+k)*int64(m.Segment)); err != nil {
				return err
			}
		}
		return nil
	})
}

// leafOffset returns where in the manifest the leaf of segment j is.
func (m *Manifest) leafOffset(j int) int64 {
	return m.nodesOffset() + int64(j+m.Segments-1)*int64(m.hashSize())
}

// scan reads the data per segments at a time and calls fn with each
// chunk's first segment, its bytes and its segments' leaf hashes in their
// wire form; it reports the bytes done to progress, and makes sure the
// data ends where the manifest says (ErrSize otherwise).
func (m *Manifest) scan(r io.Reader, per int, progress func(int64), fn func(first int, data, leaves []byte) error) error {
	hs := m.hashSize()
	buf := make([]byte, min(int64(per)*int64(m.Segment), m.Size))
	leaves := make([]byte, 0, per*hs)
	word := make([]uint64, m.Hash.words)
	for first := 0; first < m.Segments; first += per {
		count := min(per, m.Segments-first)
		off, _ := m.SegmentRange(first)
		n := min(int64(count)*int64(m.Segment), m.Size-off)
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: the data ends before byte %d of %d (truncated)", ErrSize, off+n, m.Size)
			}
			return fmt.Errorf("tree: reading the data at byte %d: %w", off, err)
		}
		leaves = leaves[:0]
		for k := range count {
			so, sn := m.SegmentRange(first + k)
			m.Hash.leaf(buf[so-off:so-off+max(sn, 0)], uint64(first+k+m.Segments-1), word)
			leaves = appendHash(leaves, get(word), hs)
		}
		if err := fn(first, buf[:n], leaves); err != nil {
			return err
		}
		if progress != nil {
			progress(off + n)
		}
	}
	var one [1]byte
	if k, _ := r.Read(one[:]); k > 0 {
		return fmt.Errorf("%w: the data is longer than %d bytes (extended)", ErrSize, m.Size)
	}
	return nil
}

// innerBlock is how many inner nodes writeInner computes per read-back.
const innerBlock = 1 << 15

// writeInner computes the inner nodes in the manifest itself, from the
// last inner node back to the root, a block of parents [lo, hi] at a time.
// Their children [2lo+1, 2hi+2] are either in the block (near the root;
// children come after parents, so they are computed first) or past it and
// already written, in which case they are read back: the memory is a few
// blocks whatever the number of segments.
func (m *Manifest) writeInner(f ReadWriterAt) error {
	hs := int64(m.hashSize())
	w := m.Hash.words
	parents := make([]uint64, innerBlock*w)
	children := make([]uint64, 2*innerBlock*w)
	raw := make([]byte, 2*innerBlock*hs)
	for hi := m.Segments - 2; hi >= 0; {
		lo := max(0, hi-innerBlock+1)
		first, last := max(2*lo+1, hi+1), 2*hi+2 // children to read back
		b := raw[:int64(last-first+1)*hs]
		if _, err := f.ReadAt(b, m.nodesOffset()+int64(first)*hs); err != nil {
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
			m.Hash.inner(at(2*i+1), at(2*i+2), uint64(i), at(i))
		}
		out := raw[:0]
		for i := lo; i <= hi; i++ {
			out = appendHash(out, get(at(i)), int(hs))
		}
		if _, err := f.WriteAt(out, m.nodesOffset()+int64(lo)*hs); err != nil {
			return err
		}
		hi = lo - 1
	}
	return nil
}

// checksum returns the XXH3-64 of the manifest before its trailer.
func (m *Manifest) checksum(f ReaderAt) (uint64, error) {
	h := xxh3.New()
	_, err := io.Copy(h, io.NewSectionReader(f, 0, m.trailerOffset()))
	return h.Sum64(), err
}

// OpenManifest reads and checks the manifest in f (fileSize bytes long):
// its header, that its length is what the header implies, and its trailer
// checksum — all before any of its hashes is trusted.
func OpenManifest(f ReaderAt, fileSize int64) (*Manifest, error) {
	bad := func(format string, args ...any) (*Manifest, error) {
		return nil, fmt.Errorf("%w: %s", ErrManifest, fmt.Sprintf(format, args...))
	}
	h := make([]byte, headerSize)
	if fileSize < headerSize+trailerSize {
		return bad("%d bytes, shorter than a header", fileSize)
	}
	if _, err := f.ReadAt(h, 0); err != nil {
		return nil, err
	}
	if string(h[:8]) != manifestMagic {
		return bad("not a sigcheck manifest")
	}
	if h[8] != manifestVersion {
		return bad("version %d (this sigcheck reads %d)", h[8], manifestVersion)
	}
	if h[10] > maxHashNameLen {
		return bad("hash name of %d bytes", h[10])
	}
	hash, err := LookupHash(string(h[11 : 11+h[10]]))
	if err != nil || int(h[9]) != hash.Size() {
		return bad("hash %q of %d bytes", h[11:11+h[10]], h[9])
	}
	m := &Manifest{
		Hash:    hash,
		Segment: int(binary.LittleEndian.Uint64(h[48:])),
		Size:    int64(binary.LittleEndian.Uint64(h[56:])),
		Parity:  int(binary.LittleEndian.Uint16(h[72:])),
		Stripe:  int(binary.LittleEndian.Uint16(h[74:])),
		Root:    csum.Value{Lo: binary.LittleEndian.Uint64(h[80:]), Hi: binary.LittleEndian.Uint64(h[88:])},
		f:       f,
	}
	n := binary.LittleEndian.Uint64(h[64:])
	if h[96] > maxNameLen {
		return bad("file name of %d bytes", h[96])
	}
	m.Name = string(h[97 : 97+h[96]])
	if seg, size := binary.LittleEndian.Uint64(h[48:]), binary.LittleEndian.Uint64(h[56:]); seg == 0 || seg > MaxManifestSegment || size > maxManifestSize {
		return bad("segment size %d, file size %d", binary.LittleEndian.Uint64(h[48:]), binary.LittleEndian.Uint64(h[56:]))
	}
	if want := uint64(max(1, (m.Size+int64(m.Segment)-1)/int64(m.Segment))); n != want {
		return bad("%d segments, %d bytes in %d-byte segments make %d", n, m.Size, m.Segment, want)
	}
	m.Segments = int(n)
	if m.Parity != 0 {
		layout, err := newParityLayout(m.Size, m.Segment, m.Parity)
		if err != nil || layout.Stripe != m.Stripe || m.Segment > MaxParitySegment {
			return bad("parity %d in stripes of %d", m.Parity, m.Stripe)
		}
	} else if m.Stripe != 0 {
		return bad("stripes of %d without parity", m.Stripe)
	}
	if want := m.trailerOffset() + trailerSize; fileSize != want {
		return bad("%d bytes, its header implies %d (truncated or extended)", fileSize, want)
	}
	sum, err := m.checksum(f)
	if err != nil {
		return nil, err
	}
	t := make([]byte, trailerSize)
	if _, err := f.ReadAt(t, m.trailerOffset()); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint64(t) != sum {
		return bad("checksum mismatch: the manifest is corrupted")
	}
	root := make([]byte, m.hashSize())
	if _, err := f.ReadAt(root, m.nodesOffset()); err != nil {
		return nil, err
	}
	if decodeHash(root) != m.Root {
		return bad("the root in the header is not the tree's")
	}
	return m, nil
}

// Leaf returns the manifest's hash of segment j.
func (m *Manifest) Leaf(j int) (csum.Value, error) {
	b := make([]byte, m.hashSize())
	_, err := m.f.ReadAt(b, m.leafOffset(j))
	return decodeHash(b), err
}

// ErrSize is returned (wrapped) when data is not as long as its manifest
// says (or, for CreateManifest, as the size it was given).
var ErrSize = errors.New("tree: file size differs from the manifest's")

// Verify reads dataSize bytes from r and returns the segments whose hashes
// differ from the manifest's. A file of another size is an error (wrapping
// ErrSize) that says whether it was truncated or extended; no segment is
// compared then, and no "all is well" can come out of it.
func (m *Manifest) Verify(r io.Reader, dataSize int64, opts ...Option) ([]int, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if dataSize != m.Size {
		how := "truncated"
		if dataSize > m.Size {
			how = "extended"
		}
		return nil, fmt.Errorf("%w: %d bytes, the manifest says %d (%s)", ErrSize, dataSize, m.Size, how)
	}
	hs := m.hashSize()
	per := max(1, (1<<20)/m.Segment)
	want := make([]byte, per*hs)
	var bad []int
	err := m.scan(r, per, c.progress, func(first int, _, leaves []byte) error {
		if _, err := m.f.ReadAt(want[:len(leaves)], m.leafOffset(first)); err != nil {
			return err
		}
		for k := range len(leaves) / hs {
			if !bytes.Equal(leaves[k*hs:(k+1)*hs], want[k*hs:(k+1)*hs]) {
				bad = append(bad, first+k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return bad, nil
}

// Repair rebuilds the faulty segments of the file from the manifest's
// parity, checks each against the manifest's hashes and writes it back.
// Nothing is written unless every rebuilt segment checks.
func (m *Manifest) Repair(file ReadWriterAt, faulty []int) error {
	if m.Parity == 0 {
		return fmt.Errorf("%w: the manifest has no parity", ErrTooManyFaults)
	}
	par := &Parity{P: m.Parity, Stripe: m.Stripe, Segment: m.Segment, Size: m.Size}
	byStripe := map[int][]int{}
	for _, j := range faulty {
		if j < 0 || j >= m.Segments {
			return fmt.Errorf("%w: segment %d of %d", ErrIndex, j, m.Segments)
		}
		byStripe[j/m.Stripe] = append(byStripe[j/m.Stripe], j)
	}
	type fix struct {
		off     int64
		content []byte
	}
	var fixes []fix
	word := make([]uint64, m.Hash.words)
	for s, segs := range byStripe {
		if len(segs) > m.Parity {
			return fmt.Errorf("%w: %d in stripe %d, parity rebuilds %d", ErrTooManyFaults, len(segs), s, m.Parity)
		}
		first, count := par.stripeSegments(s)
		off, _ := m.SegmentRange(first)
		n := min(int64(count)*int64(m.Segment), m.Size-off)
		buf := make([]byte, n)
		if _, err := file.ReadAt(buf, off); err != nil {
			return fmt.Errorf("tree: reading stripe %d: %w", s, err)
		}
		local := &Parity{P: m.Parity, Stripe: m.Stripe, Segment: m.Segment, Size: n}
		shards := append(local.stripeData(buf, 0), make([][]byte, m.Parity)...)
		for k := range m.Parity {
			shards[count+k] = make([]byte, m.Segment)
			if _, err := m.f.ReadAt(shards[count+k], m.parityOffset()+int64(s*m.Parity+k)*int64(m.Segment)); err != nil {
				return err
			}
		}
		if err := rebuild(shards, count, segs, first, s); err != nil {
			return err
		}
		for _, j := range segs {
			so, sn := m.SegmentRange(j)
			content := shards[j-first][:sn]
			m.Hash.leaf(content, uint64(j+m.Segments-1), word)
			want, err := m.Leaf(j)
			if err != nil {
				return err
			}
			if get(word) != want {
				return fmt.Errorf("%w: segment %d", ErrRepairCheck, j)
			}
			fixes = append(fixes, fix{so, content})
		}
	}
	for _, f := range fixes {
		if _, err := file.WriteAt(f.content, f.off); err != nil {
			return err
		}
	}
	return nil
}
