package tree

import (
	"fmt"
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
