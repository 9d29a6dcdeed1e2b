package fuzz

import (
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/internal/xxh3k"
)

// FuzzLeaves: internal/xxh3k's leaves kernel (a Merkle tree's seeded
// XXH3 leaves, all in one call) equals xxh3.HashSeed leaf by leaf, for
// arbitrary bytes cut into arbitrary segments over 240 bytes, with any
// first seed (wrapping past 2⁶⁴ too), at any alignment. The seeds sit at
// the layout's edges: 241 bytes (the shortest long input), one stripe
// either side of a block, two blocks (the default segment).
func FuzzLeaves(f *testing.F) {
	for _, seg := range []int{241, 255, 256, 1023, 1024, 1025, 1087, 2048, 3000} {
		p := make([]byte, 2*seg+7)
		for i := range p {
			p[i] = byte(i*131 + seg)
		}
		f.Add(p, uint16(seg), uint64(seg)*0x9E3779B97F4A7C15, uint8(seg))
	}
	f.Add(make([]byte, 600), uint16(300), ^uint64(0), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, seg uint16, seed uint64, align uint8) {
		s := xxh3k.LongMin + int(seg)%(8<<10)
		buf := make([]byte, int(align&63)+len(data))
		p := buf[align&63:]
		copy(p, data)
		out := make([]uint64, len(p)/s)
		xxh3k.Leaves(out, p, s, seed)
		for j, got := range out {
			if want := xxh3.HashSeed(p[j*s:(j+1)*s], seed+uint64(j)); got != want {
				t.Fatalf("leaf %d of %d-byte segments, seed %#x, at offset %d: %016x, xxh3.HashSeed says %016x", j, s, seed, align&63, got, want)
			}
		}
	})
}
