package gf

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// Errors. ErrNotPrimitive is returned (wrapped, with the details) by New.
// ErrDivByZero and ErrLogZero are the values Div, Inv and Log panic with:
// like Go's integer division, asking for them is a bug in the caller, not
// bad data, and a recover can still tell them apart with errors.Is.
var (
	ErrNotPrimitive = errors.New("gf: polynomial is not primitive")
	ErrDivByZero    = errors.New("gf: division by zero")
	ErrLogZero      = errors.New("gf: logarithm of zero")
)

// MinW and MaxW bound the field width w of GF(2^w).
const (
	MinW = 2
	MaxW = 32
)

// DefaultPoly returns the default primitive polynomial of GF(2^w), with its
// x^w term, for MinW ≤ w ≤ MaxW, or 0 for any other w.
//
// The table is GF-Complete's (J. S. Plank et al., gf_wgen.c, gf_wgen_init),
// which is also Jerasure's: 0x11D for w = 8, 0x1100B for w = 16 and
// 0x1_0040_0007 for w = 32 among them. 0x11D is also the polynomial of
// github.com/klauspost/reedsolomon, so GF(2^8) here and there is one field.
func DefaultPoly(w uint) uint64 {
	if w < MinW || w > MaxW {
		return 0
	}
	return defaultPolys[w]
}

var defaultPolys = [MaxW + 1]uint64{
	2: 07, 3: 013, 4: 023, 5: 045, 6: 0103, 7: 0211, 8: 0435,
	9: 01021, 10: 02011, 11: 04005, 12: 010123, 13: 020033, 14: 042103,
	15: 0100003, 16: 0210013, 17: 0400011, 18: 01000201, 19: 02000047,
	20: 04000011, 21: 010000005, 22: 020000003, 23: 040000041,
	24: 0100000207, 25: 0200000011, 26: 0400000107, 27: 01000000047,
	28: 02000000011, 29: 04000000005, 30: 010040000007, 31: 020000000011,
	32: 040020000007,
}

// tableMaxW is the largest w that gets log/exp tables (1.25 MiB for
// w = 16, 80 KiB for w = 12). Above it, multiplication is a carry-less
// product reduced by byte tables (see Ring) and needs no 2^w-entry table.
const tableMaxW = 16

// Field is the finite field GF(2^w) built on a primitive polynomial p of
// degree w: elements are the integers 0 ≤ a < 2^w read as binary
// polynomials, addition is XOR, and multiplication is polynomial
// multiplication modulo p. The generator α is the polynomial x (the
// integer 2), whose powers α^0 … α^(2^w-2) are all the non-zero elements
// because p is primitive.
//
// Arguments to the methods must be field elements (less than 2^w); for
// others the methods may panic or return meaningless values.
//
// A Field is immutable and safe for concurrent use.
type Field struct {
	w     uint
	poly  uint64 // with its x^w term
	order uint64 // 2^w - 1, the order of the multiplicative group
	// small is order when the log/exp tables exist and 0 otherwise: one
	// comparison against it both checks an argument and picks the table
	// path, which keeps Exp, MulExp and Div within the inlining budget.
	small   uint64
	small32 uint32
	zlim    uint64 // order-1 with tables, else 0: Zech's fast-path bound
	recip   uint64 // ⌊(2^64-1)/order⌋, for reducing exponents without a divide

	// w ≤ tableMaxW. log[a] = n with α^n = a for a ≥ 1, and log[0] =
	// 2·order, a sentinel that lands any sum with it in the zeros at the
	// top of exp: exp[n] = α^(n mod order) for n < 2·order, then 0 up to
	// 4·order. So a·b = exp[log a + log b] for all a, b with no branch and
	// no reduction, and Mul stays within the compiler's inlining budget
	// (cost 80 of 80: the element type is uint32 so no conversion is
	// needed, which is also why the tables are not uint16).
	log []uint32
	exp []uint32
	// zech[x] = log(1 + α^x) for 0 < x < order (Zech's logarithm).
	zech []uint32

	// w > tableMaxW.
	ring   *Ring
	expTab *[4][256]uint32 // expTab[k][b] = α^(b·256^k)
	dlog   dlog
}

