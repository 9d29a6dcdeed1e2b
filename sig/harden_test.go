package sig

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/gf"
)

// Issue 11, item 1: in gfd over GF(2^w) a run of k·(2^w-1) identical
// elements hashes to 0 whatever the element. The default algebra must tell
// a run of one type from a run of another, at the periods of every small
// field and far beyond, through O(1) repetition.
func TestDefaultRunsDoNotVanish(t *testing.T) {
	alg := Default()
	counts := []uint64{1, 255, 256, 65535, 65536, 131070, 3 * 65535, 1<<32 - 1, 1 << 32, 1<<32 + 1,
		(1<<32 - 1) * 65535, 1<<48 - 1, 1 << 48, 1<<48 + 1, 1<<62 + 12345}
	pairs := [][2]*Datatype{{Int, Float}, {Double, Long}, {Char, Byte}, {Int, Int32}, {Aint, Offset}}
	for _, n := range counts {
		for _, p := range pairs {
			a, _ := Of(alg, p[0], n)
			b, _ := Of(alg, p[1], n)
			if a == b {
				t.Errorf("%s: %d %s and %d %s have the same signature %v", alg, n, p[0].Name(), n, p[1].Name(), a)
			}
			if a.Value == 0 || b.Value == 0 {
				t.Errorf("%s: a run of %d hashes to 0", alg, n)
			}
		}
	}
	// A substitution of every other element (a member of an array of
	// structs) and of one element of a long run.
	pair := func(a, b *Datatype) *Datatype { return Must(Struct([]int64{1, 1}, []int64{0, 8}, []*Datatype{a, b})) }
	for _, n := range []uint64{65535, 1<<32 - 1, 1 << 47} {
		x, _ := Of(alg, pair(Int, Double), n)
		y, _ := Of(alg, pair(Float, Double), n)
		if x == y {
			t.Errorf("%d {int, double} = %d {float, double}", n, n)
		}
	}
}

// The CLI's reproduction: match -send-count 65535 -recv-count 65535 int float.
func TestMatchRunsOfAPeriod(t *testing.T) {
	for _, c := range []struct {
		send, recv *Datatype
		n          uint64
	}{{Int, Float, 65535}, {Double, Long, 131070}, {Int, Float, 1<<32 - 1}} {
		err := Match(Default(), c.send, c.n, c.recv, c.n, PointToPoint)
		var m *MismatchError
		if !errors.As(err, &m) || m.Index != 0 {
			t.Errorf("%d %s into %d %s: %v", c.n, c.send.Name(), c.n, c.recv.Name(), err)
		}
	}
}

// Item 2: the locator never names an element outside the shorter signature
// when the lengths are equal, and finds the true first difference even when
// its own hash collides.
func TestLocatorStaysInside(t *testing.T) {
	for _, spec := range []string{"crc32c", "crc32", "gfd:w=8,m=2", "gfd:w=16,m=4", DefaultSpec} {
		alg := mustAlg(t, spec)
		err := Match(alg, Int, 65535, Float, 65535, PointToPoint)
		var m *MismatchError
		if !errors.As(err, &m) {
			if spec == "gfd:w=16,m=4" || spec == "gfd:w=8,m=2" {
				continue // these algebras cannot see it (item 1); nothing to locate
			}
			t.Fatalf("%s: %v", spec, err)
		}
		if m.Index != 0 || m.Send.Type != Int || m.Recv.Type != Float {
			t.Errorf("%s: located at %d (%v against %v): %v", spec, m.Index, m.Send.Type, m.Recv.Type, err)
		}
		if strings.Contains(err.Error(), "no element there") {
			t.Errorf("%s: %v", spec, err)
		}
	}
}

