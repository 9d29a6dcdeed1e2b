package fuzz

import (
	"bytes"
	"hash/crc32"
	"testing"

	"github.com/sigcheck/sigcheck/internal/crc32k"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FuzzCRC32C: internal/crc32k's CRC-32C of arbitrary bytes, from an
// arbitrary register, at an arbitrary alignment, equals hash/crc32's, in
// one piece and cut in two; and its fused copies copy exactly, to a
// destination at another alignment, and return the same CRC. The seeds
// sit at the kernel's edges: 127–129 bytes (its threshold), 255–257 (its
// four-register loop), a few kilobytes with a ragged end.
func FuzzCRC32C(f *testing.F) {
	f.Add([]byte("123456789"), uint32(0), uint16(4), uint8(0))
	for _, n := range []int{63, 127, 128, 129, 255, 256, 257, 1000, 4096 + 17} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(i*131 + n)
		}
		f.Add(p, uint32(n)*0x9E3779B1, uint16(n/3), uint8(n))
	}
	f.Fuzz(func(t *testing.T, data []byte, crc uint32, cut uint16, align uint8) {
		sa, da := int(align&63), int(align>>2&63)
		buf := make([]byte, sa+len(data))
		p := buf[sa:]
		copy(p, data)
		want := crc32.Update(crc, castagnoli, p)
		if got := crc32k.Update(crc, p); got != want {
			t.Fatalf("Update(%#x, %d bytes at offset %d) = %#x, hash/crc32 says %#x", crc, len(p), sa, got, want)
		}
		c := int(cut) % (len(p) + 1)
		if got := crc32k.Update(crc32k.Update(crc, p[:c]), p[c:]); got != want {
			t.Fatalf("Update of %d bytes cut at %d = %#x, in one piece %#x", len(p), c, got, want)
		}
		for _, cp := range []struct {
			name string
			f    func(uint32, []byte, []byte) uint32
		}{{"CopyUpdate", crc32k.CopyUpdate}, {"CopyUpdateStream", crc32k.CopyUpdateStream}} {
			dbuf := make([]byte, da+len(p)+1)
			dbuf[da+len(p)] = 0xA5
			dst := dbuf[da : da+len(p)]
			if got := cp.f(crc, dst, p); got != want {
				t.Fatalf("%s(%#x, %d bytes, src offset %d, dst offset %d) = %#x, hash/crc32 says %#x", cp.name, crc, len(p), sa, da, got, want)
			}
			if !bytes.Equal(dst, p) || dbuf[da+len(p)] != 0xA5 {
				t.Fatalf("%s(%d bytes, src offset %d, dst offset %d): not an exact copy", cp.name, len(p), sa, da)
			}
		}
	})
}
