package sig

import (
	"math/big"
	"slices"
	"testing"

	"github.com/sigcheck/sigcheck/gf"
)

// pow64 is a^e in GF(2^64) by square and multiply.
func pow64(a, e uint64) uint64 {
	r := uint64(1)
	for i := 63; i >= 0; i-- {
		r = gf.Mul64(r, r)
		if e>>i&1 == 1 {
			r = gf.Mul64(r, a)
		}
	}
	return r
}

// orderPrimes are the prime factors of 2^64-1, each to the first power.
var orderPrimes = []uint64{3, 5, 17, 257, 641, 65537, 6700417}

// dlog64 returns L with α^L = h in GF(2^64), h ≠ 0: Pohlig–Hellman over
// the small prime factors of 2^64-1, baby-step giant-step in each, and the
// Chinese remainder theorem.
func dlog64(h uint64) uint64 {
	const order = gf.Order64
	mod := new(big.Int).SetUint64(order)
	acc := new(big.Int)
	for _, q := range orderPrimes {
		g := pow64(2, order/q) // generates the subgroup of order q
		y := pow64(h, order/q)
		m := uint64(1)
		for m*m < q {
			m++
		}
		baby := make(map[uint64]uint64, m)
		x := uint64(1)
		for j := range m {
			baby[x] = j
			x = gf.Mul64(x, g)
		}
		step := gf.Inv64(x) // g^-m
		e := ^uint64(0)
		for i := range m {
			if j, ok := baby[y]; ok {
				e = (i*m + j) % q
				break
			}
			y = gf.Mul64(y, step)
		}
		if e == ^uint64(0) {
			panic("dlog64: no logarithm")
		}
		mq := new(big.Int).SetUint64(order / q)
		inv := new(big.Int).ModInverse(new(big.Int).Mod(mq, new(big.Int).SetUint64(q)), new(big.Int).SetUint64(q))
		t := new(big.Int).Mul(new(big.Int).SetUint64(e), mq)
		t.Mul(t, inv)
		acc.Add(acc, t)
	}
	return acc.Mod(acc, mod).Uint64()
}

// Two substitutions with differences d_i at i and d_j at j > i cancel
// exactly when α^(j-i) = d_j/d_i, that is j-i ≡ log d_j - log d_i (mod
// 2^64-1). With the logs of every difference of two codes sorted, the
// smallest distance at which two substitutions can cancel is the smallest
// gap between neighbours (around the circle). This recomputes it, checks
// the constant that gfd64's doc and Describe state, and builds the
// colliding pair at that distance to show the bound is tight.
func TestDefaultTwoSubstitutions(t *testing.T) {
	type diff struct {
		d, log uint64
		a, b   *Datatype
	}
	var ds []diff
	for i, a := range basicTypes {
		for _, b := range basicTypes[i+1:] {
			d := a.code ^ b.code
			l := dlog64(d)
			if gf.Exp64(l) != d {
				t.Fatalf("dlog64(%#x) = %d is wrong", d, l)
			}
			ds = append(ds, diff{d, l, a, b})
		}
	}
	slices.SortFunc(ds, func(x, y diff) int {
		if x.log < y.log {
			return -1
		}
		if x.log > y.log {
			return 1
		}
		return 0
	})
	best, at := ds[0].log+(gf.Order64-ds[len(ds)-1].log), len(ds)-1 // the wrap-around gap
	for k := 1; k < len(ds); k++ {
		if g := ds[k].log - ds[k-1].log; g < best {
			best, at = g, k-1
		}
	}
	if best != twoSubstitutionDistance {
		t.Fatalf("two substitutions first cancel at distance %d; gf64.go says %d", best, uint64(twoSubstitutionDistance))
	}
	// The pair: d_i = ds[at].d at position i, d_j = ds[at+1].d at i+best.
	di, dj := ds[at], ds[(at+1)%len(ds)]
	alg := Default()
	filler := alg.Basic(Double.code)
	build := func(x, y *Datatype) Sig {
		mid := alg.Repeat(filler, best-1)
		return alg.Concat(alg.Concat(alg.Concat(alg.Basic(x.code), mid), alg.Basic(y.code)), filler)
	}
	// X has di.a and dj.a; Y has di.b and dj.b: differences di.d and dj.d.
	if build(di.a, dj.a) != build(di.b, dj.b) {
		t.Errorf("the two substitutions at distance %d do not cancel", best)
	}
	t.Logf("two substitutions first cancel at distance %d (≈ 2^%.1f): %s→%s and %s→%s",
		best, logb(best), di.a.name, di.b.name, dj.a.name, dj.b.name)
}

func logb(x uint64) float64 {
	f, _ := new(big.Float).SetUint64(x).Float64()
	e := 0.0
	for f >= 2 {
		f /= 2
		e++
	}
	return e + (f - 1)
}
