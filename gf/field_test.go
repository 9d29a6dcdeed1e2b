package gf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/reedsolomon"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// refMulMod is the schoolbook product of a and b modulo p (degree w, x^w
// term included for w < 64): shift, and subtract p whenever the degree
// reaches w. It shares no code with Ring or the tables.
func refMulMod(a, b uint64, w uint, p uint64) uint64 {
	var acc uint64
	for i := int(w) - 1; i >= 0; i-- {
		top := acc >> (w - 1) & 1
		acc <<= 1
		if w < 64 {
			acc &= 1<<w - 1
		}
		if top == 1 {
			acc ^= p & (^uint64(0) >> (64 - w))
		}
		if b>>i&1 == 1 {
			acc ^= a
		}
	}
	return acc
}

func params(t *testing.T, n int) *gopter.TestParameters {
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = n
	if testing.Short() {
		p.MinSuccessfulTests = max(n/10, 20)
	}
	return p
}

func allWidths() []uint {
	var ws []uint
	for w := uint(MinW); w <= MaxW; w++ {
		ws = append(ws, w)
	}
	return ws
}

func TestDefaultPolynomialsArePrimitive(t *testing.T) {
	for _, w := range allWidths() {
		f, err := New(w, DefaultPoly(w))
		if err != nil {
			t.Fatalf("w=%d: %v", w, err)
		}
		if f.Poly() != DefaultPoly(w) || f.W() != w || f.Order() != 1<<w-1 {
			t.Fatalf("w=%d: got poly %#x w %d order %d", w, f.Poly(), f.W(), f.Order())
		}
	}
	// The values the issue and GF-Complete's documentation name.
	for w, p := range map[uint]uint64{8: 0x11D, 16: 0x1100B, 32: 0x1_0040_0007} {
		if DefaultPoly(w) != p {
			t.Errorf("DefaultPoly(%d) = %#x, want %#x", w, DefaultPoly(w), p)
		}
	}
	if DefaultPoly(1) != 0 || DefaultPoly(33) != 0 {
		t.Error("DefaultPoly outside [2, 32] is not 0")
	}
}

func TestImplicitLeadingTerm(t *testing.T) {
	f, err := New(32, 0x400007) // GF-Complete's spelling of the w=32 default
	if err != nil {
		t.Fatal(err)
	}
	if f.Poly() != 0x1_0040_0007 {
		t.Fatalf("poly %#x", f.Poly())
	}
	g, err := New(8, 0x1D)
	if err != nil || g.Poly() != 0x11D {
		t.Fatalf("New(8, 0x1D) = %v, %v", g, err)
	}
}

func TestRejectsNonPrimitive(t *testing.T) {
	cases := []struct {
		w    uint
		p    uint64
		why  string
		prim bool
	}{
		{4, 0x1F, "x^4+x^3+x^2+x+1 is irreducible but x has order 5", false},
		{8, 0x11B, "the AES polynomial is irreducible but not primitive", false},
		{8, 0x101, "x^8+1 = (x+1)^8", false},
		{8, 0x100, "x^8: x is nilpotent", false},
		{16, 0x10001, "x^16+1 is reducible", false},
		{20, 0x100000, "x^20: x is nilpotent", false},
		{32, 0x1_0000_0001, "x^32+1 is reducible", false},
		{32, 0x1_0000_008D, "x^32+x^7+x^3+x^2+1: x has order (2^32-1)/3", false},
		{32, 0x1_1EDC_6F41, "CRC-32C's generator: x has order 2^31-1", false},
		{2, 0x7, "x^2+x+1", true},
	}
	for _, c := range cases {
		_, err := New(c.w, c.p)
		if c.prim {
			if err != nil {
				t.Errorf("w=%d p=%#x (%s): %v", c.w, c.p, c.why, err)
			}
			continue
		}
		if !errors.Is(err, ErrNotPrimitive) {
			t.Errorf("w=%d p=%#x (%s): err = %v, want ErrNotPrimitive", c.w, c.p, c.why, err)
		}
	}
	for _, c := range []struct {
		w uint
		p uint64
	}{{1, 3}, {33, 1 << 33}, {8, 0x21D}, {0, 0}} {
		if _, err := New(c.w, c.p); err == nil || errors.Is(err, ErrNotPrimitive) {
			t.Errorf("New(%d, %#x) = %v, want a range error", c.w, c.p, err)
		}
	}
}