// Item 3: below w = 6 the low w bits of the basic types' codes are not
// distinct (aint is 0 at w ≤ 5): such widths are refused.
func TestSmallWidthsRefused(t *testing.T) {
	for _, spec := range []string{"gfd:w=2,m=1", "gfd:w=4,m=2", "gfd:w=5,m=3", "xor-bs1:w=4,m=1", "mmm-bs1:w=5,m=2"} {
		_, err := ParseAlgebra(spec)
		if !errors.Is(err, ErrUnknownAlgebra) || !strings.Contains(err.Error(), "w ≥ 6") {
			t.Errorf("ParseAlgebra(%q) = %v, want a refusal that says w ≥ 6", spec, err)
		}
	}
	for _, spec := range []string{"gfd:w=6,m=1", "xor-bs1:w=6,m=1", "mmm-bs1:w=6,m=2"} {
		a := mustAlg(t, spec)
		seen := map[uint64]string{}
		for _, bt := range basicTypes {
			v := a.Basic(bt.code).Value
			if v == 0 {
				t.Errorf("%s: %s hashes to 0", spec, bt.name)
			}
			if o, dup := seen[v]; dup {
				t.Errorf("%s: %s and %s hash alike", spec, o, bt.name)
			}
			seen[v] = bt.name
		}
	}
}

// The locator's own hash is made to collide (gfd:w=16,m=1 forgets runs of
// 65535): the answer is still the true first difference, by the exact walk.
func TestLocatorFallsBackOnCollision(t *testing.T) {
	weak := mustAlg(t, "gfd:w=16,m=1")
	seq := func(ts ...*Datatype) *Datatype {
		bl, ds := make([]int64, len(ts)), make([]int64, len(ts))
		var off int64
		for i, x := range ts {
			bl[i], ds[i] = 1, off
			off += x.Size()
		}
		return Must(Struct(bl, ds, ts))
	}
	run := func(x *Datatype, n int64) *Datatype { return Must(Contiguous(n, x)) }
	cases := []struct {
		send, recv *Datatype
		want       int64
	}{
		// Equal lengths, every prefix equal in the weak hash.
		{run(Int, 65535), run(Float, 65535), 0},
		// The weak search lands on a differing pair of elements (65536) that
		// is not the first: the CRC-32C check of the prefix catches it.
		{seq(run(Int, 65535), Char, Double), seq(run(Float, 65535), Char, Float), 0},
		// A difference after a vanishing run of equal elements.
		{seq(run(Int, 70000), Char, run(Int, 65535)), seq(run(Int, 70000), Short, run(Float, 65535)), 70000},
		{seq(run(Double, 3), run(Int, 65535), Char), seq(run(Double, 3), run(Float, 65535), Char), 3},
	}
	for i, c := range cases {
		st, _ := NewStamp(mustAlg(t, "crc32c"), c.send, 1)
		err := st.Check(mustAlg(t, "crc32c"), c.recv, 1, Collective)
		var m *MismatchError
		if !errors.As(err, &m) {
			t.Fatalf("case %d: crc32c sees no mismatch: %v", i, err)
		}
		locateWith(weak, m, c.send, 1, c.recv, 1)
		if m.Index != c.want || m.Send.Type == m.Recv.Type {
			t.Errorf("case %d: located at %d (%v, %v), want %d", i, m.Index, m.Send.Type, m.Recv.Type, c.want)
		}
		if got := firstDifference(c.send, 1, c.recv, 1); got != uint64(c.want) {
			t.Errorf("case %d: firstDifference = %d, want %d", i, got, c.want)
		}
	}
	// One side a prefix of the other: the end of the shorter.
	if got := firstDifference(run(Int, 10), 1, run(Int, 4), 3); got != 10 {
		t.Errorf("prefix: %d", got)
	}
}

