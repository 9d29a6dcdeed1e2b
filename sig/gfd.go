package sig

import (
	"fmt"

	"github.com/sigcheck/sigcheck/gf"
)

// gfd is the Galois-field checksum of Langou et al. §3.4, with m
// independent checksums side by side in one word.
//
// Checksum j (1 ≤ j ≤ m) of elements x_1 … x_n is, in GF(2^w),
//
//	f_j(X) = Σ_i x_i · α_j^(n-i),   α_j = α^j,
//
// the Horner form f_j(X‖Y) = f_j(X)·α_j^|Y| + f_j(Y) (the paper's (6) with
// the element order fixed: the last element is multiplied by α_j^0). It
// sits in bits (j-1)·w … j·w-1 of Sig.Value. Each element x_i is the low w
// bits of its basic type's code, the same in every checksum.
//
// Taking α_j = α^j makes the m checksums the syndromes of a Reed–Solomon
// code (Litwin and Schwarz's "algebraic signatures"): two sequences of the
// same length n ≤ 2^w-1 that differ in at most m places have different
// signatures, because the differences would have to be a non-zero solution
// of an m×m Vandermonde system in the distinct α^(n-i). A transposition of
// two elements d places apart is a difference in two places, so it is found
// whenever n ≤ 2^w-1 and, for m = 1, whenever d is not a multiple of
// 2^w-1. All of this needs distinct non-zero elements per basic type, which
// the codes give for w ≥ 6.
//
// Which runs vanish: beyond 2^w-1 elements nothing is guaranteed, and runs
// are forgotten outright. A run of k copies of any one element x hashes,
// in checksum j, to x·(α_j^k + 1)/(α_j + 1), which is 0 for every j as soon
// as 2^w-1 divides k. So 255 ints and 255 floats have the same signature,
// 0, at w = 8, as do 65535 of each at w = 16, and a signature that differs
// from another only inside such runs is not told apart. The default
// algebra, gfd:w=64,m=1 (gf64.go), has the same form over GF(2^64), where
// the period is 2^64-1.
//
// Concat costs m multiplications by a power of α; Repeat, by the geometric
// series Σ_{t<k} β^t = (β^k + 1)/(β + 1) with β = α_j^|a| (the paper's (9)),
// m divisions — O(1) whatever the counts. When β = 1, which happens when
// j·|a| is a multiple of 2^w-1, the series is k ones, which in
// characteristic 2 is k mod 2.
type gfd struct {
	f     *gf.Field
	w     uint
	m     int
	order uint64
	mask  uint64
	// step[j][x] = x·α^(j+1) and step2[j][x] = x·α^(2j+2), for
	// w ≤ stepMaxW: Append takes two elements per step with one load on
	// each checksum's dependency chain, c·α_j² + x1·α_j + x2.
	step, step2 [][]uint32
}

const stepMaxW = 12

func newGFD(w uint, m int) (*gfd, error) {
	if w < MinWidth || w > gf.MaxW {
		return nil, fmt.Errorf("gfd: w=%d out of range: %d ≤ w ≤ %d, or w = 64 with m = 1", w, MinWidth, gf.MaxW)
	}
	if m < 1 || int(w)*m > 64 {
		return nil, fmt.Errorf("gfd: m=%d out of range: need 1 ≤ m and w·m ≤ 64", m)
	}
	order := uint64(1)<<w - 1
	if uint64(m) >= order {
		return nil, fmt.Errorf("gfd: m=%d needs m < 2^w-1 = %d, or two checksums would share a multiplier", m, order)
	}
	g := &gfd{f: gf.Default(w), w: w, m: m, order: order, mask: order}
	if w <= stepMaxW {
		g.step, g.step2 = make([][]uint32, m), make([][]uint32, m)
		for j := range m {
			aj, aj2 := g.f.Exp(uint64(j+1)), g.f.Exp(uint64(2*j+2))
			g.step[j], g.step2[j] = make([]uint32, 1<<w), make([]uint32, 1<<w)
			for x := range uint32(1 << w) {
				g.step[j][x] = g.f.Mul(x, aj)
				g.step2[j][x] = g.f.Mul(x, aj2)
			}
		}
	}
	return g, nil
}

func (g *gfd) String() string { return fmt.Sprintf("gfd:w=%d,m=%d", g.w, g.m) }
func (g *gfd) Bits() int      { return int(g.w) * g.m }
func (g *gfd) Empty() Sig     { return Sig{} }

func (g *gfd) Basic(code uint64) Sig {
	return Sig{Value: replicate(code&g.mask, g.w, g.m), Count: 1}
}

