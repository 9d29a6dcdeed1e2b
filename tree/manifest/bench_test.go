package manifest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/klauspost/reedsolomon"
	"github.com/zeebo/xxh3"
)

// Manifests beside their limits, on the same 64 MiB in memory: a copy (the
// least any pass over the data costs), XXH3 over it (what the trees'
// leaves cost), klauspost's Leopard Encode of the data as one stripe (the
// parity arithmetic alone); then writing a manifest with 0, 1, 5 and 10 %
// of parity, checking a file against it, and repairing a truncated tail
// as long as the parity (the most it rebuilds).
//
//	go test ./tree/manifest -run '^$' -bench Manifest -count 6 | benchstat -col /impl -
func BenchmarkManifest(b *testing.B) {
	const size = 64 << 20
	const seg = 2048
	data := randomData(size, 2)
	dst := make([]byte, size)
	b.Run("op=create/r=0/impl=copy", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			copy(dst, data)
		}
	})
	b.Run("op=create/r=0/impl=xxh3", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			xxh3.Hash(data)
		}
	})
	src := []Source{{Name: "data", Data: bytes.NewReader(data), Size: size}}
	for _, r := range []float64{0, 1, 5, 10} {
		if r > 0 {
			b.Run(fmt.Sprintf("op=create/r=%v/impl=leopard-encode", r), func(b *testing.B) {
				n := size / seg
				p := int(float64(n)*r/100 + 0.999)
				enc, err := reedsolomon.New(n, p, reedsolomon.WithLeopardGF16(true))
				if err != nil {
					b.Fatal(err)
				}
				shards := make([][]byte, n+p)
				for k := range shards {
					if k < n {
						shards[k] = data[k*seg : (k+1)*seg]
					} else {
						shards[k] = make([]byte, seg)
					}
				}
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					if err := enc.Encode(shards); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("op=create/r=%v/impl=manifest", r), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Create(&memFile{}, src, Redundancy(r)); err != nil {
					b.Fatal(err)
				}
			}
		})
		out := &memFile{}
		Create(out, src, Redundancy(r))
		m, _ := Open(out, int64(len(out.b)))
		b.Run(fmt.Sprintf("op=check/r=%v/impl=manifest", r), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if rep, err := m.Check(context.Background(), 0, bytes.NewReader(data), size, nil); err != nil || !rep.OK() {
					b.Fatal(rep, err)
				}
			}
		})
		if r == 0 {
			continue
		}
		lost := m.Parity * m.Stripes
		cut := size - int64(lost)*seg
		b.Run(fmt.Sprintf("op=repair-tail/r=%v/impl=manifest", r), func(b *testing.B) {
			b.SetBytes(int64(lost) * seg)
			b.ReportAllocs()
			f := &memFile{b: make([]byte, size)}
			for b.Loop() {
				copy(f.b, data)
				f.b = f.b[:cut]
				rep, _ := m.Check(context.Background(), 0, f, cut, nil)
				if _, err := m.Repair(context.Background(), []Target{f}, []*Report{rep}, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
