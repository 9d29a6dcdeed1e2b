package sig

import (
	"fmt"
	"math/bits"
)

// The "bs1" algebras multiply by a rotation: Gropp's xor-bs1 (XOR and
// rotate left by one bit, Langou et al. §3.3) and mmm-bs1 (addition and
// multiplication by 2 modulo 2^w-1, §3.2, where multiplying by 2 is also a
// rotation). Both are kept for comparison: neither gives a detection
// guarantee, and on Gropp's panel both collide far more than a random
// mapping would (see Quality).
//
// As for gfd, checksum j (1 ≤ j ≤ m) multiplies by α_j = α^j, here a
// rotation by j bits, and sits in bits (j-1)·w … j·w-1; the element order is
// the Horner form f(X‖Y) = f(X)·α^|Y| + f(Y). Rotations repeat with period
// w, so j must stay below w.
//
// Concat is O(1). Repeat is O(log w), independent of the count: the
// rotation amounts of successive copies, s·t mod w, repeat with period
// P = w/gcd(s, w), so n copies reduce to n mod 2P copies for XOR (pairs
// cancel) and to (n div P)·(one period) + (n mod P) copies for the modular
// sum; the rest is doubling.

type bs1 struct {
	w    uint
	m    int
	mask uint64
	xor  bool // xor-bs1; otherwise mmm-bs1
}

func newBS1(w uint, m int, xor bool) (*bs1, error) {
	name := map[bool]string{true: "xor-bs1", false: "mmm-bs1"}[xor]
	if w < MinWidth || w > 64 {
		return nil, fmt.Errorf("%s: w=%d out of range [%d, 64]", name, w, MinWidth)
	}
	if m < 1 || int(w)*m > 64 {
		return nil, fmt.Errorf("%s: m=%d out of range: need 1 ≤ m and w·m ≤ 64", name, m)
	}
	if uint(m) >= w {
		return nil, fmt.Errorf("%s: m=%d needs m < w=%d, or two checksums would rotate alike", name, m, w)
	}
	return &bs1{w: w, m: m, mask: ^uint64(0) >> (64 - w), xor: xor}, nil
}

func (r *bs1) String() string {
	name := "mmm-bs1"
	if r.xor {
		name = "xor-bs1"
	}
	return fmt.Sprintf("%s:w=%d,m=%d", name, r.w, r.m)
}

func (r *bs1) Bits() int  { return int(r.w) * r.m }
func (r *bs1) Empty() Sig { return Sig{} }

// rotl rotates the w-bit value v left by k < w bits.
func (r *bs1) rotl(v uint64, k uint) uint64 {
	if k == 0 {
		return v
	}
	return (v<<k | v>>(r.w-k)) & r.mask
}

// add is ⊕: XOR, or addition modulo M = 2^w-1 on residues in [0, M).
func (r *bs1) add(a, b uint64) uint64 {
	if r.xor {
		return a ^ b
	}
	s, c := bits.Add64(a, b, 0)
	s += c // only when w = 64: 2^64 ≡ 1 (mod 2^64-1)
	if s >= r.mask {
		s -= r.mask
	}
	return s
}

// mulMod returns a·b mod 2^w-1 for residues a, b: the high and low w-bit
// halves of the product are congruent to their sum, since 2^w ≡ 1.
func (r *bs1) mulMod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if r.w == 64 {
		return r.add(lo, hi)
	}
	high := lo>>r.w | hi<<(64-r.w) // a·b < 2^(2w), so this is all of it
	return r.add(lo&r.mask, high%r.mask)
}

func (r *bs1) element(code uint64) uint64 {
	x := code & r.mask
	if !r.xor && x == r.mask {
		x = 0 // 2^w-1 is 0 in Z/(2^w-1); the codes avoid it for w ≥ 6
	}
	return x
}

func (r *bs1) Basic(code uint64) Sig {
	return Sig{Value: replicate(r.element(code), r.w, r.m), Count: 1}
}

func (r *bs1) Concat(a, b Sig) Sig {
	n := addCounts(a.Count, b.Count)
	e := uint(b.Count % uint64(r.w))
	var v uint64
	ej := uint(0)
	for j := range r.m {
		ej += e
		if ej >= r.w {
			ej -= r.w
		}
		sh := uint(j) * r.w
		v |= r.add(r.rotl(a.Value>>sh&r.mask, ej), b.Value>>sh&r.mask) << sh
	}
	return Sig{Value: v, Count: n}
}

func (r *bs1) Repeat(a Sig, k uint64) Sig {
	if k == 0 {
		return Sig{}
	}
	n := mulCount(a.Count, k)
	e := uint(a.Count % uint64(r.w))
	var v uint64
	ej := uint(0)
	for j := range r.m {
		ej += e // rotation between consecutive copies
		if ej >= r.w {
			ej -= r.w
		}
		sh := uint(j) * r.w
		v |= r.repeatOne(a.Value>>sh&r.mask, ej, k) << sh
	}
	return Sig{Value: v, Count: n}
}

// repeatOne returns ⊕_{t<k} rotl(x, s·t mod w): k copies of a checksum x
// whose copies are s bits of rotation apart.
func (r *bs1) repeatOne(x uint64, s uint, k uint64) uint64 {
	period := uint64(r.w / gcd(s, r.w)) // s = 0: gcd = w, period 1
	if r.xor {
		return r.doubling(x, s, k%(2*period))
	}
	q, rem := k/period, k%period
	full := r.doubling(x, s, period)
	return r.add(r.mulMod(q%r.mask, full), r.doubling(x, s, rem))
}

// doubling computes ⊕_{t<k} rotl(x, s·t) in O(log k) steps from
// R(2i) = rotl(R(i), s·i) ⊕ R(i) and R(i+1) = rotl(R(i), s) ⊕ x.
func (r *bs1) doubling(x uint64, s uint, k uint64) uint64 {
	var acc uint64
	i := uint64(0)
	for bit := bits.Len64(k) - 1; bit >= 0; bit-- {
		acc = r.add(r.rotl(acc, uint(uint64(s)*(i%uint64(r.w))%uint64(r.w))), acc)
		i *= 2
		if k>>bit&1 == 1 {
			acc = r.add(r.rotl(acc, s), x)
			i++
		}
	}
	return acc
}

func (r *bs1) Append(s Sig, codes ...uint64) Sig {
	n := addCounts(s.Count, uint64(len(codes)))
	var c [32]uint64
	for j := range r.m {
		c[j] = s.Value >> (uint(j) * r.w) & r.mask
	}
	for _, code := range codes {
		x := r.element(code)
		for j := range r.m {
			c[j] = r.add(r.rotl(c[j], uint(j+1)), x)
		}
	}
	var v uint64
	for j := range r.m {
		v |= c[j] << (uint(j) * r.w)
	}
	return Sig{Value: v, Count: n}
}

func gcd(a, b uint) uint {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