// Every primitive polynomial of degree 8 is accepted and every other one
// refused: there are φ(255)/8 = 16 of them.
func TestPrimitiveCountW8(t *testing.T) {
	n := 0
	for p := uint64(0x100); p < 0x200; p++ {
		if _, err := New(8, p); err == nil {
			n++
		}
	}
	if n != 16 {
		t.Fatalf("%d primitive polynomials of degree 8 accepted, want 16", n)
	}
}

// The first powers of α in GF(2^8)/0x11D, as in every QR-code and
// Reed–Solomon antilog table for this polynomial (ISO/IEC 18004 annex).
// For 17 ≤ w ≤ 20, where walking the powers of x is still quick, New's
// verdict (built on the factorization of 2^w-1) agrees with the walk.
func TestPrimitivityAgreesWithWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for w := uint(17); w <= 20; w++ {
		for i := range 12 {
			p := rng.Uint64()&(1<<w-1) | 1<<w | 1
			if i == 0 {
				p = DefaultPoly(w)
			}
			a, steps := uint64(1), uint64(0)
			for {
				a <<= 1
				if a>>w&1 == 1 {
					a ^= p
				}
				steps++
				if a == 1 || a == 0 || steps > 1<<w {
					break
				}
			}
			walk := a == 1 && steps == 1<<w-1
			_, err := New(w, p)
			if (err == nil) != walk {
				t.Fatalf("w=%d p=%#x: New says %v, the walk says primitive=%v", w, p, err, walk)
			}
		}
	}
}

func TestKnownPowersW8(t *testing.T) {
	want := []uint32{1, 2, 4, 8, 16, 32, 64, 128, 29, 58, 116, 232, 205, 135, 19, 38,
		76, 152, 45, 90, 180, 117, 234, 201, 143, 3, 6, 12, 24, 48, 96, 192}
	f := Default(8)
	for n, v := range want {
		if got := f.Exp(uint64(n)); got != v {
			t.Errorf("α^%d = %d, want %d", n, got, v)
		}
	}
}

// Exhaustive products for every w ≤ 8 against the schoolbook product, and
// GF(2^8) inverses against reedsolomon's own table.
func TestMulExhaustiveSmall(t *testing.T) {
	for w := uint(MinW); w <= 8; w++ {
		f := Default(w)
		for a := uint32(0); a <= uint32(f.Order()); a++ {
			for b := uint32(0); b <= uint32(f.Order()); b++ {
				want := uint32(refMulMod(uint64(a), uint64(b), w, f.Poly()))
				if got := f.Mul(a, b); got != want {
					t.Fatalf("w=%d: %d·%d = %d, want %d", w, a, b, got, want)
				}
			}
		}
	}
	f := Default(8)
	for a := 1; a < 256; a++ {
		if got, want := f.Inv(uint32(a)), uint32(reedsolomon.Inv(byte(a))); got != want {
			t.Fatalf("Inv(%d) = %d, reedsolomon says %d", a, got, want)
		}
	}
}

func TestMulMatchesReferenceAllWidths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, w := range allWidths() {
		f := Default(w)
		for range 20000 {
			a := uint32(rng.Uint64() & f.Order())
			b := uint32(rng.Uint64() & f.Order())
			want := uint32(refMulMod(uint64(a), uint64(b), w, f.Poly()))
			if got := f.Mul(a, b); got != want {
				t.Fatalf("w=%d: %#x·%#x = %#x, want %#x", w, a, b, got, want)
			}
		}
	}
}

