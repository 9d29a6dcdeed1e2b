package gf

import (
	"math"
	"math/bits"
	"sync"
)

// dlog solves α^x = a in fields too large for a log table (w > 16).
//
// Pohlig–Hellman: for each prime power q^e dividing N = 2^w-1, x mod q^e is
// found digit by digit in base q, each digit a logarithm in the subgroup of
// order q, found by baby-step giant-step in O(√q) multiplications with a
// table of ⌈√q⌉ entries; the residues are joined by the Chinese remainder
// theorem. The tables are built on first use and kept.
type dlog struct {
	once  sync.Once
	parts []dlogPart
}

type dlogPart struct {
	q, qe uint64 // the prime and its power q^e
	e     int
	crt   uint64 // (N/q^e)·((N/q^e)^-1 mod q^e) mod N
	gamma uint32 // α^(N/q), which has order q
	m     uint64 // ⌈√q⌉
	baby  map[uint32]uint32
	giant uint32 // γ^(-m)
}

func (d *dlog) init(f *Field) {
	n := f.order
	for _, pf := range factor(n) {
		p := dlogPart{q: pf.q, e: pf.e, qe: 1}
		for range pf.e {
			p.qe *= pf.q
		}
		c := n / p.qe
		p.crt = mulMod(c, invMod(c%p.qe, p.qe), n)
		p.gamma = f.Exp(n / p.q)
		p.m = isqrtCeil(p.q)
		p.baby = make(map[uint32]uint32, p.m)
		g := uint32(1)
		for j := range p.m {
			if _, dup := p.baby[g]; !dup {
				p.baby[g] = uint32(j)
			}
			g = f.Mul(g, p.gamma)
		}
		p.giant = f.Inv(g) // g = γ^m
		d.parts = append(d.parts, p)
	}
}

func (d *dlog) log(f *Field, a uint32) uint64 {
	d.once.Do(func() { d.init(f) })
	n := f.order
	var x uint64
	for i := range d.parts {
		p := &d.parts[i]
		var xi, qk uint64 = 0, 1
		for range p.e {
			// h = (a·α^-xi)^(N/q^(k+1)) lies in the subgroup of order q;
			// its logarithm to base γ is the k-th base-q digit of x mod q^e.
			qk1 := qk * p.q
			h := f.Pow(f.Mul(a, f.Exp(n-xi)), n/qk1)
			xi += p.bsgs(f, h) * qk
			qk = qk1
		}
		x = (x + mulMod(xi, p.crt, n)) % n
	}
	return x
}

// bsgs returns j < q with γ^j = h.
func (p *dlogPart) bsgs(f *Field, h uint32) uint64 {
	for i := uint64(0); i <= p.m; i++ {
		if j, ok := p.baby[h]; ok {
			return i*p.m + uint64(j)
		}
		h = f.Mul(h, p.giant)
	}
	panic("gf: discrete logarithm not found; the field tables are corrupt")
}

// mulMod returns a·b mod m for a, b < m.
func mulMod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi, lo, m)
	return r
}

// invMod returns a^-1 mod m for gcd(a, m) = 1 (m = 1 gives 0).
func invMod(a, m uint64) uint64 {
	if m == 1 {
		return 0
	}
	// Extended Euclid with signed coefficients; values stay below m < 2^32.
	t, nt := int64(0), int64(1)
	r, nr := int64(m), int64(a)
	for nr != 0 {
		q := r / nr
		t, nt = nt, t-q*nt
		r, nr = nr, r-q*nr
	}
	if t < 0 {
		t += int64(m)
	}
	return uint64(t)
}

// isqrtCeil returns ⌈√n⌉ for n ≥ 1.
func isqrtCeil(n uint64) uint64 {
	r := uint64(math.Sqrt(float64(n)))
	for r*r < n {
		r++
	}
	for r > 1 && (r-1)*(r-1) >= n {
		r--
	}
	return r
}
