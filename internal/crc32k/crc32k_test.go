package crc32k

import (
	"bytes"
	"hash/crc32"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// xnmod is x^n mod P, P the Castagnoli polynomial 0x1EDC6F41 (normal
// form), by shifting and reducing one bit at a time, in the kernel's form:
// the coefficient of x^(31−j) in bit j.
func xnmod(n int) uint64 {
	r := uint32(1)
	for range n {
		c := r >> 31
		r <<= 1
		if c != 0 {
			r ^= 0x1EDC6F41
		}
	}
	return uint64(bits.Reverse32(r))
}

// TestConsts recomputes the kernel's folding constants (see consts.go).
func TestConsts(t *testing.T) {
	var want [kernelConstWords]uint64
	for i, f := range []int{2048, 1536, 1024, 512, 384, 256, 128} {
		want[2*i], want[2*i+1] = xnmod(f+31), xnmod(f-33)
	}
	if kernelConsts != want {
		t.Fatalf("kernelConsts = %#x, recomputed %#x", kernelConsts, want)
	}
}

// clmul is the carry-less product of a and b, the reference of
// VPCLMULQDQ.
func clmul(a, b uint64) (lo, hi uint64) {
	for i := range 64 {
		if b>>i&1 != 0 {
			lo ^= a << i
			if i > 0 {
				hi ^= a >> (64 - i)
			}
		}
	}
	return lo, hi
}

// TestFoldMath checks the folding identity of the package doc in plain Go,
// apart from the assembly: a 16-byte lane folded F bits on with
// (x^(F+31), x^(F−33)) and xored into the 16 bytes there leaves the CRC of
// the message unchanged, for every F the kernel uses.
func TestFoldMath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range []int{128, 256, 384, 512, 1024, 1536, 2048} {
		for range 100 {
			msg := make([]byte, f/8+16+rng.IntN(40))
			for i := range msg {
				msg[i] = byte(rng.Uint32())
			}
			a, b := leU64(msg[0:]), leU64(msg[8:])
			lo1, hi1 := clmul(a, xnmod(f+31))
			lo2, hi2 := clmul(b, xnmod(f-33))
			folded := bytes.Clone(msg[16:])
			off := f/8 - 16
			putLEU64(folded[off:], leU64(folded[off:])^lo1^lo2)
			putLEU64(folded[off+8:], leU64(folded[off+8:])^hi1^hi2)
			// From a zero register (crc32.Update complements its argument),
			// the CRC is the message times x^32 mod P, which folding keeps.
			if got, want := crc32.Update(^uint32(0), table, folded), crc32.Update(^uint32(0), table, msg); got != want {
				t.Fatalf("F = %d: folded CRC %#x, message's %#x", f, got, want)
			}
		}
	}
}

func leU64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func putLEU64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

// paths runs f with the kernel, where there is one, and with the portable
// path.
func paths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := useKernel
	defer func() { useKernel = saved }()
	if Available {
		useKernel = true
		t.Run("kernel", f)
	} else {
		t.Log("no VPCLMULQDQ kernel on this CPU: portable path only")
	}
	useKernel = false
	t.Run("portable", f)
}

