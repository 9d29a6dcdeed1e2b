package sig

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math/bits"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

func params(n int) *gopter.TestParameters {
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = n
	if testing.Short() {
		p.MinSuccessfulTests = max(n/10, 20)
	}
	return p
}

// testSpecs covers every family at widths from the smallest to 64 bits,
// and every CRC.
var testSpecs = []string{
	"gfd:w=6,m=1", "gfd:w=6,m=10", "gfd:w=7,m=3", "gfd:w=8,m=1", "gfd:w=8,m=2",
	"gfd:w=8,m=8", "gfd:w=12,m=5", "gfd:w=13,m=2", "gfd:w=16,m=1", "gfd:w=16,m=4", "gfd:w=17,m=3",
	"gfd:w=32,m=1", "gfd:w=32,m=2", "gfd:w=64,m=1",
	"xor-bs1:w=6,m=1", "xor-bs1:w=8,m=2", "xor-bs1:w=8,m=4", "xor-bs1:w=16,m=1", "xor-bs1:w=16,m=2",
	"xor-bs1:w=21,m=3", "xor-bs1:w=64,m=1",
	"mmm-bs1:w=6,m=5", "mmm-bs1:w=8,m=2", "mmm-bs1:w=8,m=4", "mmm-bs1:w=16,m=1", "mmm-bs1:w=16,m=2",
	"mmm-bs1:w=21,m=3", "mmm-bs1:w=32,m=2", "mmm-bs1:w=64,m=1",
	"crc16-ccitt-false", "crc16-xmodem", "crc16-arc", "crc32", "crc32-bzip2", "crc32c",
}

