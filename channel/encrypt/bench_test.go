package encrypt

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"

	"github.com/sigcheck/sigcheck/channel"
)

var benchSizes = []int{1, 1 << 10, 64 << 10, 1 << 20}

// BenchmarkModelInputs measures what HereModel prices: AES-128-GCM
// sealing and opening (one core), and a plain copy (the limit of a
// transfer through a node's memory), in the same run.
func BenchmarkModelInputs(b *testing.B) {
	key := make([]byte, jobKeyLen)
	rand.Read(key)
	a, _ := newGCM(key)
	var nonce [12]byte
	for _, m := range benchSizes {
		pt := make([]byte, m)
		ct := a.Seal(nil, nonce[:], pt, nil)
		dst := make([]byte, 0, m+tagLen)
		b.Run(fmt.Sprintf("seal/size=%d", m), func(b *testing.B) {
			b.SetBytes(int64(m))
			b.ReportAllocs()
			for b.Loop() {
				a.Seal(dst[:0], nonce[:], pt, nil)
			}
		})
		b.Run(fmt.Sprintf("open/size=%d", m), func(b *testing.B) {
			b.SetBytes(int64(m))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Open(dst[:0], nonce[:], ct, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("copy/size=%d", m), func(b *testing.B) {
			b.SetBytes(int64(m))
			b.ReportAllocs()
			out := make([]byte, m)
			for b.Loop() {
				copy(out, pt)
			}
		})
	}
}

// BenchmarkAllgather: each algorithm, sealed and in the clear, beside
// channel.Allgather on the same ranks (p=4 on 2 simulated nodes, and
// p=16 on 4), in process. SetBytes is the bytes each rank receives.
func BenchmarkAllgather(b *testing.B) {
	for _, tc := range []struct{ p, n int }{{4, 2}, {16, 4}} {
		lay, _ := NewLayout(tc.p, tc.n, Block)
		eps, err := channel.NewLocal(tc.p)
		if err != nil {
			b.Fatal(err)
		}
		j := newJob(b, eps, lay, nil)
		for _, m := range benchSizes {
			if tc.p*m > 4<<20 {
				continue
			}
			sends := make([][]byte, tc.p)
			recvs := make([][]byte, tc.p)
			for r := range sends {
				sends[r], recvs[r] = block(m, r, 1), make([]byte, tc.p*m)
			}
			run := func(b *testing.B, name string, fn func(ctx context.Context, r int) error) {
				b.Run(fmt.Sprintf("p=%d,N=%d/%s/size=%d", tc.p, tc.n, name, m), func(b *testing.B) {
					b.SetBytes(int64((tc.p - 1) * m))
					b.ReportAllocs()
					ctx := context.Background()
					for b.Loop() {
						var wg sync.WaitGroup
						errs := make([]error, tc.p)
						for r := range tc.p {
							wg.Go(func() { errs[r] = fn(ctx, r) })
						}
						wg.Wait()
						for _, err := range errs {
							if err != nil {
								b.Fatal(err)
							}
						}
					}
				})
			}
			run(b, "channel", func(ctx context.Context, r int) error { return channel.Allgather(ctx, eps[r], sends[r], recvs[r]) })
			for _, a := range append(Algorithms(), Auto) {
				run(b, a.String(), func(ctx context.Context, r int) error {
					_, err := j.gs[r].Run(ctx, a, sends[r], recvs[r])
					return err
				})
				if a != Auto {
					run(b, "plain:"+a.String(), func(ctx context.Context, r int) error {
						_, err := j.gs[r].RunUnencrypted(ctx, a, sends[r], recvs[r])
						return err
					})
				}
			}
		}
	}
}
