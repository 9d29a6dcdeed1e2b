package xxh3k

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/zeebo/xxh3"
)

// kernelsHere is the kernel settings to run: the scalar loops, and the
// AVX-512 kernels where the CPU has them.
func kernelsHere() []bool {
	if Available {
		return []bool{false, true}
	}
	return []bool{false}
}

// checkLeaves compares Leaves with xxh3.HashSeed leaf by leaf.
func checkLeaves(t *testing.T, data []byte, seg, n int, seed uint64) bool {
	t.Helper()
	out := make([]uint64, n+1)
	out[n] = 0x5A5A // must stay: Leaves writes n leaves
	Leaves(out[:n], data, seg, seed)
	for j := range n {
		if want := xxh3.HashSeed(data[j*seg:(j+1)*seg], seed+uint64(j)); out[j] != want {
			t.Errorf("kernel=%v seg=%d seed=%#x: leaf %d of %d is %016x, want xxh3.HashSeed's %016x", Available, seg, seed, j, n, out[j], want)
			return false
		}
	}
	if out[n] != 0x5A5A {
		t.Errorf("kernel=%v seg=%d: wrote past its %d leaves", Available, seg, n)
		return false
	}
	return true
}

// Every segment length from 241 to 4200 bytes (every edge of the block
// and stripe layout up to four blocks), three leaves each, against
// zeebo/xxh3's seeded hash, with the kernel and with the scalar loops.
func TestLeavesEveryLength(t *testing.T) {
	defer func(k bool) { Available = k }(Available)
	src := random(3*4200, 3)
	for _, k := range kernelsHere() {
		Available = k
		for seg := LongMin; seg <= 4200; seg++ {
			if !checkLeaves(t, src, seg, 3, uint64(seg)*0x9E3779B97F4A7C15) {
				return
			}
		}
	}
}

// Random segment lengths up to 70 KiB, leaf counts, data alignments and
// seeds (near 2⁶⁴ too, where seed+j wraps).
func TestLeavesRandom(t *testing.T) {
	defer func(k bool) { Available = k }(Available)
	props := gopter.NewProperties(params(200))
	props.Property("Leaves = xxh3.HashSeed per leaf", prop.ForAll(func(seg, n, off int, seed uint64, wrap bool) bool {
		if wrap {
			seed = math.MaxUint64 - uint64(n/2)
		}
		data := random(seg*n+off, seed)[off:]
		for _, k := range kernelsHere() {
			Available = k
			if !checkLeaves(t, data, seg, n, seed) {
				return false
			}
		}
		return true
	}, gen.IntRange(LongMin, 70<<10), gen.IntRange(0, 9), gen.IntRange(0, 63), gen.UInt64(), gen.Bool()))
	props.TestingRun(t)
}

func TestLeavesRejects(t *testing.T) {
	for name, f := range map[string]func(){
		"short segment": func() { Leaves(make([]uint64, 1), make([]byte, 240), 240, 0) },
		"short data":    func() { Leaves(make([]uint64, 2), make([]byte, 2047), 1024, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// BenchmarkLeaves: 32 leaves of 2 KiB (a 64 KiB message's tree) in one
// call, beside xxh3.HashSeed leaf by leaf and one unseeded XXH3 of the
// whole 64 KiB, the limit.
func BenchmarkLeaves(b *testing.B) {
	const seg, n = 2048, 32
	data := random(seg*n, 1)
	out := make([]uint64, n)
	rng := rand.New(rand.NewPCG(1, 2))
	seed := rng.Uint64() >> 8
	b.Run("kernel=Leaves", func(b *testing.B) {
		b.SetBytes(seg * n)
		b.ReportAllocs()
		for b.Loop() {
			Leaves(out, data, seg, seed)
		}
	})
	b.Run("kernel=HashSeed", func(b *testing.B) {
		b.SetBytes(seg * n)
		b.ReportAllocs()
		for b.Loop() {
			for j := range out {
				out[j] = xxh3.HashSeed(data[j*seg:(j+1)*seg], seed+uint64(j))
			}
		}
	})
	b.Run("kernel=whole", func(b *testing.B) {
		b.SetBytes(seg * n)
		b.ReportAllocs()
		for b.Loop() {
			out[0] = xxh3.Hash(data)
		}
	})
}
