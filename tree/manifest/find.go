package manifest

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// Moved is a run of segments of a file found whole at another offset
// than theirs: bytes were inserted or removed before them.
type Moved struct {
	Run
	From int64 `json:"found_at"` // where the run's first segment was found
}

// Shift returns how far the run was found from its place: positive when
// bytes were inserted before it.
func (mv Moved) Shift(seg int) int64 { return mv.From - int64(mv.First)*int64(seg) }

// Find scans the size bytes of file i readable from r for the segments
// rep says are lost, anywhere in it: a segment moved by bytes inserted or
// removed before it is found as par2 finds a block, by a rolling weak sum
// at every offset confirmed by the segment's leaf hash. What it finds is
// added to rep.Moved, and is no longer lost. A manifest of version 2 has
// no weak sums: Find finds nothing. Its memory is bounded by the weak
// sums present in the manifest and a megabyte of the file, its time by
// the file's size: a weak match that the leaf hash refutes costs hashing
// a segment, and once such refutations have hashed as many bytes as the
// file holds (64-bit weak sums make them rare on honest data; a forged
// manifest makes them at will), the scan stops, saying so in
// rep.ScanStopped. progress, if not nil, is told the bytes scanned.
func (m *Manifest) Find(ctx context.Context, i int, r io.ReaderAt, size int64, rep *Report, progress func(int64)) error {
	if m.Version < 3 || size <= 0 {
		return nil
	}
	f := &m.Files[i]
	seg := m.Segment
	// The lost segments looked for, by weak sum: whole ones in the sliding
	// window, the short last one at the end of the file.
	want := map[uint64][]int32{}
	last := -1
	buf := make([]byte, 64<<10)
	for _, run := range rep.Lost() {
		for j0 := run.First; j0 < run.end(); {
			j1 := min(run.end(), j0+len(buf)/weakSize)
			b := buf[:(j1-j0)*weakSize]
			at := f.weak + int64(j0)*weakSize
			if _, err := m.f.ReadAt(b, m.weakAt+at); err != nil && err != io.EOF {
				return fmt.Errorf("manifest: reading the manifest: %w", err)
			}
			for j := j0; j < j1; j++ {
				if !m.weakOK[(at+int64(j-j0)*weakSize)/hashBlock] || intersects(rep.Unchecked, j) {
					continue
				}
				if _, n := m.SegmentRange(i, j); n < int64(seg) {
					if n > 0 && n <= size {
						last = j
					}
					continue
				}
				w := binary.LittleEndian.Uint64(b[(j-j0)*weakSize:])
				want[w] = append(want[w], int32(j))
			}
			j0 = j1
		}
	}
	found := map[int]int64{}
	budget := size + int64(seg) // bytes hashed by refuted matches
	confirm := func(j int, b []byte) bool {
		v, ok, err := m.Leaf(i, j)
		if err == nil && ok && m.Hash.Leaf(b, uint64(j+f.Segments-1)) == v {
			return true
		}
		budget -= int64(len(b))
		return false
	}
	if last >= 0 {
		_, n := m.SegmentRange(i, last)
		b := make([]byte, n)
		if k, _ := r.ReadAt(b, size-n); int64(k) == n && confirm(last, b) {
			found[last] = size - n
		}
	}
	if len(want) > 0 && size >= int64(seg) {
		if err := m.scan(ctx, r, size, want, found, confirm, func() bool { return budget < 0 }, progress); err != nil {
			return err
		}
		rep.ScanStopped = budget < 0
	}
	if len(found) == 0 {
		return nil
	}
	js := make([]int, 0, len(found))
	for j := range found {
		js = append(js, j)
	}
	slices.Sort(js)
	for _, j := range js {
		if k := len(rep.Moved) - 1; k >= 0 && rep.Moved[k].end() == j && rep.Moved[k].From+int64(rep.Moved[k].N)*int64(seg) == found[j] {
			rep.Moved[k].N++
			continue
		}
		rep.Moved = append(rep.Moved, Moved{Run{j, 1}, found[j]})
	}
	return nil
}

// maxTries bounds the segments of one weak sum a window is compared with.
const maxTries = 4

// scan slides a window of a segment over the file, a chunk at a time, and
// records in found the first offset at which each wanted segment is.
// After a find, the window jumps past it.
func (m *Manifest) scan(ctx context.Context, r io.ReaderAt, size int64, want map[uint64][]int32, found map[int]int64,
	confirm func(int, []byte) bool, spent func() bool, progress func(int64)) error {
	seg := int64(m.Segment)
	top := weakTop(m.Segment)
	chunk := max(int64(readChunk), seg)
	buf := make([]byte, chunk+seg)
	for base := int64(0); base+seg <= size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(chunk+seg, size-base)
		b := buf[:n]
		if k, err := r.ReadAt(b, base); int64(k) < n {
			return fmt.Errorf("manifest: reading at byte %d: %w", base+int64(k), err)
		}
		// Windows starting at x in [0, end) lie wholly in b.
		end := n - seg + 1
		x := int64(0)
		h := weakRaw(b[:seg])
		for x < end {
			if js, ok := want[weakFold(h)]; ok {
				// Up to maxTries candidates a window: many segments share a
				// weak sum only when they share their bytes (then the first
				// confirms), or when a forged manifest makes them, which
				// must not make the scan quadratic. A segment found leaves
				// the list.
				hit := false
				if spent() {
					return nil
				}
				for t := 0; t < min(len(js), maxTries); t++ {
					if j := int(js[t]); confirm(j, b[x:x+seg]) {
						found[j] = base + x
						js = slices.Delete(js, t, t+1)
						if len(js) == 0 {
							delete(want, weakFold(h))
						} else {
							want[weakFold(h)] = js
						}
						hit = true
						break
					}
				}
				if hit && x+seg < end {
					x += seg
					h = weakRaw(b[x : x+seg])
					continue
				} else if hit {
					x += seg
					break
				}
			}
			if x+1 < end {
				h = (h-(uint64(b[x])+1)*top)*weakBase + uint64(b[x+seg]) + 1
			}
			x++
		}
		base += x
		if progress != nil {
			progress(min(base, size))
		}
		if base+seg > size {
			break
		}
	}
	return nil
}

// intersects says whether segment j is in one of the runs.
func intersects(runs []Run, j int) bool {
	k, _ := slices.BinarySearchFunc(runs, j, func(r Run, j int) int {
		switch {
		case r.end() <= j:
			return -1
		case r.First > j:
			return 1
		}
		return 0
	})
	return k < len(runs) && runs[k].First <= j && j < runs[k].end()
}