// fieldAxioms checks the laws of a field, and how Exp, Log, Pow, Div and
// MulExp relate to Mul, with random elements of f.
func fieldAxioms(t *testing.T, f *Field) {
	el := gen.UInt32Range(0, uint32(f.Order()))
	nz := gen.UInt32Range(1, uint32(f.Order()))
	n := gen.UInt64()
	props := gopter.NewProperties(params(t, 300))
	props.Property("+ is XOR, self-inverse", prop.ForAll(
		func(a, b uint32) bool { return f.Add(a, b) == a^b && f.Add(f.Add(a, b), b) == a }, el, el))
	props.Property("· commutes", prop.ForAll(
		func(a, b uint32) bool { return f.Mul(a, b) == f.Mul(b, a) }, el, el))
	props.Property("· associates", prop.ForAll(
		func(a, b, c uint32) bool { return f.Mul(f.Mul(a, b), c) == f.Mul(a, f.Mul(b, c)) }, el, el, el))
	props.Property("· distributes over +", prop.ForAll(
		func(a, b, c uint32) bool { return f.Mul(a, b^c) == f.Mul(a, b)^f.Mul(a, c) }, el, el, el))
	props.Property("1 is the identity, 0 absorbs", prop.ForAll(
		func(a uint32) bool { return f.Mul(a, 1) == a && f.Mul(a, 0) == 0 && f.Mul(0, a) == 0 }, el))
	props.Property("a·a⁻¹ = 1", prop.ForAll(
		func(a uint32) bool { return f.Mul(a, f.Inv(a)) == 1 }, nz))
	props.Property("α^Zech(n) = 1 + α^n", prop.ForAll(
		func(n uint64) bool {
			if n%f.Order() == 0 {
				return true
			}
			return f.Exp(f.Zech(n)) == 1^f.Exp(n)
		}, gen.OneGenOf(gen.UInt64(), gen.UInt64Range(1, 3), gen.Const(f.Order()+1))))
	props.Property("(a/b)·b = a", prop.ForAll(
		func(a, b uint32) bool { return f.Mul(f.Div(a, b), b) == a }, el, nz))
	props.Property("α^(m+n) = α^m·α^n, for any m, n", prop.ForAll(
		func(m, k uint64) bool {
			s := m + k
			if s < m { // the sum wrapped: compare with the exponents reduced
				m, k = m%f.Order(), k%f.Order()
				s = m + k
			}
			return f.Exp(s) == f.Mul(f.Exp(m), f.Exp(k))
		}, n, n))
	props.Property("Exp has period 2^w-1", prop.ForAll(
		func(m uint64) bool {
			m >>= 1
			return f.Exp(m) == f.Exp(m+f.Order()) && f.Exp(m) == f.Exp(m%f.Order())
		}, n))
	props.Property("Exp(Log a) = a", prop.ForAll(
		func(a uint32) bool { return f.Exp(f.Log(a)) == a && f.Log(a) < f.Order() }, nz))
	props.Property("a·α^n = MulExp(a, n)", prop.ForAll(
		func(a uint32, m uint64) bool { return f.MulExp(a, m) == f.Mul(a, f.Exp(m)) }, el, n))
	props.Property("Pow(a, n) is repeated multiplication", prop.ForAll(
		func(a uint32, k uint8) bool {
			want := uint32(1)
			for range k {
				want = f.Mul(want, a)
			}
			return f.Pow(a, uint64(k)) == want
		}, el, gen.UInt8()))
	props.Property("Pow(a, n) = α^(n·log a)", prop.ForAll(
		func(a uint32, m uint64) bool {
			e := mulMod(f.Log(a), m%f.Order(), f.Order())
			return f.Pow(a, m) == f.Exp(e)
		}, nz, n))
	props.TestingRun(t)
}

func TestFieldAxioms(t *testing.T) {
	for _, w := range []uint{2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 20, 24, 29, 31, 32} {
		t.Run(fmt.Sprintf("w=%d", w), func(t *testing.T) { fieldAxioms(t, Default(w)) })
	}
}