func mustAlg(t testing.TB, spec string) Algebra {
	t.Helper()
	a, err := ParseAlgebra(spec)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// codeGen draws codes from the whole predefined set plus arbitrary values,
// so that both real types and every residue of the reductions occur.
func codeGen() gopter.Gen {
	var codes []any
	for _, t := range basicTypes {
		codes = append(codes, t.code)
	}
	return gen.Frequency(map[int]gopter.Gen{3: gen.OneConstOf(codes...), 1: gen.UInt64()})
}

func seqGen() gopter.Gen { return gen.SliceOf(codeGen()) }

func flat(a Algebra, codes []uint64) Sig { return a.Append(a.Empty(), codes...) }

// refRepeat is n-fold Concat by doubling, sharing no code with Repeat.
func refRepeat(a Algebra, s Sig, n uint64) Sig {
	acc := a.Empty()
	for bit := bits.Len64(n) - 1; bit >= 0; bit-- {
		acc = a.Concat(acc, acc)
		if n>>bit&1 == 1 {
			acc = a.Concat(acc, s)
		}
	}
	return acc
}

func TestAlgebraLaws(t *testing.T) {
	for _, spec := range testSpecs {
		t.Run(spec, func(t *testing.T) {
			a := mustAlg(t, spec)
			props := gopter.NewProperties(params(200))
			props.Property("Theorem 1: σ(X‖Y) = σ(X)⊙σ(Y)", prop.ForAll(
				func(x, y []uint64) bool {
					return flat(a, append(append([]uint64{}, x...), y...)) == a.Concat(flat(a, x), flat(a, y))
				}, seqGen(), seqGen()))
			props.Property("Concat associates", prop.ForAll(
				func(x, y, z []uint64) bool {
					sx, sy, sz := flat(a, x), flat(a, y), flat(a, z)
					return a.Concat(a.Concat(sx, sy), sz) == a.Concat(sx, a.Concat(sy, sz))
				}, seqGen(), seqGen(), seqGen()))
			props.Property("Empty is the identity", prop.ForAll(
				func(x []uint64) bool {
					s := flat(a, x)
					return a.Concat(a.Empty(), s) == s && a.Concat(s, a.Empty()) == s && flat(a, nil) == a.Empty()
				}, seqGen()))
			props.Property("Basic is one element", prop.ForAll(
				func(c uint64) bool { return a.Basic(c) == flat(a, []uint64{c}) }, codeGen()))
			props.Property("Repeat = n-fold Concat (n ≤ 70)", prop.ForAll(
				func(x []uint64, n uint8) bool {
					s := flat(a, x)
					want := a.Empty()
					for range n % 71 {
						want = a.Concat(want, s)
					}
					return a.Repeat(s, uint64(n%71)) == want
				}, seqGen(), gen.UInt8()))
			props.Property("Repeat = Concat by doubling, any n", prop.ForAll(
				func(x []uint64, n uint64) bool {
					s := flat(a, x)
					if len(x) > 0 {
						n %= ^uint64(0) / uint64(len(x))
					}
					return a.Repeat(s, n) == refRepeat(a, s, n)
				}, seqGen(), gen.UInt64()))
			props.Property("Repeat(a, m+n) = Repeat(a, m)⊙Repeat(a, n)", prop.ForAll(
				func(x []uint64, m, n uint32) bool {
					s := flat(a, x)
					return a.Repeat(s, uint64(m)+uint64(n)) == a.Concat(a.Repeat(s, uint64(m)), a.Repeat(s, uint64(n)))
				}, seqGen(), gen.UInt32(), gen.UInt32()))
			props.Property("Repeat(Repeat(a, m), n) = Repeat(a, m·n)", prop.ForAll(
				func(x []uint64, m uint32, n uint16) bool {
					s := flat(a, x)
					return a.Repeat(a.Repeat(s, uint64(m)), uint64(n)) == a.Repeat(s, uint64(m)*uint64(n))
				}, seqGen(), gen.UInt32(), gen.UInt16()))
			props.Property("values fit in Bits", prop.ForAll(
				func(x []uint64, n uint32) bool {
					v := a.Repeat(flat(a, x), uint64(n)).Value
					return a.Bits() == 64 || v>>a.Bits() == 0
				}, seqGen(), gen.UInt32()))
			props.TestingRun(t)
		})
	}
}

// Catalogue check values, from the CRC RevEng catalogue entries cited in crc.go.
func TestCRCCheckValues(t *testing.T) {
	want := map[string]uint64{
		"crc16-ccitt-false": 0x29B1, "crc16-xmodem": 0x31C3, "crc16-arc": 0xBB3D,
		"crc32": 0xCBF43926, "crc32-bzip2": 0xFC891918, "crc32c": 0xE3069283,
	}
	for name, check := range want {
		a := mustAlg(t, name).(*crcAlg)
		if got := a.checkValue(); got != check {
			t.Errorf("%s(\"123456789\") = %#x, want %#x", name, got, check)
		}
		if a.check != check {
			t.Errorf("%s: model table says %#x", name, a.check)
		}
		// The same value assembled from parts: "12" ‖ "345"×1 ‖ "6789".
		p1 := flat(a, []uint64{'1', '2'})
		p2 := a.Repeat(flat(a, []uint64{'3', '4', '5'}), 1)
		p3 := flat(a, []uint64{'6', '7', '8', '9'})
		if got := a.Concat(a.Concat(p1, p2), p3); got.Value != check || got.Count != 9 {
			t.Errorf("%s: Concat of parts = %v", name, got)
		}
	}
}

// CRC-32 and CRC-32C against Go's hash/crc32 (hardware CRC-32C) on byte
// sequences, whole, concatenated and repeated.
func TestCRCMatchesHashCRC32(t *testing.T) {
	tables := map[string]*crc32.Table{"crc32": crc32.IEEETable, "crc32c": crc32.MakeTable(crc32.Castagnoli)}
	for name, tab := range tables {
		a := mustAlg(t, name)
		props := gopter.NewProperties(params(300))
		toCodes := func(b []byte) []uint64 {
			c := make([]uint64, len(b))
			for i, x := range b {
				c[i] = uint64(x)
			}
			return c
		}
		props.Property(name+": Concat = CRC of the concatenation", prop.ForAll(
			func(x, y []byte) bool {
				want := uint64(crc32.Checksum(append(append([]byte{}, x...), y...), tab))
				return a.Concat(flat(a, toCodes(x)), flat(a, toCodes(y))).Value == want
			}, gen.SliceOf(gen.UInt8()), gen.SliceOf(gen.UInt8())))
		props.Property(name+": Repeat = CRC of the repetition", prop.ForAll(
			func(x []byte, n uint8) bool {
				want := uint64(crc32.Checksum(bytes.Repeat(x, int(n)), tab))
				return a.Repeat(flat(a, toCodes(x)), uint64(n)).Value == want
			}, gen.SliceOf(gen.UInt8()), gen.UInt8()))
		props.TestingRun(t)
	}
}

// gfd's guarantee (see gfd.go): in signatures of n ≤ 2^w-1 elements, any
// m or fewer substituted elements change the signature; a transposition of
// two different elements d apart is missed exactly when 2^w-1 divides d.
func TestGFDDetectionGuarantee(t *testing.T) {
	for _, spec := range []string{"gfd:w=6,m=1", "gfd:w=6,m=2", "gfd:w=6,m=4", "gfd:w=7,m=3", "gfd:w=8,m=2", "gfd:w=8,m=3"} {
		g := mustAlg(t, spec).(*gfd)
		order := int(g.order)
		elem := gen.UInt64Range(1, g.order) // distinct non-zero elements, as the codes give
		props := gopter.NewProperties(params(500))
		props.Property(spec+": ≤ m substitutions are detected", prop.ForAll(
			func(seq []uint64, pos []int, delta []uint64) bool {
				if len(seq) == 0 {
					return true
				}
				seq = seq[:min(len(seq), order)]
				mod := append([]uint64{}, seq...)
				changed := map[int]bool{}
				for i := range min(len(pos), len(delta), g.m) {
					p := pos[i] % len(seq)
					if changed[p] {
						continue
					}
					changed[p] = true
					mod[p] = seq[p] ^ (delta[i]%g.order + 1) // a different element
					if mod[p] == 0 || mod[p] > g.order {
						mod[p] = seq[p]%g.order + 1
					}
				}
				if len(changed) == 0 {
					return true
				}
				return flat(g, seq) != flat(g, mod)
			}, gen.SliceOf(elem), gen.SliceOf(gen.IntRange(0, 1<<20)), gen.SliceOf(gen.UInt64())))
		props.Property(spec+": transpositions are missed only at multiples of 2^w-1", prop.ForAll(
			func(seq []uint64, i, d int) bool {
				if len(seq) < 2 {
					return true
				}
				i %= len(seq)
				j := i + d%(len(seq)-i)
				if j == i || seq[i] == seq[j] {
					return true
				}
				mod := append([]uint64{}, seq...)
				mod[i], mod[j] = mod[j], mod[i]
				same := flat(g, seq) == flat(g, mod)
				return same == ((j-i)%order == 0)
			}, gen.SliceOfN(3*order+5, elem), gen.IntRange(0, 1000), gen.IntRange(1, 1000)))
		props.TestingRun(t)
	}
}

func TestParseAlgebra(t *testing.T) {
	for _, spec := range testSpecs {
		a := mustAlg(t, spec)
		if a.String() != spec {
			t.Errorf("ParseAlgebra(%q).String() = %q", spec, a.String())
		}
		b := mustAlg(t, strings.ToUpper(spec))
		if a != b {
			t.Errorf("%q and its upper case give different algebras", spec)
		}
	}
	same := map[string]string{
		"gfd: m=2 , w=8": "gfd:w=8,m=2", "CRC-32/ISCSI": "crc32c", "crc-16/ibm-3740": "crc16-ccitt-false",
		"crc16": "crc16-ccitt-false", " crc32 ": "crc32",
	}
	for in, want := range same {
		if got := mustAlg(t, in).String(); got != want {
			t.Errorf("ParseAlgebra(%q) = %q, want %q", in, got, want)
		}
	}
	bad := map[string]string{
		"":                      "unknown algebra",
		"md5":                   "unknown algebra",
		"gfd":                   "needs w and m",
		"gfd:w=8":               "needs both",
		"gfd:w=8,m=2,w=8":       "twice",
		"gfd:w=8,m=2,z=1":       "unknown parameter",
		"gfd:w=8;m=2":           "not a number",
		"gfd:w=x,m=2":           "not a number",
		"gfd:w=33,m=1":          "out of range",
		"gfd:w=63,m=1":          "out of range",
		"gfd:w=64,m=2":          "m=1 only",
		"gfd:w=1,m=1":           "w ≥ 6",
		"gfd:w=5,m=1":           "w ≥ 6",
		"xor-bs1:w=2,m=1":       "w ≥ 6",
		"gfd:w=16,m=5":          "w·m ≤ 64",
		"gfd:w=8,m=0":           "out of range",
		"xor-bs1:w=8,m=8":       "m < w",
		"mmm-bs1:w=65,m=1":      "not a number",
		"crc32:w=8":             "no parameters",
		"gfd:w=-8,m=2":          "not a number",
		"gfd:w=8,m=":            "not a number",
		"gfd:=8":                "key=value",
		strings.Repeat("a", 65): "bytes long",
	}
	for spec, msg := range bad {
		_, err := ParseAlgebra(spec)
		if !errors.Is(err, ErrUnknownAlgebra) || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseAlgebra(%q) = %v, want an error about %q", spec, err, msg)
		}
	}
	if Default().String() != DefaultSpec {
		t.Errorf("Default() = %v", Default())
	}
}

