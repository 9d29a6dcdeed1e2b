package csum

import "encoding/binary"

// core is the block function of an algorithm that consumes its input in
// fixed-size units (words, or groups of words): consume takes whole units,
// finish the zero-padded last partial unit (n bytes of it real, 0 < n <
// unit) and the total length, and returns the value without changing the
// state, so that Sum can be called mid-stream.
type core interface {
	consume(p []byte)
	finish(tail []byte, total uint64) Value
	reset()
}

// stream turns a core into a Hash: it buffers writes into whole units and
// hands runs of whole units to the core straight from the caller's slice.
type stream struct {
	c     core
	unit  int
	size  int // bytes in the checksum
	buf   [64]byte
	n     int // bytes in buf
	total uint64
}

func newStream(c core, unit, size int) *stream {
	s := &stream{c: c, unit: unit, size: size}
	s.c.reset()
	return s
}

func (s *stream) Write(p []byte) (int, error) {
	n := len(p)
	s.total += uint64(n)
	if s.n > 0 {
		k := copy(s.buf[s.n:s.unit], p)
		s.n += k
		p = p[k:]
		if s.n < s.unit {
			return n, nil
		}
		s.c.consume(s.buf[:s.unit])
		s.n = 0
	}
	whole := len(p) - len(p)%s.unit
	if whole > 0 {
		s.c.consume(p[:whole])
	}
	s.n = copy(s.buf[:], p[whole:])
	return n, nil
}

func (s *stream) Value() Value {
	var tail [64]byte
	copy(tail[:], s.buf[:s.n])
	return s.c.finish(tail[:s.n], s.total)
}

func (s *stream) Sum64() uint64 { return s.Value().Lo }

func (s *stream) Sum(b []byte) []byte { return appendValue(b, s.Value(), s.size) }

func (s *stream) Reset() {
	s.c.reset()
	s.n, s.total = 0, 0
}

func (s *stream) Size() int      { return s.size }
func (s *stream) BlockSize() int { return s.unit }

// appendValue appends the size bytes of v, most significant first.
func appendValue(b []byte, v Value, size int) []byte {
	if size > 8 {
		b = binary.BigEndian.AppendUint64(b, v.Hi)
		return binary.BigEndian.AppendUint64(b, v.Lo)
	}
	var tmp [8]byte
	binary.BigEndian.PutUint64(tmp[:], v.Lo)
	return append(b, tmp[8-size:]...)
}

// buffered is the Hash of an algorithm whose state is seeded with the
// total length (MurmurHash64A, SuperFastHash): with the length unknown it
// keeps the data until Sum. Memory grows with the input; CopySum, which
// knows the length, streams them without it.
type buffered struct {
	a    *Algorithm
	data []byte
}

func (b *buffered) Write(p []byte) (int, error) { b.data = append(b.data, p...); return len(p), nil }
func (b *buffered) Value() Value                { return b.a.sum(b.data) }
func (b *buffered) Sum64() uint64               { return b.Value().Lo }
func (b *buffered) Sum(p []byte) []byte         { return appendValue(p, b.Value(), b.a.Size) }
func (b *buffered) Reset()                      { b.data = b.data[:0] }
func (b *buffered) Size() int                   { return b.a.Size }
func (b *buffered) BlockSize() int              { return 8 }
