package manifest

// columns holds one column of bytes of every segment of a stripe, data
// and parity: a stripe is encoded and rebuilt a column at a time, so that
// the memory stays within a budget however wide the stripe and however
// large its segments. Every byte position is a codeword of its own, so a
// column is a stripe in small.
type columns struct {
	m     *Manifest
	width int // bytes of a column: a multiple of 64, of the parity's chunk if it can be
	slots int // data slots
	buf   []byte
	hdrs  [][]byte // the slots' slice headers, made once: a stripe of 65536 takes 1.5 MiB of them
}

// newColumns sizes columns for stripes of up to width data segments and
// rows parity segments within memory bytes: whole segments if they fit,
// else whole chunks of parity if they do, else as many 64-byte groups as
// do (one at least: 4 MiB for the widest stripe), whatever the manifest
// says of its chunks.
func newColumns(m *Manifest, width, rows int, memory int64) *columns {
	n := int64(width + rows)
	cw := m.shard
	if n*int64(cw) > memory {
		if fit := int(memory / n); fit >= m.chunk {
			cw = fit / m.chunk * m.chunk
		} else {
			cw = max(64, fit/64*64)
		}
		cw = min(cw, m.shard)
	}
	return &columns{m: m, width: cw, slots: width, buf: make([]byte, n*int64(cw)), hdrs: make([][]byte, n)}
}

// slot returns slot k's first n bytes (data slots first, then parity).
func (c *columns) slot(k, n int) []byte { return c.buf[k*c.width : k*c.width+n : k*c.width+n] }

// data returns the first w data slots, n bytes each. The slice is the
// columns' own, valid until the next call.
func (c *columns) data(w, n int) [][]byte {
	d := c.hdrs[:w]
	for k := range d {
		d[k] = c.slot(k, n)
	}
	return d
}

// parity returns the parity slots, n bytes each, as data does.
func (c *columns) parity(n int) [][]byte {
	p := c.hdrs[c.slots : c.slots+c.m.Parity]
	for k := range p {
		p[k] = c.slot(c.slots+k, n)
	}
	return p
}

// read fills the data slots with bytes [c0, c1) of each of the width data
// segments of stripe s, zero past a segment's end, and skips the places
// in skip (sorted; their slots are zeroed). Reads of consecutive segments
// of one file go as one when their slots are consecutive too (a stripe of
// one, columns of whole segments). It returns the bytes read.
func (c *columns) read(s, width, c0, c1 int, skip []int, readAt func(i int, b []byte, off int64) error) (int64, error) {
	m := c.m
	n := c1 - c0
	type pending struct {
		i       int
		off     int64
		at, len int // in buf
	}
	var p pending
	var total int64
	flush := func() error {
		if p.len == 0 {
			return nil
		}
		total += int64(p.len)
		err := readAt(p.i, c.buf[p.at:p.at+p.len], p.off)
		p.len = 0
		return err
	}
	i := 0
	for k := range width {
		slot := c.slot(k, n)
		if len(skip) > 0 && skip[0] == k {
			skip = skip[1:]
			clear(slot)
			continue
		}
		g := m.global(s, k)
		for i+1 < len(m.Files) && m.Files[i+1].first <= g {
			i++
		}
		off, sn := m.SegmentRange(i, int(g-m.Files[i].first))
		l := int(max(0, min(int64(c1), sn)-int64(c0)))
		clear(slot[l:])
		if l == 0 {
			continue
		}
		at := k * c.width
		if p.len > 0 && p.i == i && p.off+int64(p.len) == off+int64(c0) && p.at+p.len == at {
			p.len += l
			continue
		}
		if err := flush(); err != nil {
			return total, err
		}
		p = pending{i, off + int64(c0), at, l}
	}
	return total, flush()
}