var defaults [MaxW + 1]struct {
	once sync.Once
	f    *Field
}

// Default returns the field GF(2^w) on DefaultPoly(w), built once per w and
// shared. It panics if w is outside [MinW, MaxW].
func Default(w uint) *Field {
	if w < MinW || w > MaxW {
		panic(fmt.Sprintf("gf: width %d out of range [%d, %d]", w, MinW, MaxW))
	}
	d := &defaults[w]
	d.once.Do(func() {
		f, err := New(w, defaultPolys[w])
		if err != nil {
			panic("gf: default polynomial rejected: " + err.Error())
		}
		d.f = f
	})
	return d.f
}

// New returns GF(2^w) on the polynomial p, for MinW ≤ w ≤ MaxW. The x^w
// term of p may be given or left implicit (GF-Complete writes the w = 32
// default as 0x400007). New refuses, with an error wrapping
// ErrNotPrimitive, a polynomial that is not primitive: one for which x does
// not generate all 2^w-1 non-zero elements.
func New(w uint, p uint64) (*Field, error) {
	if w < MinW || w > MaxW {
		return nil, fmt.Errorf("gf: width %d out of range [%d, %d]", w, MinW, MaxW)
	}
	if p>>w > 1 {
		return nil, fmt.Errorf("gf: polynomial %#x has degree above w=%d", p, w)
	}
	p |= 1 << w
	f := &Field{w: w, poly: p, order: 1<<w - 1}
	f.recip = ^uint64(0) / f.order
	if w <= tableMaxW {
		if err := f.buildTables(); err != nil {
			return nil, err
		}
		f.small, f.small32, f.zlim = f.order, uint32(f.order), f.order-1
		return f, nil
	}
	r, err := NewRing(w, p)
	if err != nil {
		return nil, err
	}
	f.ring = r
	// x generates the group iff x^order = 1 and x^(order/q) ≠ 1 for every
	// prime q dividing order (Lagrange). A reducible p fails too: its
	// quotient ring has fewer than 2^w-1 units.
	if r.XPow(f.order) != 1 {
		return nil, fmt.Errorf("%w: %#x for w=%d (x^(2^w-1) ≠ 1)", ErrNotPrimitive, p, w)
	}
	for _, pf := range factor(f.order) {
		if r.XPow(f.order/pf.q) == 1 {
			return nil, fmt.Errorf("%w: %#x for w=%d (the order of x divides (2^w-1)/%d)",
				ErrNotPrimitive, p, w, pf.q)
		}
	}
	f.expTab = new([4][256]uint32)
	for k := range 4 {
		step := uint32(r.XPow(uint64(1) << (8 * k))) // α^(256^k)
		f.expTab[k][0] = 1
		for b := 1; b < 256; b++ {
			f.expTab[k][b] = uint32(r.Mul(uint64(f.expTab[k][b-1]), uint64(step)))
		}
	}
	return f, nil
}

// buildTables fills log and exp by walking the powers of x, which also
// proves p primitive: the walk must visit 2^w-1 distinct elements before
// returning to 1.
func (f *Field) buildTables() error {
	n := f.order
	f.exp = make([]uint32, 4*n+1)
	f.log = make([]uint32, n+1)
	f.log[0] = uint32(2 * n)
	a := uint64(1)
	for i := range n {
		if i > 0 && a == 1 || a == 0 {
			return fmt.Errorf("%w: %#x for w=%d (x has order %d, not %d)",
				ErrNotPrimitive, f.poly, f.w, i, n)
		}
		f.exp[i] = uint32(a)
		f.exp[i+n] = uint32(a)
		f.log[a] = uint32(i)
		a <<= 1
		if a>>f.w&1 == 1 {
			a ^= f.poly
		}
	}
	if a != 1 {
		return fmt.Errorf("%w: %#x for w=%d", ErrNotPrimitive, f.poly, f.w)
	}
	f.zech = make([]uint32, n)
	for x := uint64(1); x < n; x++ {
		f.zech[x] = f.log[f.exp[x]^1]
	}
	return nil
}

// W returns the width w of GF(2^w).
func (f *Field) W() uint { return f.w }

