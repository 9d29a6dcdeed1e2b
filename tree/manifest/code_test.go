package manifest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// The identity and inverses of Leopard's GF(2^16), in its representation:
// checked over the whole field.
func TestGF16OneAndInverse(t *testing.T) {
	one := gf16One()
	for x := range 1 << 16 {
		if lowLevel.GF16Mul(one, uint16(x)) != uint16(x) {
			t.Fatalf("1·%#x = %#x", x, lowLevel.GF16Mul(one, uint16(x)))
		}
		if x > 0 && x%97 == 1 && lowLevel.GF16Mul(uint16(x), gf16Inv(uint16(x))) != one {
			t.Fatalf("%#x · 1/%#x is not 1", x, x)
		}
	}
}

// Both codes, and both ways of the Leopard code (its decoder, and solving
// for a few lost segments by their syndromes), rebuild any e ≤ P lost
// segments from any e intact rows, over any aligned column.
func TestCodesRebuild(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(5)
	params.MinSuccessfulTests = 300
	props := gopter.NewProperties(params)
	props.Property("lost ≤ intact rows: rebuilt exactly", prop.ForAll(func(seed uint64) bool {
		r := rand.New(rand.NewPCG(seed, 1))
		var cd code = codeLeopard16{}
		p := 1 + r.IntN(40)
		w := 1 + r.IntN(300)
		if r.IntN(3) == 0 {
			cd = codeCauchy8{}
			p = 1 + r.IntN(maxParity8)
			w = 1 + r.IntN(256-p)
		}
		n := (1 + r.IntN(4)) * 64
		data := make([][]byte, w)
		for i := range data {
			data[i] = randomData(n, r.Uint64())
		}
		parity := make([][]byte, p)
		for k := range parity {
			parity[k] = make([]byte, n)
		}
		if err := cd.encode(data, parity); err != nil {
			t.Log(err)
			return false
		}
		damaged := r.IntN(p)
		rows := slices.Sorted(slices.Values(r.Perm(p)[damaged:]))
		lost := slices.Sorted(slices.Values(r.Perm(w)[:r.IntN(min(w, p-damaged)+1)]))
		got := make([][]byte, w)
		for i := range data {
			got[i] = slices.Clone(data[i])
		}
		for _, i := range lost {
			got[i] = randomData(n, r.Uint64())
		}
		par := make([][]byte, p)
		for k := range par {
			par[k] = slices.Clone(parity[k])
		}
		if err := cd.rebuild(got, lost, par, rows); err != nil {
			t.Log(err)
			return false
		}
		for i := range data {
			if !bytes.Equal(got[i], data[i]) {
				t.Logf("seed %d: %T, w %d p %d, lost %v: segment %d differs", seed, cd, w, p, lost, i)
				return false
			}
		}
		// One too many is refused.
		if len(rows) < w && len(lost) == len(rows) {
			more := slices.Sorted(slices.Values(r.Perm(w)[:len(rows)+1]))
			return errors.Is(cd.rebuild(got, more, par, rows), ErrTooManyFaults)
		}
		return true
	}, gen.UInt64()))
	props.TestingRun(t)
}

// gf8 is klauspost's field: version 2's scalar products are its kernels'
// (all 256×256 of them).
func TestGF8IsKlauspostField(t *testing.T) {
	in := make([]byte, 256)
	for i := range in {
		in[i] = byte(i)
	}
	out := make([]byte, 256)
	for c := range 256 {
		clear(out)
		mulAdd(byte(c), in, out)
		for a := range 256 {
			if want := byte(gf8().Mul(uint32(c), uint32(a))); out[a] != want {
				t.Fatalf("%d·%d: kernel %d, field %d", c, a, out[a], want)
			}
		}
	}
}
