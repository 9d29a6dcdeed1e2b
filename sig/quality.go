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

// LongLengths are the lengths of LongPanel's uniform runs: from 256 to
// 10^6, with the periods of the small fields (255, 65535) and their
// multiples among them, where a gfd over GF(2^8) or GF(2^16) forgets runs.
var LongLengths = []int64{256, 257, 300, 383, 500, 510, 511, 512, 765, 1000, 1020, 1023, 1024, 1275,
	2040, 2048, 4080, 4096, 5000, 8192, 10000, 16320, 16384, 32767, 32768, 50000, 65280, 65535,
	65536, 65537, 100000, 131070, 131072, 196605, 250000, 262144, 327675, 500000, 524288, 1000000}

// LongPanel returns type signatures of 256 to 10^6 elements over the 13
// PanelTypes, which Panel (and the paper's panel) lacks: the paper's figures
// say nothing of signatures longer than 64 elements, and gfd over GF(2^w)
// behaves differently beyond 2^w-1 of them. With T the 13 types:
//
//  1. every uniform run t×n, n in LongLengths: 13·40 = 520 (contiguous);
//  2. every two-run struct t1×a, t2×b, t1 ≠ t2, (a, b) in (128, 128),
//     (255, 1), (1, 255), (255, 255), (1000, 24), (65535, 1), (1, 65535),
//     (65535, 65535), (500000, 500000): 156·9 = 1404;
//  3. every alternation (t1×a, t2×b)×k, t1 ≠ t2, (a, b) in (1, 1), (1, 2),
//     (2, 1), (3, 1), k in 128, 255, 256, 500, 1000: 156·20 = 3120
//     (contiguous of a struct);
//  4. every run with one odd element, t×a, u, t×b, t ≠ u, (a, b) in
//     (255, 255), (1000, 3), (3, 1000), (65535, 65535): 156·4 = 624;
//  5. every triple of distinct types repeated, vector(100, 1, 2,
//     struct{t1, t2, t3}) (300 elements): 13·12·11 = 1716 (nested: a
//     vector of a resized struct).
//
// 7384 signatures, each once (TestLongPanel compares their run-length
// forms).
func LongPanel() []*Datatype {
	var out []*Datatype
	runs := func(ns []int64, ts ...*Datatype) *Datatype {
		bl, ds := make([]int64, len(ts)), make([]int64, len(ts))
		var off int64
		for i, t := range ts {
			bl[i], ds[i] = ns[i], off
			off += ns[i] * t.Size()
		}
		return Must(Struct(bl, ds, ts))
	}
	for _, t := range PanelTypes {
		for _, n := range LongLengths {
			out = append(out, Must(Contiguous(n, t)))
		}
	}
	for _, ab := range [][2]int64{{128, 128}, {255, 1}, {1, 255}, {255, 255}, {1000, 24}, {65535, 1}, {1, 65535}, {65535, 65535}, {500000, 500000}} {
		for _, a := range PanelTypes {
			for _, b := range PanelTypes {
				if a != b {
					out = append(out, runs(ab[:], a, b))
				}
			}
		}
	}
	for _, ab := range [][2]int64{{1, 1}, {1, 2}, {2, 1}, {3, 1}} {
		for _, k := range []int64{128, 255, 256, 500, 1000} {
			for _, a := range PanelTypes {
				for _, b := range PanelTypes {
					if a != b {
						out = append(out, Must(Contiguous(k, runs(ab[:], a, b))))
					}
				}
			}
		}
	}
	for _, ab := range [][2]int64{{255, 255}, {1000, 3}, {3, 1000}, {65535, 65535}} {
		for _, t := range PanelTypes {
			for _, u := range PanelTypes {
				if t != u {
					out = append(out, runs([]int64{ab[0], 1, ab[1]}, t, u, t))
				}
			}
		}
	}
	for _, a := range PanelTypes {
		for _, b := range PanelTypes {
			for _, c := range PanelTypes {
				if a != b && b != c && a != c {
					s := runs([]int64{1, 1, 1}, a, b, c)
					out = append(out, Must(Vector(100, 1, 2, s)))
				}
			}
		}
	}
	return out
}

// PaperCollisions are the collision percentages of Langou et al.'s Table 1
// (their panel of 6994 signatures of at most 64 elements), by spec. The
// paper reports one 16-bit CRC, CRC-CCITT, and one 32-bit CRC, 04C11DB7,
// whose figure stands here for both catalogue forms of that polynomial,
// crc32 (reflected) and crc32-bzip2.
var PaperCollisions = map[string]float64{
	"crc16-ccitt-false": 4.76, "xor-bs1:w=16,m=1": 61.10, "mmm-bs1:w=16,m=1": 52.03, "gfd:w=16,m=1": 12.65,
	"xor-bs1:w=8,m=2": 64.40, "mmm-bs1:w=8,m=2": 51.44, "gfd:w=8,m=2": 3.73,
	"crc32": 0, "crc32-bzip2": 0, "xor-bs1:w=16,m=2": 37.32, "mmm-bs1:w=16,m=2": 23.29, "gfd:w=16,m=2": 0,
	"xor-bs1:w=8,m=4": 60.71, "mmm-bs1:w=8,m=4": 30.08, "gfd:w=8,m=4": 0,
}

// MeetsPaper says whether a measurement q keeps the figure Table 1 gives
// for its algebra: collisions at most 1.25× the paper's, or within 1.5× of
// a random mapping to as many bits (so an algebra the paper found as good
// as random, or perfect at 32 bits, must stay so: at 32 bits and more that
// means no collision at all on a panel of this size). The second result is
// false when the paper has no figure for the algebra.
func MeetsPaper(q Quality) (meets, inPaper bool) {
	p, ok := PaperCollisions[q.Algebra]
	if !ok {
		return false, false
	}
	return q.Collisions <= max(1.25*p, 1.5*q.Expected), true
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
