package crc32k

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// copiers are the two fused copies, under their names.
var copiers = []struct {
	name string
	f    func(crc uint32, dst, src []byte) uint32
}{{"CopyUpdate", CopyUpdate}, {"CopyUpdateStream", CopyUpdateStream}}

// checkCopy runs a fused copy of src into dst and checks its CRC against
// hash/crc32's, that dst[:len(src)] holds src, and that the byte after
// it (guard) is untouched.
func checkCopy(t *testing.T, name string, f func(uint32, []byte, []byte) uint32, crc uint32, dst, src []byte, where string) {
	t.Helper()
	want := crc32.Update(crc, table, src)
	wantDst := bytes.Clone(src)
	guard := append([]byte(nil), dst[len(src):]...)
	got := f(crc, dst, src)
	if got != want {
		t.Fatalf("%s(%#x, %s) = %#x, hash/crc32 says %#x", name, crc, where, got, want)
	}
	if !bytes.Equal(dst[:len(src)], wantDst) {
		t.Fatalf("%s(%s): dst is not a copy of src", name, where)
	}
	if !bytes.Equal(dst[len(src):], guard) {
		t.Fatalf("%s(%s): wrote past len(src)", name, where)
	}
}

// TestCopyEveryLength: both fused copies at every length 0–4 KiB, with
// source and destination at independent alignments, kernel and portable.
func TestCopyEveryLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	src := randomBytes(rng, 4096+64)
	dst := make([]byte, 4096+128)
	paths(t, func(t *testing.T) {
		for _, c := range copiers {
			for n := 0; n <= 4096; n++ {
				sa, da := rng.IntN(64), rng.IntN(64)
				if n%61 == 0 {
					sa, da = 0, 0
				}
				checkCopy(t, c.name, c.f, rng.Uint32(), dst[da:da+n+1], src[sa:sa+n], "")
			}
		}
	})
}

// TestCopyRandom: lengths to 3 MiB, random alignments and registers, and
// the property that a fused copy is a copy followed by Update.
func TestCopyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	src := randomBytes(rng, 3<<20+64)
	dst := make([]byte, 3<<20+128)
	paths(t, func(t *testing.T) {
		for _, c := range copiers {
			for range 60 {
				n, sa, da := rng.IntN(3<<20), rng.IntN(64), rng.IntN(64)
				checkCopy(t, c.name, c.f, rng.Uint32(), dst[da:da+n+1], src[sa:sa+n], "")
			}
		}
		params := gopter.DefaultTestParametersWithSeed(2)
		params.MinSuccessfulTests = 300
		props := gopter.NewProperties(params)
		for _, c := range copiers {
			props.Property(c.name+" = copy, then Update", prop.ForAll(
				func(crc uint32, p []byte, da int) bool {
					d1, d2 := make([]byte, len(p)+da), make([]byte, len(p))
					copy(d2, p)
					return c.f(crc, d1[da:], p) == Update(crc, d2) && bytes.Equal(d1[da:], d2)
				},
				gen.UInt32(), gen.SliceOf(gen.UInt8()).Map(func(p []byte) []byte {
					return bytes.Repeat(p, 1+3000/(len(p)+1))
				}), gen.IntRange(0, 63),
			))
		}
		props.TestingRun(t)
	})
}

// TestCopyOverlap: when dst and src overlap, the fused copies do what copy
// does, and return the CRC of what src held.
func TestCopyOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	orig := randomBytes(rng, 100000)
	paths(t, func(t *testing.T) {
		for _, c := range copiers {
			for _, sh := range [][2]int{{-300, 5000}, {-64, 5000}, {-1, 5000}, {0, 5000}, {1, 5000}, {64, 5000}, {300, 5000}, {1, 40000}, {-1, 40000}, {20000, 40000}} {
				shift, n := sh[0], sh[1]
				buf := bytes.Clone(orig)
				so, do := 30000, 30000+shift
				want := bytes.Clone(buf)
				copy(want[do:do+n], want[so:so+n])
				wantCRC := crc32.Update(7, table, buf[so:so+n])
				if got := c.f(7, buf[do:do+n], buf[so:so+n]); got != wantCRC {
					t.Fatalf("%s, dst %+d bytes from src: CRC %#x, want %#x", c.name, shift, got, wantCRC)
				}
				if !bytes.Equal(buf, want) {
					t.Fatalf("%s, dst %+d bytes from src: the buffer differs from copy's", c.name, shift)
				}
			}
		}
	})
}

// TestCopyShortDst: a destination shorter than the source is the caller's
// mistake, and panics rather than copying part.
func TestCopyShortDst(t *testing.T) {
	for _, c := range copiers {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with a short dst did not panic", c.name)
				}
			}()
			c.f(0, make([]byte, 10), make([]byte, 11))
		}()
	}
}