// A field on a non-default polynomial is a different field: the same
// axioms, and products that differ from the default field's.
func TestOtherPolynomial(t *testing.T) {
	f, err := New(8, 0x12B) // x^8+x^5+x^3+x+1, primitive
	if err != nil {
		t.Fatal(err)
	}
	fieldAxioms(t, f)
	if f.Mul(0x80, 2) == Default(8).Mul(0x80, 2) {
		t.Fatal("0x12B and 0x11D reduce x^8 alike")
	}
	// CRC-32's generator is primitive (a walk of x's powers returns to 1
	// after exactly 2^32-1 steps, checked once outside the suite).
	g, err := New(32, 0x1_04C1_1DB7)
	if err != nil {
		t.Fatal(err)
	}
	fieldAxioms(t, g)
}

func TestLogExhaustiveW16(t *testing.T) {
	f := Default(16)
	seen := make([]bool, f.Order())
	for a := uint32(1); a <= uint32(f.Order()); a++ {
		l := f.Log(a)
		if seen[l] {
			t.Fatalf("Log(%d) = %d repeats", a, l)
		}
		seen[l] = true
		if f.Exp(l) != a {
			t.Fatalf("Exp(Log(%d)) = %d", a, f.Exp(l))
		}
	}
}

func TestLogLargeFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, w := range []uint{17, 19, 23, 28, 31, 32} {
		f := Default(w)
		for range 50 {
			n := rng.Uint64() % f.Order()
			if got := f.Log(f.Exp(n)); got != n {
				t.Fatalf("w=%d: Log(α^%d) = %d", w, n, got)
			}
		}
		if f.Log(1) != 0 || f.Log(2) != 1 {
			t.Fatalf("w=%d: Log(1) = %d, Log(α) = %d", w, f.Log(1), f.Log(2))
		}
	}
}

func TestZeroBehaviour(t *testing.T) {
	for _, w := range []uint{4, 8, 16, 32} {
		f := Default(w)
		mustPanic(t, ErrDivByZero, func() { f.Div(5&uint32(f.Order()), 0) })
		mustPanic(t, ErrDivByZero, func() { f.Div(0, 0) })
		mustPanic(t, ErrDivByZero, func() { f.Inv(0) })
		mustPanic(t, ErrLogZero, func() { f.Zech(0) })
		mustPanic(t, ErrLogZero, func() { f.Zech(f.Order()) })
		mustPanic(t, ErrLogZero, func() { f.Log(0) })
		if f.Div(0, 3) != 0 {
			t.Errorf("w=%d: 0/3 ≠ 0", w)
		}
		if f.Pow(0, 0) != 1 || f.Pow(0, 5) != 0 || f.Pow(7, 0) != 1 {
			t.Errorf("w=%d: Pow(0,0)=%d Pow(0,5)=%d Pow(7,0)=%d", w, f.Pow(0, 0), f.Pow(0, 5), f.Pow(7, 0))
		}
		if f.MulExp(0, 12345) != 0 {
			t.Errorf("w=%d: MulExp(0, n) ≠ 0", w)
		}
	}
	mustPanicAny(t, func() { Default(1) })
	mustPanicAny(t, func() { Default(33) })
}

func mustPanic(t *testing.T, want error, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, want) {
			t.Errorf("panic value %v, want %v", r, want)
		}
	}()
	fn()
}

func mustPanicAny(t *testing.T, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	fn()
}

func TestFactor(t *testing.T) {
	for _, w := range allWidths() {
		n := uint64(1)<<w - 1
		prod := uint64(1)
		for _, pf := range factor(n) {
			for range pf.e {
				prod *= pf.q
			}
			for d := uint64(2); d*d <= pf.q; d++ {
				if pf.q%d == 0 {
					t.Fatalf("2^%d-1: factor %d is not prime", w, pf.q)
				}
			}
		}
		if prod != n {
			t.Fatalf("2^%d-1: factors multiply to %d", w, prod)
		}
	}
}
