package sig

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The benchmarks of Langou et al.'s Table 2, for gfd(w=8, m=2) and a 16-bit
// CRC: "signature" hashes an expanded sequence of nx elements,
// "concatsignature" joins the signatures of two halves of nx/2, and
// "unisignature" is the signature of nx copies of one element. The paper
// measured, for nx = 1000 on a 2.4 GHz Xeon, 48.26 µs (gfd) and 20.21 µs
// (crc) for the signature, 0.10 µs and 10.07 µs for the concatenation, and
// 0.10 µs and 20.21 µs for the unidatatype. Here concatenation and
// repetition cost the same for nx = 10 and nx = 10^12.

// gfd:w=16,m=4 was the default before gfd:w=64,m=1 (DefaultSpec): the two side by side
// are what the new default costs.
var table2Specs = []string{"gfd:w=8,m=2", "crc16-ccitt-false", "gfd:w=16,m=4", DefaultSpec, "crc32c", "xor-bs1:w=16,m=1", "mmm-bs1:w=16,m=1"}

var sinkSig Sig

func randomCodes(n int) []uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	c := make([]uint64, n)
	for i := range c {
		c[i] = PanelTypes[r.IntN(len(PanelTypes))].code
	}
	return c
}

func BenchmarkSignature(b *testing.B) {
	for _, spec := range table2Specs {
		alg := mustAlg(b, spec)
		for _, n := range []int{100, 1000} {
			codes := randomCodes(n)
			b.Run(fmt.Sprintf("alg=%s/n=%d", spec, n), func(b *testing.B) {
				for b.Loop() {
					sinkSig = alg.Append(alg.Empty(), codes...)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
			})
		}
	}
}

func BenchmarkConcat(b *testing.B) {
	for _, spec := range table2Specs {
		alg := mustAlg(b, spec)
		for _, n := range []uint64{10, 100, 1000, 1e12} {
			x := alg.Repeat(alg.Basic(Int.code), n/2)
			y := alg.Repeat(alg.Basic(Double.code), n-n/2)
			b.Run(fmt.Sprintf("alg=%s/n=%d", spec, n), func(b *testing.B) {
				for b.Loop() {
					sinkSig = alg.Concat(x, y)
				}
			})
		}
	}
}

func BenchmarkRepeat(b *testing.B) {
	for _, spec := range table2Specs {
		alg := mustAlg(b, spec)
		x := alg.Basic(Double.code)
		for _, n := range []uint64{10, 100, 1000, 1e12} {
			b.Run(fmt.Sprintf("alg=%s/n=%d", spec, n), func(b *testing.B) {
				for b.Loop() {
					sinkSig = alg.Repeat(x, n)
				}
			})
		}
	}
}

// BenchmarkDatatype is the signature of whole datatypes from their
// description, with the per-datatype cache cleared each time (the first
// signature of a new datatype) and kept (every later message).
func BenchmarkDatatype(b *testing.B) {
	types := map[string]string{
		"vector1e9":  "vector(1e9, 3, 5, double)",
		"struct":     "struct([1, 1, 1], [0, 8, 16], [int, double, vector(8, 2, 3, float)])",
		"indexed100": "indexed([" + ints(100, 3) + "], [" + ints(100, 7) + "], struct([1, 1], [0, 8], [double, int]))",
	}
	for _, name := range []string{"vector1e9", "struct", "indexed100"} {
		dt := Must(ParseDatatype(types[name]))
		alg := Default()
		b.Run("cold/"+name, func(b *testing.B) {
			for b.Loop() {
				clearCache(dt)
				sinkSig, _ = Of(alg, dt, 1e6)
			}
		})
		b.Run("cached/"+name, func(b *testing.B) {
			for b.Loop() {
				sinkSig, _ = Of(alg, dt, 1e6)
			}
		})
		b.Run("prefix/"+name, func(b *testing.B) {
			k := dt.Elements()*1e6/3 + 1
			for b.Loop() {
				sinkSig, _ = Prefix(alg, dt, 1e6, k)
			}
		})
	}
}

// BenchmarkMatch locates a mismatch at element 2·10^9 of a 3·10^9-element
// vector by binary search over prefix signatures.
func BenchmarkMatch(b *testing.B) {
	send := Must(Vector(1e9, 3, 5, Double))
	inner := Must(Struct([]int64{2, 1}, []int64{0, 16}, []*Datatype{Double, Float}))
	recv := Must(Struct([]int64{666666666, 1, 1e9}, []int64{0, 0, 0}, []*Datatype{Must(Contiguous(3, Double)), inner, Must(Contiguous(3, Double))}))
	for b.Loop() {
		if Match(Default(), send, 1, recv, 1, PointToPoint) == nil {
			b.Fatal("no mismatch")
		}
	}
}

func ints(n int, step int64) string {
	s := ""
	for i := range n {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(int64(i)*step + 1)
	}
	return s
}

func clearCache(t *Datatype) {
	t.sigs.Clear()
	if t.old != nil {
		clearCache(t.old)
	}
	for _, m := range t.types {
		clearCache(m)
	}
}