// Poly returns the field polynomial with its x^w term.
func (f *Field) Poly() uint64 { return f.poly }

// Order returns 2^w - 1, the number of non-zero elements and the period of Exp.
func (f *Field) Order() uint64 { return f.order }

// Add returns a + b, which in characteristic 2 is also a - b: a XOR b.
func (f *Field) Add(a, b uint32) uint32 { return a ^ b }

// mod returns n mod order by Barrett reduction: one 64×64 multiplication
// instead of a 64-bit divide, whose latency on x86 alone is longer than a
// whole table multiplication.
func (f *Field) mod(n uint64) uint64 {
	q, _ := bits.Mul64(n, f.recip) // q ≤ ⌊n/order⌋ ≤ q+2
	r := n - q*f.order
	if r >= f.order {
		r -= f.order
	}
	if r >= f.order {
		r -= f.order
	}
	return r
}

// Mul returns a·b.
func (f *Field) Mul(a, b uint32) uint32 {
	// Small enough to inline (see the log field): for w ≤ 16 a product is
	// three loads, and a call would cost as much again.
	if f.log == nil {
		return f.mulRing(a, b)
	}
	return f.exp[f.log[a]+f.log[b]]
}

// mulRing is kept out of line so that Mul, which calls it, stays inlinable.
//
//go:noinline
func (f *Field) mulRing(a, b uint32) uint32 {
	if a == 0 || b == 0 {
		return 0
	}
	return uint32(f.ring.Mul(uint64(a), uint64(b)))
}

// Reduce returns n mod (2^w-1): exponents of α are only defined modulo
// the group order, and a reduced exponent takes the fast path of Exp and
// MulExp. It is a Barrett reduction, a multiplication instead of a divide.
func (f *Field) Reduce(n uint64) uint64 { return f.mod(n) }

// Exp returns α^n for any n ≥ 0; the powers of α repeat with period 2^w-1.
func (f *Field) Exp(n uint64) uint32 {
	if n >= f.small {
		return f.expSlow(n)
	}
	return f.exp[n]
}

//go:noinline
func (f *Field) expSlow(n uint64) uint32 {
	n = f.mod(n)
	if f.ring == nil {
		return f.exp[n]
	}
	t := f.expTab
	lo := f.ring.Mul(uint64(t[0][n&0xff]), uint64(t[1][n>>8&0xff]))
	hi := f.ring.Mul(uint64(t[2][n>>16&0xff]), uint64(t[3][n>>24&0xff]))
	return uint32(f.ring.Mul(lo, hi))
}

// MulExp returns a·α^n, one table lookup fewer than Mul(a, Exp(n)) for
// w ≤ 16. It is the step of a Horner-form checksum: shifting a checksum
// past n further elements.
func (f *Field) MulExp(a uint32, n uint64) uint32 {
	// log[0] is the sentinel 2·order, so a = 0 lands in the zeros of exp.
	if n >= f.small {
		return f.mulExpSlow(a, n)
	}
	return f.exp[uint64(f.log[a])+n]
}

//go:noinline
func (f *Field) mulExpSlow(a uint32, n uint64) uint32 {
	if a == 0 {
		return 0
	}
	if f.ring != nil {
		return f.Mul(a, f.expSlow(n))
	}
	return f.exp[uint64(f.log[a])+f.mod(n)]
}

// Log returns n in [0, 2^w-2] with α^n = a. Log(0) is undefined and panics
// with ErrLogZero. For w ≤ 16 it is a table lookup; above, it solves the
// discrete logarithm by Pohlig–Hellman over the prime factors of 2^w-1 with
// baby-step giant-step in each (microseconds for w = 32, whose largest
// factor is 65537; up to a millisecond for w = 31, where 2^31-1 is prime).
func (f *Field) Log(a uint32) uint64 {
	if a-1 >= f.small32 { // a = 0 wraps around; a out of the field; or no tables
		return f.logSlow(a)
	}
	return uint64(f.log[a])
}

//go:noinline
func (f *Field) logSlow(a uint32) uint64 {
	if a == 0 {
		panic(ErrLogZero)
	}
	if f.ring == nil {
		return uint64(f.log[a]) // out of the field: the table panics
	}
	return f.dlog.log(f, a)
}

