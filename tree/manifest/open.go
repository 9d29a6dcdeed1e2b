package manifest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/tree"
)

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// The main block (version 3):
//
//	 0  magic "SIGCHKM3"
//	 8  u64 length of the block, L
//	16  u64 XXH3-64 of bytes 0-15 (a stray magic is refused before L bytes are read)
//	24  u8 version (3), u8 hash size, u8 hash name length, hash name (29 bytes, zero-padded)
//	56  u64 segment size
//	64  u32 parity per stripe, u32 files
//	72  u64 stripes
//	80  u64 the manifest's size
//	88  u32 bytes of parity per checksum, u8 code (1: Leopard GF(2^16)), 3 bytes zero
//	96  per file: u16 name length, name, u64 size, u32 mode (permission bits),
//	    root as 16 bytes (low half first)
//	    u64 XXH3-64 of each 4 KiB block of the nodes, then of the leaves,
//	    then of the weak sums, then of each chunk of each parity segment,
//	    stripe by stripe
//	L-8 u64 XXH3-64 of bytes 0 to L-9
//
// Version 2 ("SIGCHKM2") differs in four places: bytes 88-95 are zero
// (the code is Cauchy GF(2^8), chunks are 1 KiB and segments unpadded),
// a file has no mode, there are no weak sums, and it is otherwise the
// same. Integers are little-endian.
func (m *Manifest) encodeMain() []byte {
	b := make([]byte, mainFixed, m.mainLen)
	copy(b, magic3)
	binary.LittleEndian.PutUint64(b[8:], uint64(m.mainLen))
	binary.LittleEndian.PutUint64(b[16:], xxh3.Hash(b[:16]))
	b[24], b[25], b[26] = 3, byte(m.Hash.Size()), byte(len(m.Hash.Name()))
	copy(b[27:56], m.Hash.Name())
	binary.LittleEndian.PutUint64(b[56:], uint64(m.Segment))
	binary.LittleEndian.PutUint32(b[64:], uint32(m.Parity))
	binary.LittleEndian.PutUint32(b[68:], uint32(len(m.Files)))
	binary.LittleEndian.PutUint64(b[72:], uint64(m.Stripes))
	binary.LittleEndian.PutUint64(b[80:], uint64(m.total))
	binary.LittleEndian.PutUint32(b[88:], uint32(m.chunk))
	b[92] = codeLeopard16ID
	for _, f := range m.Files {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(f.Name)))
		b = append(b, f.Name...)
		b = binary.LittleEndian.AppendUint64(b, uint64(f.Size))
		b = binary.LittleEndian.AppendUint32(b, uint32(f.Mode.Perm()))
		b = binary.LittleEndian.AppendUint64(b, f.Root.Lo)
		b = binary.LittleEndian.AppendUint64(b, f.Root.Hi)
	}
	for _, sums := range [][]uint64{m.nodeSums, m.leafSums, m.weakSums, m.paritySums} {
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
	m := &Manifest{Version: int(b[24])}
	switch {
	case string(b[:8]) == magic3 && m.Version == 3:
		if b[92] != codeLeopard16ID {
			return nil, fmt.Errorf("parity code %d (this sigcheck knows %d)", b[92], codeLeopard16ID)
		}
		m.code = codeLeopard16{}
		if b[93]|b[94]|b[95] != 0 {
			return nil, fmt.Errorf("reserved bytes set")
		}
	case string(b[:8]) == magic2 && m.Version == 2:
		m.code = codeCauchy8{}
		if le64(b[88:]) != 0 {
			return nil, fmt.Errorf("reserved bytes set")
		}
	default:
		return nil, fmt.Errorf("version %d (this sigcheck reads 2 and 3)", b[24])
	}
	if b[26] > maxHashName {
		return nil, fmt.Errorf("hash name of %d bytes", b[26])
	}
	name := string(b[27 : 27+b[26]])
	hash, err := tree.LookupHash(name)
	if err != nil || int(b[25]) != hash.Size() {
		return nil, fmt.Errorf("hash %q of %d bytes", name, b[25])
	}
	m.Hash = hash
	seg := le64(b[56:])
	if seg == 0 || seg > MaxSegment {
		return nil, fmt.Errorf("segment size %d", seg)
	}
	m.Segment = int(seg)
	if p := le32(b[64:]); p > maxShards {
		return nil, fmt.Errorf("parity %d per stripe", p)
	} else {
		m.Parity = int(p)
	}
	entry := fileEntryMin
	if m.Version >= 3 {
		entry += 4
	}
	nf32 := le32(b[68:]) // compared as read: int(nf32) may be negative on 32-bit machines
	if nf32 == 0 || int64(nf32) > int64((len(b)-mainFixed)/entry) {
		return nil, fmt.Errorf("%d files in a block of %d bytes", nf32, len(b))
	}
	nf := int(nf32)
	r := b[mainFixed : len(b)-8]
	seen := map[string]bool{}
	m.Files = make([]File, nf)
	for i := range m.Files {
		if len(r) < 2 {
			return nil, fmt.Errorf("file %d: the block ends", i)
		}
		n := int(binary.LittleEndian.Uint16(r))
		if len(r) < entry+n {
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
		if sz > maxSetSize {
			return nil, fmt.Errorf("file %q of %d bytes", f.Name, sz)
		}
		f.Size = int64(sz)
		r = r[8:]
		if m.Version >= 3 {
			mode := le32(r)
			if mode&^0o777 != 0 {
				return nil, fmt.Errorf("file %q: mode %#o", f.Name, mode)
			}
			f.Mode = fs.FileMode(mode)
			r = r[4:]
		}
		f.Root = csum.Value{Lo: le64(r), Hi: le64(r[8:])}
		if hash.Size() == 8 && f.Root.Hi != 0 {
			return nil, fmt.Errorf("file %q: a 128-bit root for a 64-bit hash", f.Name)
		}
		r = r[16:]
	}
	if m.Parity > 0 {
		st := le64(b[72:])
		if st == 0 || st > maxSetSize {
			return nil, fmt.Errorf("%d stripes", st)
		}
		m.Stripes = int(st)
	} else if le64(b[72:]) != 0 {
		return nil, fmt.Errorf("%d stripes without parity", le64(b[72:]))
	}
	if err := m.layout(); err != nil {
		return nil, err
	}
	if m.Version >= 3 && m.Parity > 0 && le32(b[88:]) != uint32(m.chunk) {
		return nil, fmt.Errorf("parity checksummed every %d bytes, its layout says %d", le32(b[88:]), m.chunk)
	}
	if m.Version == 2 && m.Parity > 0 {
		// Version 2 chose its stripes itself: as wide as its code allows.
		w := int64(256 - m.Parity)
		if want := (m.segments + w - 1) / w; int64(m.Stripes) != want {
			return nil, fmt.Errorf("%d stripes, the files make %d", m.Stripes, want)
		}
	}
	if m.mainLen != int64(len(b)) {
		return nil, fmt.Errorf("a main block of %d bytes, its contents make %d", len(b), m.mainLen)
	}
	if t := le64(b[80:]); t != uint64(m.total) {
		return nil, fmt.Errorf("says it is %d bytes long, its contents make %d", t, m.total)
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
	m.leafSums = sums(blocks(m.weakAt - m.leavesAt))
	m.weakSums = sums(blocks(m.copies[2] - m.weakAt))
	if m.Parity > 0 {
		m.paritySums = sums(int64(m.Stripes) * int64(m.Parity) * int64(m.chunks()))
	}
	return m, nil
}

// readMain reads and checks the main block at off; nil when it is not an
// intact one (why, for the first copy).
func readMain(f io.ReaderAt, off, size int64) ([]byte, error) {
	var h [24]byte
	if off < 0 || off+int64(len(h)) > size {
		return nil, fmt.Errorf("%d bytes, shorter than a main block", size)
	}
	if _, err := f.ReadAt(h[:], off); err != nil {
		return nil, err
	}
	switch {
	case string(h[:8]) == magic1:
		return nil, fmt.Errorf("version 1, made by an older sigcheck: make the manifest again")
	case string(h[:8]) != magic3 && string(h[:8]) != magic2:
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

// IsManifest says whether b, a file's first bytes, starts as a manifest
// of any version does.
func IsManifest(b []byte) bool {
	if len(b) < 8 {
		return false
	}
	switch string(b[:8]) {
	case magic3, magic2, magic1:
		return true
	}
	return false
}

// maxScanned bounds the stray magics Open looks behind.
const maxScanned = 64

// readChunk is about how many bytes are read at a time.
const readChunk = 1 << 20

// Open reads and checks the manifest in f (size bytes long). It takes the
// first intact copy of the main block (at the start, else found by
// scanning for its magic), then checks each block of hashes against the
// main block's checksums, recording in Damage what it found damaged. Only
// a manifest with no intact main block is refused (wrapping ErrManifest);
// a leaf hash lost from both copies leaves its segment unchecked, and
// parity is checked when a repair reads it. The work and memory are
// bounded by the manifest's size, whatever sizes it claims.
func Open(f io.ReaderAt, size int64) (*Manifest, error) {
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
		buf := make([]byte, readChunk+8-1)
		for at := int64(0); at < size && m == nil && len(found) < maxScanned; at += readChunk {
			n, _ := f.ReadAt(buf[:min(int64(len(buf)), size-at)], at)
			for k := 0; k < n && m == nil && len(found) < maxScanned; {
				x := bytes.Index(buf[k:n], []byte("SIGCHKM"))
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
	m.f, m.fileSize = f, size
	intact := 0
	for _, at := range m.copies {
		if b, err := readMain(f, at, size); err == nil && int64(len(b)) == m.mainLen {
			intact++
		}
	}
	m.Damage.MainCopies = intact
	var err error
	if m.nodeOK, err = checkBlocks(f, m.nodesAt, m.nodesLen, m.nodeSums); err != nil {
		return nil, fmt.Errorf("manifest: reading its hashes: %w", err)
	}
	if m.leafOK, err = checkBlocks(f, m.leavesAt, m.weakAt-m.leavesAt, m.leafSums); err != nil {
		return nil, fmt.Errorf("manifest: reading its hashes: %w", err)
	}
	if m.weakOK, err = checkBlocks(f, m.weakAt, m.copies[2]-m.weakAt, m.weakSums); err != nil {
		return nil, fmt.Errorf("manifest: reading its hashes: %w", err)
	}
	m.Damage.NodeBlocks = count(m.nodeOK, false)
	m.Damage.LeafBlocks = count(m.leafOK, false)
	m.Damage.WeakBlocks = count(m.weakOK, false)
	if m.Damage.NodeBlocks > 0 && m.Damage.LeafBlocks > 0 {
		for i := range m.Files {
			for _, r := range m.lostLeaves(i) {
				m.Damage.LostLeaves += int64(r.N)
			}
		}
	}
	return m, nil
}

func count(b []bool, v bool) int {
	n := 0
	for _, x := range b {
		if x == v {
			n++
		}
	}
	return n
}

// checkBlocks checks the 4 KiB blocks of n bytes at off against sums;
// blocks past the end of a truncated manifest are damaged.
func checkBlocks(f io.ReaderAt, off, n int64, sums []uint64) ([]bool, error) {
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

// lostLeaves returns the runs of segments of file i whose leaf hash is
// damaged in both copies: the leaves covered by damaged blocks of the
// nodes intersected with those covered by damaged blocks of the leaves,
// in time proportional to the file's blocks of hashes, not its segments
// (a block holds 512 or 256 of them).
func (m *Manifest) lostLeaves(i int) []Run {
	f := &m.Files[i]
	hs := int64(m.Hash.Size())
	// leafRuns maps the damaged blocks of a region onto the file's leaf
	// indices, given where leaf 0 is in the region.
	leafRuns := func(ok []bool, base int64) []Run {
		first := base / hashBlock
		last := (base + int64(f.Segments)*hs - 1) / hashBlock
		var runs []Run
		for b := first; b <= last; b++ {
			if ok[b] {
				continue
			}
			lo := max(0, (b*hashBlock-base)/hs)
			hi := min(int64(f.Segments), ((b+1)*hashBlock-base+hs-1)/hs)
			if k := len(runs) - 1; k >= 0 && int64(runs[k].end()) >= lo {
				runs[k].N = int(hi) - runs[k].First
				continue
			}
			runs = append(runs, Run{int(lo), int(hi - lo)})
		}
		return runs
	}
	a, b := m.leafAt(i, 0)
	return intersect(leafRuns(m.nodeOK, a), leafRuns(m.leafOK, b))
}