func randomBytes(rng *rand.Rand, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

// TestKnownAnswers: the CRC RevEng catalogue's check value for
// CRC-32/ISCSI and the CRC-32C examples of RFC 3720, appendix B.4.
func TestKnownAnswers(t *testing.T) {
	inc, dec := make([]byte, 32), make([]byte, 32)
	for i := range 32 {
		inc[i], dec[i] = byte(i), byte(31-i)
	}
	cases := []struct {
		in   []byte
		want uint32
	}{
		{[]byte("123456789"), 0xE3069283},
		{make([]byte, 32), 0x8A9136AA},
		{bytes.Repeat([]byte{0xFF}, 32), 0x62A8AB43},
		{inc, 0x46DD794E},
		{dec, 0x113FDB5C},
	}
	paths(t, func(t *testing.T) {
		for _, c := range cases {
			if got := Checksum(c.in); got != c.want {
				t.Errorf("Checksum(% x) = %#08x, want %#08x", c.in, got, c.want)
			}
		}
	})
}

// TestEveryLength checks Update against hash/crc32 at every length from 0
// to 4 KiB, at every alignment modulo 64 for a share of them, from random
// registers.
func TestEveryLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	buf := randomBytes(rng, 4096+64)
	paths(t, func(t *testing.T) {
		for n := 0; n <= 4096; n++ {
			aligns := []int{0, 1 + n%63}
			if n%97 == 0 || n < 300 {
				aligns = aligns[:0]
				for a := range 64 {
					aligns = append(aligns, a)
				}
			}
			for _, a := range aligns {
				p := buf[a : a+n]
				crc := rng.Uint32()
				if got, want := Update(crc, p), crc32.Update(crc, table, p); got != want {
					t.Fatalf("Update(%#x, %d bytes at offset %d) = %#x, hash/crc32 says %#x", crc, n, a, got, want)
				}
			}
		}
	})
}

// TestRandomLengths: lengths up to 1 MiB, random offsets and registers.
func TestRandomLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	buf := randomBytes(rng, 1<<20+64)
	paths(t, func(t *testing.T) {
		for range 300 {
			n := rng.IntN(1 << 20)
			if rng.IntN(2) == 0 {
				n = rng.IntN(64 << 10)
			}
			a := rng.IntN(64)
			p := buf[a : a+n]
			crc := rng.Uint32()
			if got, want := Update(crc, p), crc32.Update(crc, table, p); got != want {
				t.Fatalf("Update(%#x, %d bytes at offset %d) = %#x, hash/crc32 says %#x", crc, n, a, got, want)
			}
		}
	})
}

// TestUpdateSplits: the CRC of p written in two pieces, split anywhere, is
// its CRC in one; and the kernel agrees with the portable path.
func TestUpdateSplits(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(1)
	params.MinSuccessfulTests = 500
	props := gopter.NewProperties(params)
	props.Property("Update(Update(c, a), b) = Update(c, a‖b)", prop.ForAll(
		func(c uint32, p []byte, cut int) bool {
			cut %= len(p) + 1
			return Update(Update(c, p[:cut]), p[cut:]) == Update(c, p)
		},
		gen.UInt32(), gen.SliceOf(gen.UInt8()).Map(func(p []byte) []byte {
			return bytes.Repeat(p, 1+2000/(len(p)+1)) // long enough for the kernel
		}), gen.IntRange(0, 1<<20),
	))
	props.Property("kernel = portable", prop.ForAll(
		func(c uint32, p []byte) bool {
			k := Update(c, p)
			saved := useKernel
			useKernel = false
			defer func() { useKernel = saved }()
			return k == Update(c, p)
		},
		gen.UInt32(), gen.SliceOf(gen.UInt8()).Map(func(p []byte) []byte {
			return bytes.Repeat(p, 1+5000/(len(p)+1))
		}),
	))
	props.TestingRun(t)
}

// TestDigest: New streams to Checksum's value and appends it big-endian,
// as hash/crc32's digest does.
func TestDigest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	p := randomBytes(rng, 100000)
	h, ref := New(), crc32.New(table)
	for off := 0; off < len(p); {
		n := min(rng.IntN(5000), len(p)-off)
		h.Write(p[off : off+n])
		ref.Write(p[off : off+n])
		off += n
	}
	if h.Sum32() != Checksum(p) || !bytes.Equal(h.Sum([]byte{9}), ref.Sum([]byte{9})) {
		t.Fatalf("streamed %#x (Sum % x), one-shot %#x, hash/crc32 % x", h.Sum32(), h.Sum(nil), Checksum(p), ref.Sum(nil))
	}
	if h.Size() != 4 || h.BlockSize() != 1 {
		t.Fatalf("Size %d BlockSize %d", h.Size(), h.BlockSize())
	}
	h.Reset()
	if h.Sum32() != 0 {
		t.Fatalf("after Reset: %#x", h.Sum32())
	}
}