// Inv returns the multiplicative inverse of a. Inv(0) panics with ErrDivByZero.
func (f *Field) Inv(a uint32) uint32 {
	if a == 0 {
		panic(ErrDivByZero)
	}
	if f.ring == nil {
		return f.exp[f.order-uint64(f.log[a])]
	}
	return f.euclidInv(a)
}

// Div returns a/b. Div(a, 0) panics with ErrDivByZero, whatever a is.
func (f *Field) Div(a, b uint32) uint32 {
	if b-1 >= f.small32 { // b = 0 wraps around to the slow path
		return f.divSlow(a, b)
	}
	// a = 0: the sentinel log[0] = 2·order lands in the zeros of exp.
	return f.exp[f.log[a]+f.small32-f.log[b]]
}

//go:noinline
func (f *Field) divSlow(a, b uint32) uint32 {
	if b == 0 {
		panic(ErrDivByZero)
	}
	if a == 0 {
		return 0
	}
	if f.ring == nil { // b out of the field: let the table panic on it
		return f.exp[f.log[a]+uint32(f.order)-f.log[b]]
	}
	return f.Mul(a, f.euclidInv(b))
}

// Zech returns Zech's logarithm of n: the Z with α^Z = 1 + α^n, for
// n ≢ 0 (mod 2^w-1). It turns the logarithm of a sum into one lookup, which
// is what the closed form of a geometric series needs. For n ≡ 0, 1 + α^n
// is 0 and Zech panics with ErrLogZero. A table lookup for w ≤ 16; above, a
// discrete logarithm (see Log).
func (f *Field) Zech(n uint64) uint64 {
	if n-1 >= f.zlim { // n = 0 wraps around; n ≥ order; or no tables
		return f.zechSlow(n)
	}
	return uint64(f.zech[n])
}

//go:noinline
func (f *Field) zechSlow(n uint64) uint64 {
	n = f.mod(n)
	if n == 0 {
		panic(ErrLogZero)
	}
	if f.ring == nil {
		return uint64(f.zech[n])
	}
	return f.Log(f.Exp(n) ^ 1)
}

// Pow returns a^n, with 0^0 = 1 and 0^n = 0 for n > 0.
func (f *Field) Pow(a uint32, n uint64) uint32 {
	if a == 0 {
		if n == 0 {
			return 1
		}
		return 0
	}
	n = f.mod(n) // a^(2^w-1) = 1 for every a ≠ 0
	if f.ring == nil {
		return f.exp[f.mod(uint64(f.log[a])*n)]
	}
	return uint32(f.ring.Pow(uint64(a), n))
}

// euclidInv inverts a ≠ 0 by the extended Euclidean algorithm on binary
// polynomials: it keeps s·a ≡ r (mod p) for two rows and cancels the
// leading term of the higher-degree r with a shifted copy of the other,
// until one r is 1. At most 2w steps, no table.
func (f *Field) euclidInv(a uint32) uint32 {
	r0, r1 := f.poly, uint64(a)
	s0, s1 := uint64(0), uint64(1)
	for r1 != 1 {
		d := bits.Len64(r0) - bits.Len64(r1)
		if d < 0 {
			r0, r1 = r1, r0
			s0, s1 = s1, s0
			d = -d
		}
		r0 ^= r1 << d
		s0 ^= s1 << d
		if r0 == 1 {
			return uint32(s0)
		}
	}
	return uint32(s1)
}

// primeFactor is q^e in the factorization of 2^w-1.
type primeFactor struct {
	q uint64
	e int
}

// factor returns the prime factorization of n by trial division, which for
// n < 2^32 takes at most 2^15 divisions.
func factor(n uint64) []primeFactor {
	var fs []primeFactor
	for q := uint64(2); q*q <= n; q++ {
		if q > 2 && q%2 == 0 {
			continue
		}
		e := 0
		for n%q == 0 {
			n /= q
			e++
		}
		if e > 0 {
			fs = append(fs, primeFactor{q, e})
		}
	}
	if n > 1 {
		fs = append(fs, primeFactor{n, 1})
	}
	return fs
}
