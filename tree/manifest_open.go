package tree

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
)

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// The main block:
//
//	 0  magic "SIGCHKM2"
//	 8  u64 length of the block, L
//	16  u64 XXH3-64 of bytes 0-15 (a stray magic is refused before L bytes are read)
//	24  u8 version (2), u8 hash size, u8 hash name length, hash name (29 bytes, zero-padded)
//	56  u64 segment size
//	64  u32 parity per stripe, u32 files
//	72  u64 stripes
//	80  u64 the manifest's size
//	88  u64 zero
//	96  per file: u16 name length, name, u64 size, root as 16 bytes (low half first)
//	    u64 XXH3-64 of each 4 KiB block of the nodes, then of the leaves,
//	    then of each KiB of each parity segment, stripe by stripe
//	L-8 u64 XXH3-64 of bytes 0 to L-9
//
// Integers are little-endian.
func (m *Manifest) encodeMain() []byte {
	b := make([]byte, mainFixed, m.mainLen)
	copy(b, mainMagic)
	binary.LittleEndian.PutUint64(b[8:], uint64(m.mainLen))
	binary.LittleEndian.PutUint64(b[16:], xxh3.Hash(b[:16]))
	b[24], b[25], b[26] = mainVersion, byte(m.Hash.Size()), byte(len(m.Hash.Name()))
	copy(b[27:56], m.Hash.Name())
	binary.LittleEndian.PutUint64(b[56:], uint64(m.Segment))
	binary.LittleEndian.PutUint32(b[64:], uint32(m.Parity))
	binary.LittleEndian.PutUint32(b[68:], uint32(len(m.Files)))
	binary.LittleEndian.PutUint64(b[72:], uint64(m.Stripes))
	binary.LittleEndian.PutUint64(b[80:], uint64(m.total))
	for _, f := range m.Files {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(f.Name)))
		b = append(b, f.Name...)
		b = binary.LittleEndian.AppendUint64(b, uint64(f.Size))
		b = binary.LittleEndian.AppendUint64(b, f.Root.Lo)
		b = binary.LittleEndian.AppendUint64(b, f.Root.Hi)
	}
	for _, sums := range [][]uint64{m.nodeSums, m.leafSums, m.paritySums} {
		for _, s := range sums {
			b = binary.LittleEndian.AppendUint64(b, s)
		}
	}
	return binary.LittleEndian.AppendUint64(b, xxh3.Hash(b))
}

