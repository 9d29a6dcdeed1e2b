package tree

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/zeebo/xxh3"
)

// Build beside XXH3 of the same buffer in one call, the limit a tree
// approaches when its inner nodes cost little. "serial" is one goroutine
// (the single-core ratio), "parallel" all of GOMAXPROCS (the speed-up),
// beside "xxh3-parts", the same on parts of the buffer at once.
// The 16-byte segments are the paper's expensive end.
//
//	go test ./tree -run '^$' -bench Build -count 6 | benchstat -col /impl -
func BenchmarkBuild(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 64 << 20} {
		data := randomData(size, 1) // filled: untouched memory reads as zero pages
		b.Run(fmt.Sprintf("size=%s/seg=all/impl=xxh3", sizeName(size)), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				xxh3.Hash(data)
			}
		})
		// The parallel limit: XXH3 over GOMAXPROCS equal parts at once (at
		// 64 MiB, what the memory bus delivers to all cores).
		b.Run(fmt.Sprintf("size=%s/seg=all/impl=xxh3-parts", sizeName(size)), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			p := runtime.GOMAXPROCS(0)
			for b.Loop() {
				var wg sync.WaitGroup
				for k := range p {
					wg.Go(func() { xxh3.Hash(data[k*size/p : (k+1)*size/p]) })
				}
				wg.Wait()
			}
		})
		for _, seg := range []int{16, 64, 2048, 4096} {
			if seg == 16 && size > 1<<20 {
				continue
			}
			for _, impl := range []struct {
				name    string
				workers int
			}{{"serial", 1}, {"parallel", runtime.GOMAXPROCS(0)}} {
				b.Run(fmt.Sprintf("size=%s/seg=%d/impl=%s", sizeName(size), seg, impl.name), func(b *testing.B) {
					b.SetBytes(int64(size))
					b.ReportAllocs()
					for b.Loop() {
						if _, err := Build(data, Segment(seg), Workers(impl.workers)); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprint(n)
}

// Locating 1 and 16 corrupted segments among 32768, both trees built
// beforehand: Diff (both trees at hand), the descent through its wire
// forms (what crosses between ranks), and the paper's critical path, one
// fault per round, each round sending the whole critical path and the
// receiver fixing the segment it found before the next.
//
//	go test ./tree -run '^$' -bench Locate -count 6
func BenchmarkLocate(b *testing.B) {
	const seg, n = 64, 32768
	data := randomData(seg*n, 7)
	sender, err := Build(data, Segment(seg))
	if err != nil {
		b.Fatal(err)
	}
	size := sender.Hash().Size()
	for _, k := range []int{1, 16} {
		faulty := make([]int, k)
		for i := range faulty {
			faulty[i] = (i*n)/k + 1234 // spread out, so that paths share little
		}
		bad := corrupt(data, seg, faulty, 8)
		receiver, err := Build(bad, Segment(seg))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("faults=%d/impl=diff", k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, _ := Diff(sender, receiver); len(got) != k {
					b.Fatalf("found %d", len(got))
				}
			}
		})
		b.Run(fmt.Sprintf("faults=%d/impl=descent", k), func(b *testing.B) {
			b.ReportAllocs()
			var rounds, wire int
			for b.Loop() {
				rounds, wire = 0, 0
				msg := AppendRoot(nil, sender.Root(), size)
				wire += len(msg)
				root, _, _ := DecodeRoot(msg)
				d := NewDescent(receiver, root)
				for {
					req, ok := d.Request()
					if !ok {
						break
					}
					q, _ := req.AppendBinary(nil)
					var got Request
					if err := got.UnmarshalBinary(q); err != nil {
						b.Fatal(err)
					}
					ans, _ := sender.Answer(got)
					a := ans.AppendBinary(nil, size)
					back, _, _ := DecodeAnswer(a)
					if err := d.Answer(back); err != nil {
						b.Fatal(err)
					}
					rounds++
					wire += len(q) + len(a)
				}
				if len(d.Faulty()) != k {
					b.Fatalf("found %d", len(d.Faulty()))
				}
			}
			b.ReportMetric(float64(rounds), "rounds/op")
			b.ReportMetric(float64(wire), "wire-B/op")
		})
		b.Run(fmt.Sprintf("faults=%d/impl=critical", k), func(b *testing.B) {
			b.ReportAllocs()
			var rounds, wire int
			for b.Loop() {
				b.StopTimer()
				mine := receiver.Clone()
				work := append([]byte(nil), bad...)
				b.StartTimer()
				rounds, wire = 0, 0
				for {
					msg := AppendCritical(nil, sender.CriticalPath(), size)
					path, _, _ := DecodeCritical(msg)
					wire += len(msg)
					j, err := mine.LocateCritical(path)
					if err != nil {
						b.Fatal(err)
					}
					if j < 0 {
						break
					}
					rounds++
					off, m := mine.SegmentRange(j) // the retransmission
					copy(work[off:off+m], data[off:off+m])
					mine.Update(work, j)
				}
				if rounds != k {
					b.Fatalf("%d rounds for %d faults", rounds, k)
				}
			}
			b.ReportMetric(float64(rounds), "rounds/op")
			b.ReportMetric(float64(wire), "wire-B/op")
		})
	}
}

// Manifests beside their limits, on the same 64 MiB in memory: a copy (the
// least any pass over the data costs), XXH3 over it (what the tree's
// leaves cost), klauspost's own Encode of the same stripes (the parity
// another program would compute); then writing a manifest with P = 0, 4
// and 16, checking a file against it, and repairing a truncated tail of
// P×stripes segments (the most the parity rebuilds).
//
//	go test ./tree -run '^$' -bench Manifest -count 6 | benchstat -col /impl -
func BenchmarkManifest(b *testing.B) {
	const size = 64 << 20
	data := randomData(size, 2)
	dst := make([]byte, size)
	b.Run("op=create/p=0/impl=copy", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			copy(dst, data)
		}
	})
	b.Run("op=create/p=0/impl=xxh3", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			xxh3.Hash(data)
		}
	})
	for _, p := range []int{0, 4, 16} {
		opts := []Option{WithParity(p)}
		if p == 0 {
			opts = nil
		}
		src := []Source{{Name: "data", Data: bytesReaderAt(data), Size: size}}
		if p > 0 {
			// klauspost's Encode of the same data in stripes of 256-P
			// contiguous segments: the parity arithmetic alone.
			b.Run(fmt.Sprintf("op=create/p=%d/impl=klauspost-encode", p), func(b *testing.B) {
				par, _ := newParityLayout(size, DefaultSegment, p)
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					for s := range par.Stripes() {
						if _, err := par.encodeStripe(par.stripeData(data, s)); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
		b.Run(fmt.Sprintf("op=create/p=%d/impl=manifest", p), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := CreateManifest(&memFile{}, src, opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
		out := &memFile{}
		m, _ := CreateManifest(out, src, opts...)
		m, _ = OpenManifest(out, int64(len(out.b)))
		b.Run(fmt.Sprintf("op=check/p=%d/impl=manifest", p), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if rep, err := m.Check(0, bytesReaderAt(data), size); err != nil || !rep.OK() {
					b.Fatal(rep, err)
				}
			}
		})
		if p == 0 {
			continue
		}
		lost := m.Parity * m.Stripes
		cut := size - int64(lost)*DefaultSegment
		b.Run(fmt.Sprintf("op=repair-tail/p=%d/impl=manifest", p), func(b *testing.B) {
			b.SetBytes(int64(lost) * DefaultSegment)
			b.ReportAllocs()
			f := &memFile{b: make([]byte, size)}
			for b.Loop() {
				copy(f.b, data)
				f.b = f.b[:cut]
				rep, _ := m.Check(0, f, cut)
				if err := m.Repair([]Target{f}, []*Report{rep}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// bytesReaderAt reads a byte slice at offsets (bytes.Reader without its
// position).
type bytesReaderAt []byte

func (r bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r)) {
		return 0, io.EOF
	}
	n := copy(p, r[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// BenchmarkRoot: Hash.Root of a 64 KiB message in 2 KiB segments (what
// the Merkle layer computes on both sides of every such message) beside
// one XXH3 of the whole (what the checksum layer computes).
//
//	go test ./tree -run '^$' -bench Root -count 6
func BenchmarkRoot(b *testing.B) {
	const size = 64 << 10
	data := randomData(size, 1)
	h, err := LookupHash(DefaultHash)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("impl=Root", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			h.Root(data, DefaultSegment)
		}
	})
	b.Run("impl=xxh3", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			xxh3.Hash(data)
		}
	})
}
