package csum

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zeebo/xxh3"
)

// Sizes of the bandwidth tables: a cache line, a page, an L1-sized
// message, an L2-sized one, and one from memory.
var benchSizes = []int{64, 4 << 10, 32 << 10, 1 << 20, 64 << 20}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// filled returns n random bytes: untouched memory would read as shared zero
// pages and flatter every loop.
func filled(n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	p := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	return p
}

var sinkV Value
var sinkU uint64

// BenchmarkSum is the bandwidth table: every algorithm, and the read and
// copy baselines over the same buffers, in one run.
func BenchmarkSum(b *testing.B) {
	for _, size := range benchSizes {
		p := filled(size)
		dst := filled(size)
		b.Run("alg=read/size="+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				sinkU = ReadWords(p)
			}
		})
		b.Run("alg=copy/size="+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				Copy(dst, p)
			}
		})
		b.Run("alg=copy-builtin/size="+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				copy(dst, p)
			}
		})
		b.Run("alg=copy-stream/size="+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				streamCopy(dst, p)
			}
		})
		for _, a := range All() {
			b.Run("alg="+a.Name+"/size="+sizeName(size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					sinkV = a.Sum(p)
				}
			})
		}
	}
}

// BenchmarkCopySum compares the fused copy+checksum with the fastest plain
// copy and with copy-then-checksum, on the same buffers.
func BenchmarkCopySum(b *testing.B) {
	for _, size := range []int{32 << 10, 1 << 20, 64 << 20} {
		src, dst := filled(size), filled(size)
		b.Run("alg=copy/size="+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				Copy(dst, src)
			}
		})
		b.Run("alg=copy-builtin/size="+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				copy(dst, src)
			}
		})
		for _, name := range []string{"xxh3", "crc32c", "fletcher64", "fnv1a64"} {
			a, _ := Lookup(name)
			b.Run("alg=copy+"+name+"/size="+sizeName(size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					sinkV = a.CopySum(dst, src)
				}
			})
			b.Run("alg=copy-then-"+name+"/size="+sizeName(size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					Copy(dst, src)
					sinkV = a.Sum(dst)
				}
			})
		}
	}
}

// BenchmarkRegistry measures the cost of going through the registry: a
// one-shot XXH3 through Algorithm.Sum beside xxh3.Hash called directly.
func BenchmarkRegistry(b *testing.B) {
	a, _ := Lookup("xxh3")
	for _, size := range []int{16, 64, 1 << 10, 64 << 10} {
		p := filled(size)
		b.Run("direct/size="+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				sinkU = xxh3.Hash(p)
			}
		})
		b.Run("registry/size="+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				sinkV = a.Sum(p)
			}
		})
	}
}

// BenchmarkSumParallel: the combinable algorithms on all cores at 64 MiB.
func BenchmarkSumParallel(b *testing.B) {
	p := filled(64 << 20)
	for _, name := range []string{"crc32c", "crc64", "adler32", "fletcher64"} {
		a, _ := Lookup(name)
		b.Run("alg="+name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				sinkV = a.SumParallel(p)
			}
		})
	}
}

func BenchmarkStreamPiece(b *testing.B) {
	src, dst := filled(64<<20), filled(64<<20)
	defer func(p int) { streamPiece = p }(streamPiece)
	for _, piece := range []int{1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 64 << 10} {
		for _, name := range []string{"xxh3", "crc32c"} {
			a, _ := Lookup(name)
			b.Run(fmt.Sprintf("alg=%s/piece=%s", name, sizeName(piece)), func(b *testing.B) {
				streamPiece = piece
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					sinkV = a.CopySum(dst, src)
				}
			})
		}
	}
}

func BenchmarkStreamMin(b *testing.B) {
	defer func(m int) { streamMin = m }(streamMin)
	for _, size := range []int{1 << 20, 4 << 20, 16 << 20} {
		src, dst := filled(size), filled(size)
		for _, mode := range []string{"regular", "streaming"} {
			for _, name := range []string{"xxh3", "crc32c"} {
				a, _ := Lookup(name)
				b.Run(fmt.Sprintf("size=%s/%s/alg=%s", sizeName(size), mode, name), func(b *testing.B) {
					streamMin = 1 << 20
					if mode == "regular" {
						streamMin = math.MaxInt
					}
					b.SetBytes(int64(size))
					for b.Loop() {
						sinkV = a.CopySum(dst, src)
					}
				})
			}
		}
	}
}