func (g *gfd) Concat(a, b Sig) Sig {
	n := addCounts(a.Count, b.Count)
	e := g.f.Reduce(b.Count)
	v := b.Value
	ej := uint64(0)
	for j := range g.m {
		ej += e // ej = (j+1)·|b| mod order
		if ej >= g.order {
			ej -= g.order
		}
		sh := uint(j) * g.w
		v ^= uint64(g.f.MulExp(uint32(a.Value>>sh&g.mask), ej)) << sh
	}
	return Sig{Value: v, Count: n}
}

func (g *gfd) Repeat(a Sig, k uint64) Sig {
	n := mulCount(a.Count, k)
	if k == 0 {
		return Sig{}
	}
	if g.w > 16 {
		return Sig{Value: g.repeatWide(a.Value, a.Count, n, k), Count: n}
	}
	// Checksum j of k copies is a_j·(β_j^k + 1)/(β_j + 1), β_j = α^(j·L),
	// L = |a|. In logarithms: log a_j + Z(j·L·k) - Z(j·L), Z being Zech's
	// logarithm, log(1 + α^x). The exponents j·L and j·L·k (mod 2^w-1)
	// grow by one step per checksum: no reduction inside the loop.
	order := g.order
	e := g.f.Reduce(a.Count)
	x := g.f.Reduce(n) // L·k: the count itself, which did not overflow
	var v uint64
	ej, xj := uint64(0), uint64(0)
	for j := range g.m {
		ej += e
		if ej >= order {
			ej -= order
		}
		xj += x
		if xj >= order {
			xj -= order
		}
		sh := uint(j) * g.w
		aj := uint32(a.Value >> sh & g.mask)
		switch {
		case aj == 0 || xj == 0 && ej != 0:
			// Nothing to repeat, or β^k = 1 ≠ β: the series sums to 0.
		case ej == 0:
			// β = 1: k ones, which in characteristic 2 is k mod 2.
			v |= uint64(aj) * (k & 1) << sh
		default:
			l := g.f.Log(aj) + g.f.Zech(xj) + order - g.f.Zech(ej) // < 3·order
			if l >= order {
				l -= order
			}
			if l >= order {
				l -= order
			}
			v |= uint64(g.f.Exp(l)) << sh
		}
	}
	return Sig{Value: v, Count: n}
}

// repeatWide is Repeat's checksum arithmetic for w > 16, where there are
// no log tables: (β^k + 1)/(β + 1) by exponentiation and inversion.
func (g *gfd) repeatWide(val, count, n, k uint64) uint64 {
	e, x := g.f.Reduce(count), g.f.Reduce(n)
	var v uint64
	ej, xj := uint64(0), uint64(0)
	for j := range g.m {
		ej += e
		if ej >= g.order {
			ej -= g.order
		}
		xj += x
		if xj >= g.order {
			xj -= g.order
		}
		sh := uint(j) * g.w
		aj := uint32(val >> sh & g.mask)
		var s uint32
		if ej == 0 {
			s = uint32(k & 1)
		} else {
			s = g.f.Div(g.f.Exp(xj)^1, g.f.Exp(ej)^1)
		}
		v |= uint64(g.f.Mul(aj, s)) << sh
	}
	return v
}

func (g *gfd) Append(s Sig, codes ...uint64) Sig {
	n := addCounts(s.Count, uint64(len(codes)))
	if g.step != nil && g.m == 2 {
		// The common case (the paper's gfd(w=8, m=2)) with both checksums in
		// registers: two independent dependency chains per element.
		t0, t1, u0, u1 := g.step[0], g.step[1], g.step2[0], g.step2[1]
		c0, c1 := uint32(s.Value&g.mask), uint32(s.Value>>g.w&g.mask)
		for len(codes) >= 2 {
			x, y := uint32(codes[0]&g.mask), uint32(codes[1]&g.mask)
			c0 = u0[c0] ^ t0[x] ^ y
			c1 = u1[c1] ^ t1[x] ^ y
			codes = codes[2:]
		}
		for _, code := range codes {
			x := uint32(code & g.mask)
			c0 = t0[c0] ^ x
			c1 = t1[c1] ^ x
		}
		return Sig{Value: uint64(c0) | uint64(c1)<<g.w, Count: n}
	}
	var c [64]uint32
	for j := range g.m {
		c[j] = uint32(s.Value >> (uint(j) * g.w) & g.mask)
	}
	for _, code := range codes {
		x := uint32(code & g.mask)
		for j := range g.m {
			if g.step != nil {
				c[j] = g.step[j][c[j]] ^ x
			} else {
				c[j] = g.f.MulExp(c[j], uint64(j+1)) ^ x
			}
		}
	}
	var v uint64
	for j := range g.m {
		v |= uint64(c[j]) << (uint(j) * g.w)
	}
	return Sig{Value: v, Count: n}
}
