package sig

import (
	"sync/atomic"

	"github.com/sigcheck/sigcheck/gf"
)

// gfd64 is gfd with w = 64 and one checksum: the default algebra.
//
//	f(X) = Σ_i c_i · α^(n-i)   in GF(2^64), α = x,
//
// where c_i is the whole 64-bit code of element i's basic type (package gf:
// p = x^64 + x^4 + x^3 + x + 1, primitive, so α has order 2^64-1). The
// small-field gfd forgets runs: over GF(2^w) a run of k·(2^w-1) identical
// elements hashes to 0, so 65535 ints match 65535 floats at w = 16. Here
// the period is 2^64-1, beyond any count a Sig holds.
//
// Guarantee. Let X and Y be type signatures of the same length n ≤ 2^63
// such that Y is X with basic type t replaced by a different basic type u
// at the positions s, s+L, s+2L, …, s+(k-1)L (k ≥ 1, L ≥ 1): one element,
// a run (L = 1), or a member of every copy of a struct or vector block (L
// its period). Then f(X) ≠ f(Y).
//
// Proof. Addition is XOR, so f(X) - f(Y) = (c_t ⊕ c_u) · α^e · Σ_{j<k} β^j
// with e = n-1-s-(k-1)L ≥ 0 and β = α^L. The codes are distinct, so
// c_t ⊕ c_u ≠ 0, and α^e ≠ 0. If β = 1, α's order 2^64-1 divides L, which
// is impossible for 1 ≤ L < n ≤ 2^63; so Σ_{j<k} β^j = (β^k - 1)/(β - 1),
// which is 0 only if 2^64-1 divides L·k. But (k-1)·L ≤ n-1 and L ≤ n-1
// give L·k ≤ 2n-2 < 2^64-1, and L·k ≥ 1. So the difference is a product of
// non-zero field elements: not 0. ∎
//
// In particular runs never vanish: t×n and u×n differ for every n ≤ 2^63,
// at 2^16-1, 2^32 and 2^48 as at 1 (TestDefaultRunsDoNotVanish).
//
// Two substitutions anywhere. Differences d_i at i and d_j at j > i cancel
// exactly when α^(j-i) = d_j/d_i, that is when j-i ≡ log d_j - log d_i
// (mod 2^64-1). The discrete logarithms of all 990 differences of two
// basic types' codes (Pohlig–Hellman: 2^64-1 = 3·5·17·257·641·65537·
// 6700417) put the smallest such distance at 14 742 044 790 036 ≈
// 2^43.7: any two substituted elements of any types closer than that are
// detected, so any two in signatures of up to 1.47·10^13 elements. At that
// distance, float→integer1 followed by int16_t→c_double_complex cancel
// (TestDefaultTwoSubstitutions recomputes the logarithms and builds the
// pair). Among the 32 C types alone, before the Fortran types were added,
// it was 104 857 534 692 124 ≈ 2^46.6. Three or more arbitrary
// substitutions carry no guarantee; gfd:w=16, m=4 detects any four, but
// only in signatures of at most 65535 elements.
//
// Append is one shift and conditional XOR per element (multiplication by
// α). Concat is a·α^|b| ⊕ b: a shift below 64 elements, else one table
// load per non-zero byte of |b| and as many 64-bit carry-less products.
// Repeat is a·(β^k + 1)/(β + 1) with β = α^|a| (the paper's (9)): two
// powers and an inversion (gf.Inv64), O(1) in the counts.
type gfd64 struct{}

const gfd64Spec = "gfd:w=64,m=1"

func (gfd64) String() string { return gfd64Spec }
func (gfd64) Bits() int      { return 64 }
func (gfd64) Empty() Sig     { return Sig{} }

func (gfd64) Basic(code uint64) Sig { return Sig{Value: code, Count: 1} }

func (gfd64) Concat(a, b Sig) Sig {
	return Sig{Value: gf.MulExp64(a.Value, b.Count) ^ b.Value, Count: addCounts(a.Count, b.Count)}
}

func (gfd64) Repeat(a Sig, k uint64) Sig {
	n := mulCount(a.Count, k)
	switch {
	case k == 0:
		return Sig{}
	case k == 1 || a.Value == 0:
		return Sig{Value: a.Value, Count: n}
	}
	if a.Count == 0 {
		// β = 1: k copies of a·1, which in characteristic 2 is a·(k mod 2).
		// (|a| = 2^64-1, the other β = 1, has k = 1, handled above.)
		return Sig{Value: a.Value * (k & 1), Count: n}
	}
	s := gf.Mul64(gf.Exp64(n)^1, invGeometric(a.Count)) // Σ_{t<k} β^t, as β^k = α^n
	return Sig{Value: gf.Mul64(a.Value, s), Count: n}
}

// invGeometric returns 1/(α^l + 1), for 0 < l < 2^64-1. A unit of one
// element (a run of a basic type) has a constant; other lengths cost two
// powers and an inversion (about 150 ns), so the last few are remembered:
// a datatype's signature is repeated with the same unit length at every
// message (Of(alg, t, count) repeats t's cached signature).
func invGeometric(l uint64) uint64 {
	if l == 1 {
		return invAlphaPlus1
	}
	slot := &invCache[l*0x9e3779b97f4a7c15>>(64-invCacheBits)]
	if e := slot.Load(); e != nil && e.l == l {
		return e.inv
	}
	inv := gf.Inv64(gf.Exp64(l) ^ 1)
	slot.Store(&invEntry{l, inv})
	return inv
}

// invCache is direct-mapped by a multiplicative hash of l; each slot holds
// an immutable entry, replaced whole, so readers never see half of one.
const invCacheBits = 8

var invCache [1 << invCacheBits]atomic.Pointer[invEntry]

type invEntry struct{ l, inv uint64 }

// invAlphaPlus1 is 1/(α+1) in GF(2^64) (TestInvAlphaPlus1 checks it).
const invAlphaPlus1 uint64 = 0xfffffffffffffff6

func (gfd64) Append(s Sig, codes ...uint64) Sig {
	n := addCounts(s.Count, uint64(len(codes)))
	c := s.Value
	for _, code := range codes {
		c = gf.MulX64(c) ^ code
	}
	return Sig{Value: c, Count: n}
}

// twoSubstitutionDistance is the smallest distance at which two
// substituted elements can cancel in the default algebra, found from the
// discrete logarithms of every difference of two basic types' codes
// (TestDefaultTwoSubstitutions recomputes it and builds the pair).
const twoSubstitutionDistance uint64 = 14742044790036
