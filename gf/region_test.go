package gf

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The region operations against the scalar Mul, for every element layout,
// at lengths around the SIMD block sizes of reedsolomon (16, 32, 64 bytes)
// and around regionTableMin, where the portable loop switches to tables.
func TestRegionMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	lengths := []int{0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129,
		regionTableMin - 1, regionTableMin, regionTableMin + 1, 4099, 70001}
	fields := []*Field{Default(4), Default(8), Default(12), Default(16), Default(20), Default(32)}
	if f, err := New(8, 0x12B); err == nil {
		fields = append(fields, f) // GF(2^8) that is not reedsolomon's: portable path
	}
	for _, f := range fields {
		size := f.ElemSize()
		for _, n := range lengths {
			in := make([]byte, n*size)
			for i := range in {
				in[i] = byte(rng.Uint32())
			}
			for _, c := range []uint32{0, 1, 2, uint32(rng.Uint64() & f.Order()), uint32(f.Order())} {
				name := fmt.Sprintf("w=%d/p=%#x/n=%d/c=%d", f.W(), f.Poly(), n, c)
				want := make([]byte, len(in))
				acc := make([]byte, len(in)+3) // longer than in: the tail must stay put
				for i := range acc {
					acc[i] = byte(rng.Uint32())
				}
				wantXor := bytes.Clone(acc)
				for i := 0; i < n; i++ {
					v := loadElem(in[i*size:], size) & uint32(f.Order())
					p := f.Mul(c, v)
					storeElem(want[i*size:], size, p)
					storeElem(wantXor[i*size:], size, p^loadElem(wantXor[i*size:], size))
				}
				out := make([]byte, len(in))
				f.MulSlice(c, in, out)
				if !bytes.Equal(out, want) {
					t.Fatalf("%s: MulSlice differs from scalar Mul", name)
				}
				f.MulSliceXor(c, in, acc)
				if !bytes.Equal(acc, wantXor) {
					t.Fatalf("%s: MulSliceXor differs from scalar Mul", name)
				}
			}
		}
	}
}

func TestRegionMisuse(t *testing.T) {
	mustPanicAny(t, func() { Default(16).MulSlice(3, make([]byte, 3), make([]byte, 4)) })
	mustPanicAny(t, func() { Default(8).MulSlice(3, make([]byte, 8), make([]byte, 4)) })
	mustPanicAny(t, func() { Default(32).MulSliceXor(3, make([]byte, 6), make([]byte, 8)) })
}