func TestSigBinary(t *testing.T) {
	s := Sig{Value: 0x0123456789abcdef, Count: 1e12}
	b, _ := s.MarshalBinary()
	if len(b) != SigSize || b[0] != 1 {
		t.Fatalf("encoding %x", b)
	}
	var d Sig
	if err := d.UnmarshalBinary(b); err != nil || d != s {
		t.Fatalf("round trip: %v, %v", d, err)
	}
	if err := d.UnmarshalBinary(b[:16]); !errors.Is(err, ErrShortInput) {
		t.Errorf("short: %v", err)
	}
	if err := d.UnmarshalBinary(append(b, 0)); !errors.Is(err, ErrLongInput) {
		t.Errorf("long: %v", err)
	}
	b[0] = 2
	if err := d.UnmarshalBinary(b); !errors.Is(err, ErrVersion) {
		t.Errorf("version: %v", err)
	}
}

func TestCountOverflowPanics(t *testing.T) {
	a := Default()
	big := a.Repeat(a.Basic(1), 1<<62)
	for _, fn := range []func(){
		func() { a.Repeat(big, 5) },
		func() { a.Concat(a.Repeat(big, 3), a.Repeat(big, 2)) },
		func() { a.Append(a.Repeat(a.Basic(1), ^uint64(0)), 7) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic on count overflow")
				}
			}()
			fn()
		}()
	}
}