// decodeMain decodes a main block whose checksums have been checked.
// Every count is bounded by the block's length before anything is
// allocated from it.
func decodeMain(b []byte) (*Manifest, error) {
	if b[24] != mainVersion {
		return nil, fmt.Errorf("version %d (this sigcheck reads %d)", b[24], mainVersion)
	}
	if b[26] > maxHashName {
		return nil, fmt.Errorf("hash name of %d bytes", b[26])
	}
	name := string(b[27 : 27+b[26]])
	hash, err := LookupHash(name)
	if err != nil || int(b[25]) != hash.Size() {
		return nil, fmt.Errorf("hash %q of %d bytes", name, b[25])
	}
	m := &Manifest{Hash: hash}
	seg := le64(b[56:])
	if seg == 0 || seg > MaxManifestSegment {
		return nil, fmt.Errorf("segment size %d", seg)
	}
	m.Segment = int(seg)
	m.Parity = int(binary.LittleEndian.Uint32(b[64:]))
	if m.Parity < 0 { // over 2^31, on a 32-bit machine
		return nil, fmt.Errorf("parity %d", binary.LittleEndian.Uint32(b[64:]))
	}
	nf32 := binary.LittleEndian.Uint32(b[68:]) // compared as read: int(nf32) may be negative on 32-bit machines
	if nf32 == 0 || int64(nf32) > int64((len(b)-mainFixed)/fileEntryMin) {
		return nil, fmt.Errorf("%d files in a block of %d bytes", nf32, len(b))
	}
	nf := int(nf32)
	r := b[mainFixed : len(b)-8]
	seen := map[string]bool{}
	m.Files = make([]ManifestFile, nf)
	for i := range m.Files {
		if len(r) < 2 {
			return nil, fmt.Errorf("file %d: the block ends", i)
		}
		n := int(binary.LittleEndian.Uint16(r))
		if len(r) < fileEntryMin+n {
			return nil, fmt.Errorf("file %d: the block ends", i)
		}
		f := &m.Files[i]
		f.Name = string(r[2 : 2+n])
		if err := checkName(f.Name); err != nil {
			return nil, fmt.Errorf("file %d: %v", i, err)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("file %q twice", f.Name)
		}
		seen[f.Name] = true
		r = r[2+n:]
		sz := le64(r)
		if sz > maxManifestSize {
			return nil, fmt.Errorf("file %q of %d bytes", f.Name, sz)
		}
		f.Size = int64(sz)
		f.Root = csum.Value{Lo: le64(r[8:]), Hi: le64(r[16:])}
		if hash.Size() == 8 && f.Root.Hi != 0 {
			return nil, fmt.Errorf("file %q: a 128-bit root for a 64-bit hash", f.Name)
		}
		r = r[24:]
	}
	if err := m.plan(); err != nil {
		return nil, err
	}
	if m.mainLen != int64(len(b)) {
		return nil, fmt.Errorf("a main block of %d bytes, its contents make %d", len(b), m.mainLen)
	}
	if st := le64(b[72:]); st != uint64(m.Stripes) {
		return nil, fmt.Errorf("%d stripes, the files make %d", st, m.Stripes)
	}
	if t := le64(b[80:]); t != uint64(m.total) {
		return nil, fmt.Errorf("says it is %d bytes long, its contents make %d", t, m.total)
	}
	if le64(b[88:]) != 0 {
		return nil, fmt.Errorf("reserved bytes set")
	}
	sums := func(n int64) []uint64 {
		s := make([]uint64, n)
		for k := range s {
			s[k] = le64(r[8*k:])
		}
		r = r[8*n:]
		return s
	}
	m.nodeSums = sums(blocks(m.nodesLen))
	m.leafSums = sums(blocks(m.copies[2] - m.leavesAt))
	m.paritySums = sums(int64(m.Stripes) * int64(m.Parity) * int64(m.chunks()))
	return m, nil
}

// readMain reads and checks the main block at off; nil when it is not an
// intact one (why, for the first copy).
func readMain(f ReaderAt, off, size int64) ([]byte, error) {
	var h [24]byte
	if off < 0 || off+int64(len(h)) > size {
		return nil, fmt.Errorf("%d bytes, shorter than a main block", size)
	}
	if _, err := f.ReadAt(h[:], off); err != nil {
		return nil, err
	}
	switch {
	case string(h[:8]) == oldMagic:
		return nil, fmt.Errorf("version 1, made by an older sigcheck: make the manifest again")
	case string(h[:8]) != mainMagic:
		return nil, fmt.Errorf("not a sigcheck manifest")
	case le64(h[16:]) != xxh3.Hash(h[:16]):
		return nil, fmt.Errorf("the main block's header is damaged")
	}
	n := le64(h[8:])
	if n < mainFixed+fileEntryMin+8 || n > uint64(size-off) {
		return nil, fmt.Errorf("a main block of %d bytes in %d", n, size-off)
	}
	// Read as the bytes come, so that what is allocated is what is there.
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.NewSectionReader(f, off, int64(n))); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if uint64(len(b)) != n {
		return nil, fmt.Errorf("the main block ends early")
	}
	if le64(b[n-8:]) != xxh3.Hash(b[:n-8]) {
		return nil, fmt.Errorf("checksum mismatch: the main block is damaged")
	}
	return b, nil
}

// maxScanned bounds the stray magics OpenManifest looks behind.
const maxScanned = 64