// The guarantee proved at gfd64, drawn at random: t replaced by u at s, s+L,
// …, s+(k-1)L in a signature of up to 2^63 elements, built through Concat
// and Repeat (each copy of the unit is t or u then L-1 filler elements).
func TestDefaultSubstitutionGuarantee(t *testing.T) {
	alg := Default()
	codes := make([]uint64, len(basicTypes))
	for i, bt := range basicTypes {
		codes[i] = bt.code
	}
	props := gopter.NewProperties(params(2000))
	props.Property("a substitution over an arithmetic progression is seen", prop.ForAll(
		func(ti, ui, fi uint8, pre, post []uint64, lbits, kbits uint8, lr, kr uint64) bool {
			tc, uc, fc := codes[int(ti)%len(codes)], codes[int(ui)%len(codes)], codes[int(fi)%len(codes)]
			if tc == uc {
				return true
			}
			L := lr>>(64-1-lbits%31) + 1 // 1 … 2^31
			k := kr>>(64-1-kbits%31) + 1 // 1 … 2^31: L·k < 2^62
			unit := func(c uint64) Sig { return alg.Concat(alg.Basic(c), alg.Repeat(alg.Basic(fc), L-1)) }
			build := func(c uint64) Sig {
				body := alg.Repeat(unit(c), k)
				return alg.Concat(alg.Concat(flat(alg, pre), body), flat(alg, post))
			}
			return build(tc) != build(uc)
		},
		gen.UInt8(), gen.UInt8(), gen.UInt8(), seqGen(), seqGen(), gen.UInt8(), gen.UInt8(), gen.UInt64(), gen.UInt64()))
	props.TestingRun(t)
}

func TestInvAlphaPlus1(t *testing.T) {
	if gf.Mul64(3, invAlphaPlus1) != 1 || gf.Inv64(3) != invAlphaPlus1 {
		t.Errorf("1/(α+1) is %#x, not %#x", gf.Inv64(3), uint64(invAlphaPlus1))
	}
}

// What Describe (and sigcheck sig -list) says of vanishing runs is true:
// at the length, and at twice it, int, float and double runs collide; for
// gfd it is the shortest such length.
func TestDescribe(t *testing.T) {
	for _, spec := range append(slices.Clone(testSpecs), QualitySpecs...) {
		alg := mustAlg(t, spec)
		d := Describe(alg)
		if d.Cost == "" || d.Guarantee == "" || d.Algebra != alg.String() || d.Bits != alg.Bits() {
			t.Errorf("%s: %+v", spec, d)
		}
		alike := func(n uint64) bool {
			x, _ := Of(alg, Int, n)
			y, _ := Of(alg, Float, n)
			z, _ := Of(alg, Double, n)
			return x == y && y == z
		}
		v := d.VanishingRun
		if v == 0 {
			for _, n := range []uint64{65535, 65534, 1<<32 - 1, 1<<32 - 2, 1 << 48, 1 << 63} {
				if alike(n) {
					t.Errorf("%s: runs of %d vanish, Describe says none do", spec, n)
				}
			}
			continue
		}
		if !alike(v) || !alike(2*v) {
			t.Errorf("%s: runs of %d do not vanish", spec, v)
		}
		if _, ok := alg.(*gfd); ok && alike(v-1) {
			t.Errorf("%s: runs of %d vanish already", spec, v-1)
		}
	}
}

// A CRC detects one substituted element at any length (a burst ≤ 8 bits).
func TestCRCSingleSubstitution(t *testing.T) {
	props := gopter.NewProperties(params(300))
	for _, spec := range CRCNames() {
		alg := mustAlg(t, spec)
		props.Property(spec+": one substitution in a long run", prop.ForAll(
			func(ti, ui uint8, a, b uint64) bool {
				tc, uc := basicTypes[int(ti)%len(basicTypes)], basicTypes[int(ui)%len(basicTypes)]
				if tc == uc {
					return true
				}
				run := alg.Repeat(alg.Basic(Double.code), a>>20)
				tail := alg.Repeat(alg.Basic(Double.code), b>>20)
				return alg.Concat(alg.Concat(run, alg.Basic(tc.code)), tail) != alg.Concat(alg.Concat(run, alg.Basic(uc.code)), tail)
			}, gen.UInt8(), gen.UInt8(), gen.UInt64(), gen.UInt64()))
	}
	props.TestingRun(t)
}

// invGeometric's cache gives what the inversion gives, for lengths that
// share a slot and under concurrent use.
func TestInvGeometricCache(t *testing.T) {
	done := make(chan bool)
	for g := range 4 {
		go func() {
			ok := true
			for i := range uint64(3000) {
				l := i*uint64(g+1)*1e9 + 2
				ok = ok && invGeometric(l) == gf.Inv64(gf.Exp64(l)^1)
			}
			done <- ok
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("cached 1/(α^l+1) differs from the inversion")
		}
	}
}
