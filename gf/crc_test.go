package gf

import (
	"bytes"
	"hash/crc32"
	"hash/crc64"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// The CRCs of Go's hash/crc32 and hash/crc64, as Rocksoft models: all
// reflected, with init = xorout = all ones.
var stdCRCs = []struct {
	name string
	crc  *CRC
	sum  func([]byte) uint64
}{
	{"CRC-32", mustCRC(32, 0x04C11DB7), func(p []byte) uint64 { return uint64(crc32.ChecksumIEEE(p)) }},
	{"CRC-32C", mustCRC(32, 0x1EDC6F41), func(p []byte) uint64 { return uint64(crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli))) }},
	{"CRC-64/XZ", mustCRC(64, 0x42F0E1EBA9EA3693), func(p []byte) uint64 { return crc64.Checksum(p, crc64.MakeTable(crc64.ECMA)) }},
	{"CRC-64/GO-ISO", mustCRC(64, 0x1B), func(p []byte) uint64 { return crc64.Checksum(p, crc64.MakeTable(crc64.ISO)) }},
}

func mustCRC(w uint, poly uint64) *CRC {
	ones := ^uint64(0) >> (64 - w)
	c, err := NewCRC(w, poly, ones, ones, true)
	if err != nil {
		panic(err)
	}
	return c
}

func TestCRCCombineAndRepeat(t *testing.T) {
	for _, c := range stdCRCs {
		props := gopter.NewProperties(params(t, 300))
		props.Property(c.name+": Combine(crc A, crc B, |B|) = crc(A‖B)", prop.ForAll(func(a, b []byte) bool {
			return c.crc.Combine(c.sum(a), c.sum(b), uint64(len(b))) == c.sum(append(append([]byte{}, a...), b...))
		}, gen.SliceOf(gen.UInt8()), gen.SliceOf(gen.UInt8())))
		props.Property(c.name+": Repeat(crc A, |A|, k) = crc(A^k)", prop.ForAll(func(a []byte, k uint8) bool {
			return c.crc.Repeat(c.sum(a), uint64(len(a)), uint64(k)) == c.sum(bytes.Repeat(a, int(k)))
		}, gen.SliceOf(gen.UInt8()), gen.UInt8()))
		props.TestingRun(t)
		if c.crc.Empty() != c.sum(nil) {
			t.Errorf("%s: Empty = %#x, want %#x", c.name, c.crc.Empty(), c.sum(nil))
		}
		for _, v := range []uint64{0, 1, 0xdeadbeef, c.crc.Empty()} {
			if c.crc.Value(c.crc.Register(v)) != v {
				t.Errorf("%s: Register does not invert Value at %#x", c.name, v)
			}
		}
	}
	if _, err := NewCRC(16, 0x1021, 0x1FFFF, 0, false); err == nil {
		t.Error("init wider than the CRC accepted")
	}
	if _, err := NewCRC(0, 1, 0, 0, false); err == nil {
		t.Error("width 0 accepted")
	}
}