// OpenManifest reads and checks the manifest in f (size bytes long). It
// takes the first intact copy of the main block (at the start, else found
// by scanning for its magic), then checks each block of hashes against
// the main block's checksums, recording in Damage what it found damaged.
// Only a manifest with no intact main block is refused (wrapping
// ErrManifest); a leaf hash lost from both copies leaves its segment
// unchecked, and parity segments are checked when a repair reads them.
func OpenManifest(f ReaderAt, size int64) (*Manifest, error) {
	bad := func(format string, args ...any) (*Manifest, error) {
		return nil, fmt.Errorf("%w: %s", ErrManifest, fmt.Sprintf(format, args...))
	}
	var m *Manifest
	var first error
	found := map[int64]bool{}
	try := func(off int64) {
		if m != nil || found[off] {
			return
		}
		found[off] = true
		b, err := readMain(f, off, size)
		if err == nil {
			var mm *Manifest
			if mm, err = decodeMain(b); err == nil {
				m = mm
				return
			}
		}
		if first == nil {
			first = err
		}
	}
	try(0)
	if m == nil {
		// Look for the other copies: their magic, anywhere.
		buf := make([]byte, readChunk+len(mainMagic)-1)
		for at := int64(0); at < size && m == nil && len(found) < maxScanned; at += readChunk {
			n, _ := f.ReadAt(buf[:min(int64(len(buf)), size-at)], at)
			for k := 0; k < n && m == nil && len(found) < maxScanned; {
				x := bytes.Index(buf[k:n], []byte(mainMagic))
				if x < 0 {
					break
				}
				try(at + int64(k+x))
				k += x + 1
			}
		}
	}
	if m == nil {
		return bad("%v", first)
	}
	m.f = f
	intact := 0
	for _, at := range m.copies {
		if b, err := readMain(f, at, size); err == nil && int64(len(b)) == m.mainLen {
			intact++
		}
	}
	m.Damage.MainCopies = intact
	var err error
	if m.nodeOK, err = checkBlocks(f, m.nodesAt, m.nodesLen, m.nodeSums, size); err != nil {
		return nil, err
	}
	if m.leafOK, err = checkBlocks(f, m.leavesAt, m.copies[2]-m.leavesAt, m.leafSums, size); err != nil {
		return nil, err
	}
	for _, ok := range m.nodeOK {
		if !ok {
			m.Damage.NodeBlocks++
		}
	}
	for _, ok := range m.leafOK {
		if !ok {
			m.Damage.LeafBlocks++
		}
	}
	if m.Damage.NodeBlocks > 0 {
		for i := range m.Files {
			for j := range m.Files[i].Segments {
				if _, ok := m.leafSource(i, j); !ok {
					m.Damage.LostLeaves++
				}
			}
		}
	}
	return m, nil
}

// checkBlocks checks the 4 KiB blocks of n bytes at off against sums;
// blocks past the end of a truncated manifest are damaged.
func checkBlocks(f ReaderAt, off, n int64, sums []uint64, size int64) ([]bool, error) {
	ok := make([]bool, len(sums))
	buf := make([]byte, min(256*hashBlock, n))
	for at := int64(0); at < n; at += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), n-at)]
		got, err := f.ReadAt(b, off+at)
		if err != nil && err != io.EOF {
			return nil, err
		}
		for k := 0; k < len(b); k += hashBlock {
			end := min(k+hashBlock, len(b))
			if end <= got {
				ok[(at+int64(k))/hashBlock] = xxh3.Hash(b[k:end]) == sums[(at+int64(k))/hashBlock]
			}
		}
		if got < len(b) {
			break
		}
	}
	return ok, nil
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
		return csum.Value{}, false, fmt.Errorf("%w: segment %d of file %d", ErrIndex, j, i)
	}
	at, ok := m.leafSource(i, j)
	if !ok {
		return csum.Value{}, false, nil
	}
	b := make([]byte, m.Hash.Size())
	if _, err := m.f.ReadAt(b, at); err != nil {
		return csum.Value{}, false, err
	}
	return decodeHash(b), true, nil
}
