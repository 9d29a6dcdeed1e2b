package sig

import (
	"math"
	"strings"
)

// PanelTypes are the 13 basic types of Gropp's panel: MPI-1's C basic
// datatypes (MPI 1.1 §3.2.2), Byte and Packed included.
var PanelTypes = []*Datatype{Char, Short, Int, Long, UnsignedChar, UnsignedShort, Unsigned,
	UnsignedLong, Float, Double, LongDouble, Byte, Packed}

// Panel returns the datatypes on which Quality measures an algebra, in the
// manner of Gropp's and Langou et al.'s experiments: a sample of about
// 7000 distinct type signatures over the 13 PanelTypes, of the shapes MPI
// programs use. With T the 13 types:
//
//  1. every sequence of 1 to 3 elements: 13 + 13² + 13³ = 2379 (as structs
//     of single elements);
//  2. every uniform run t×n, n = 4 … 64: 13·61 = 793 (contiguous);
//  3. every two-run struct t1×a, t2×b, t1 ≠ t2, 1 ≤ a, b ≤ 5, a+b ≥ 4
//     (shorter ones are in 1): 156·22 = 3432;
//  4. every alternation (t1, t2)×k, t1 ≠ t2, k = 2 … 4: 156·3 = 468
//     (contiguous of a two-member struct).
//
// 7072 signatures in all, each once. Langou et al.'s panel had 6994; its
// exact makeup is in their software distribution, which is no longer online.
func Panel() []*Datatype {
	var out []*Datatype
	seq := func(ts ...*Datatype) *Datatype {
		bl, ds := make([]int64, len(ts)), make([]int64, len(ts))
		var off int64
		for i, t := range ts {
			bl[i], ds[i] = 1, off
			off += t.Size()
		}
		return Must(Struct(bl, ds, ts))
	}
	for _, a := range PanelTypes {
		out = append(out, seq(a))
	}
	for _, a := range PanelTypes {
		for _, b := range PanelTypes {
			out = append(out, seq(a, b))
		}
	}
	for _, a := range PanelTypes {
		for _, b := range PanelTypes {
			for _, c := range PanelTypes {
				out = append(out, seq(a, b, c))
			}
		}
	}
	for _, t := range PanelTypes {
		for n := int64(4); n <= 64; n++ {
			out = append(out, Must(Contiguous(n, t)))
		}
	}
	for _, a := range PanelTypes {
		for _, b := range PanelTypes {
			if a == b {
				continue
			}
			for na := int64(1); na <= 5; na++ {
				for nb := int64(1); nb <= 5; nb++ {
					if na+nb >= 4 {
						out = append(out, Must(Struct([]int64{na, nb}, []int64{0, na * a.Size()}, []*Datatype{a, b})))
					}
				}
			}
		}
	}
	for _, a := range PanelTypes {
		for _, b := range PanelTypes {
			if a == b {
				continue
			}
			for k := int64(2); k <= 4; k++ {
				out = append(out, Must(Contiguous(k, seq(a, b))))
			}
		}
	}
	return out
}

// Quality is how well an algebra spreads a panel of distinct type signatures
// over its values (Langou et al., Table 1).
type Quality struct {
	Algebra    string
	Bits       int
	Signatures int
	// Collisions is the percentage of signatures whose value an earlier
	// signature of the panel already had: (N - distinct values)/N.
	Collisions float64
	// Duplicates is the percentage of distinct values that more than one
	// signature maps to. (This reading reproduces the relation between the
	// two columns of the paper's Table 1.)
	Duplicates float64
	// Expected and ExpectedDuplicates are the same percentages expected of
	// a uniformly random mapping of Signatures items to 2^Bits values.
	Expected, ExpectedDuplicates float64
}

// MeasureQuality hashes every datatype of panel (count 1) with alg and
// counts the values that coincide. Only Sig.Value is compared, as in the
// paper; the element count, which also travels, would separate signatures
// of different lengths further.
func MeasureQuality(alg Algebra, panel []*Datatype) Quality {
	seen := make(map[uint64]int, len(panel))
	for _, t := range panel {
		s, err := Of(alg, t, 1)
		if err != nil {
			panic(err) // panel types are small
		}
		seen[s.Value]++
	}
	dups := 0
	for _, c := range seen {
		if c > 1 {
			dups++
		}
	}
	n := len(panel)
	q := Quality{Algebra: alg.String(), Bits: alg.Bits(), Signatures: n}
	if n == 0 {
		return q
	}
	q.Collisions = 100 * float64(n-len(seen)) / float64(n)
	q.Duplicates = 100 * float64(dups) / float64(len(seen))
	q.Expected, q.ExpectedDuplicates = randomMapping(n, alg.Bits())
	return q
}

// randomMapping returns the expected collision and duplicate percentages
// of n items mapped uniformly at random to 2^bits values: E[distinct] =
// V(1-(1-1/V)^n) and E[values hit twice or more] = V(1-(1-1/V)^n -
// (n/V)(1-1/V)^(n-1)). (The paper's approximation (10), V/(V/n + 1/2),
// gives 5.07% for n = 6994 at 16 bits; the exact value is 5.15%.)
func randomMapping(n, bits int) (coll, dup float64) {
	v := math.Ldexp(1, bits)
	p0 := math.Exp(float64(n) * math.Log1p(-1/v))                  // (1-1/V)^n
	p1 := float64(n) / v * math.Exp(float64(n-1)*math.Log1p(-1/v)) // (n/V)(1-1/V)^(n-1)
	distinct := v * -math.Expm1(float64(n)*math.Log1p(-1/v))
	multi := v * (1 - p0 - p1)
	if bits >= 40 {
		// 1-p0-p1 cancels catastrophically; use the leading term n²/2V.
		multi = float64(n) * float64(n) / (2 * v)
	}
	return 100 * (1 - distinct/float64(n)), 100 * multi / distinct
}

// QualitySpecs are the algebras of the paper's Table 1, with all three
// 16-bit CRCs it considered and the 32-bit CRCs of the catalogue, in two
// groups of equal width: 16 bits, then 32.
var QualitySpecs = []string{
	"crc16-ccitt-false", "crc16-xmodem", "crc16-arc",
	"xor-bs1:w=16,m=1", "mmm-bs1:w=16,m=1", "gfd:w=16,m=1",
	"xor-bs1:w=8,m=2", "mmm-bs1:w=8,m=2", "gfd:w=8,m=2",
	"crc32", "crc32-bzip2", "crc32c",
	"xor-bs1:w=16,m=2", "mmm-bs1:w=16,m=2", "gfd:w=16,m=2",
	"xor-bs1:w=8,m=4", "mmm-bs1:w=8,m=4", "gfd:w=8,m=4",
}

// family returns "gfd", "crc", "xor-bs1" or "mmm-bs1" for a spec.
func family(spec string) string {
	name, _, _ := strings.Cut(spec, ":")
	if strings.HasPrefix(name, "crc") {
		return "crc"
	}
	return name
}
