package replicate_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/replicate"
	"github.com/sigcheck/sigcheck/channel/replicate/jacobi"
)

// The cost of replication on a real application, against the program a
// user would run instead: the same stencil unreplicated. "plain" is one
// job of n ranks; "plain×r" is r such jobs at once, the same native ranks
// (goroutines, cores) in use as a replicated run, so that what separates
// it from "msgplushash/r" is the protocol alone — the paper's 1x against
// 2x and 3x, each on its own cores (its 0–30 %).
//
//	go test ./channel/replicate -run '^$' -bench Jacobi -count 6 | benchstat -

var jacobiCfg = jacobi.Config{N: 256, Steps: 40, Check: 10}

const jacobiRanks = 4

func endpoints(b *testing.B, n int, transport string) []channel.Comm {
	eps, err := jacobi.Natives(context.Background(), transport, n)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]channel.Comm, n)
	for i, ep := range eps {
		out[i] = ep
		b.Cleanup(func() { ep.Close() })
	}
	return out
}

func replicated(b *testing.B, n, r int, transport string, p replicate.Protocol) []channel.Comm {
	cs, _ := replicatedOver(b, n, r, transport, p)
	return cs
}

func replicatedOver(b *testing.B, n, r int, transport string, p replicate.Protocol) ([]channel.Comm, []channel.Comm) {
	nat := endpoints(b, n*r, transport)
	out := make([]channel.Comm, len(nat))
	for i, c := range nat {
		x, err := replicate.New(c, r, replicate.WithProtocol(p))
		if err != nil {
			b.Fatal(err)
		}
		out[i] = x
		b.Cleanup(func() { x.Close() })
	}
	return out, nat
}

// runAll runs the stencil on every Comm of every job at once.
func runAll(b *testing.B, jobs [][]channel.Comm) {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, job := range jobs {
		for _, c := range job {
			wg.Go(func() {
				if _, err := jacobi.Run(context.Background(), c, jacobiCfg); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func BenchmarkJacobi(b *testing.B) {
	for _, tr := range []string{"local", "tcp"} {
		b.Run(fmt.Sprintf("transport=%s/plain", tr), func(b *testing.B) {
			jobs := [][]channel.Comm{endpoints(b, jacobiRanks, tr)}
			b.ReportAllocs()
			for b.Loop() {
				runAll(b, jobs)
			}
		})
		for _, r := range []int{2, 3} {
			b.Run(fmt.Sprintf("transport=%s/plain×%d", tr, r), func(b *testing.B) {
				var jobs [][]channel.Comm
				for range r {
					jobs = append(jobs, endpoints(b, jacobiRanks, tr))
				}
				b.ReportAllocs()
				for b.Loop() {
					runAll(b, jobs)
				}
			})
			for _, p := range []replicate.Protocol{replicate.MsgPlusHash, replicate.AllToAll} {
				b.Run(fmt.Sprintf("transport=%s/%s/r=%d", tr, p, r), func(b *testing.B) {
					jobs := [][]channel.Comm{replicated(b, jacobiRanks, r, tr, p)}
					b.ReportAllocs()
					for b.Loop() {
						runAll(b, jobs)
					}
				})
			}
		}
	}
}

// BenchmarkJacobiOverhead runs plain×r and MsgPlusHash at r in turns,
// each iteration one of each, and reports the median of the ratios of
// each pair: on a machine shared with other work, the drift between two
// sub-benchmarks run a minute apart swamps a 20 % difference; pairs run
// back to back see the same load.
func BenchmarkJacobiOverhead(b *testing.B) {
	for _, tr := range []string{"local", "tcp"} {
		for _, r := range []int{2, 3} {
			b.Run(fmt.Sprintf("transport=%s/r=%d", tr, r), func(b *testing.B) {
				var plain [][]channel.Comm
				for range r {
					plain = append(plain, endpoints(b, jacobiRanks, tr))
				}
				rep := [][]channel.Comm{replicated(b, jacobiRanks, r, tr, replicate.MsgPlusHash)}
				var ratios []float64
				for b.Loop() {
					t0 := time.Now()
					runAll(b, plain)
					t1 := time.Now()
					runAll(b, rep)
					ratios = append(ratios, float64(time.Since(t1))/float64(t1.Sub(t0)))
				}
				slices.Sort(ratios)
				b.ReportMetric(100*(ratios[len(ratios)/2]-1), "overhead-%")
			})
		}
	}
}

// Point to point: a message from virtual rank 0 to 1 and back, and the
// bytes each application message puts on the wire (all replicas), from
// the replicas' own counts.
func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		name := fmt.Sprintf("size=%dKiB", size>>10)
		b.Run(name+"/plain", func(b *testing.B) {
			pingPong(b, endpoints(b, 2, "local"), size, nil)
		})
		for _, p := range []replicate.Protocol{replicate.MsgPlusHash, replicate.AllToAll} {
			for _, r := range []int{2, 3} {
				b.Run(fmt.Sprintf("%s/%s/r=%d", name, p, r), func(b *testing.B) {
					cs, nat := replicatedOver(b, 2, r, "local", p)
					pingPong(b, cs, size, func(msgs int) {
						// What the replicas handed over, and what the
						// transport counted (the same, less nothing).
						var bytes, under uint64
						for i, c := range cs {
							bytes += c.(*replicate.Comm).Stats().BytesSent
							under += nat[i].(*channel.Endpoint).Stats().BytesSent
						}
						b.ReportMetric(float64(bytes)/float64(msgs), "wire-B/msg")
						b.ReportMetric(float64(under)/float64(msgs), "transport-B/msg")
					})
				})
			}
		}
	}
}

func pingPong(b *testing.B, cs []channel.Comm, size int, report func(msgs int)) {
	b.SetBytes(int64(2 * size))
	b.ReportAllocs()
	msgs := 0
	ctx := context.Background()
	bufs := make([][]byte, len(cs))
	for i := range bufs {
		bufs[i] = make([]byte, size)
	}
	errs := make([]error, len(cs))
	for b.Loop() {
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Go(func() {
				buf := bufs[i]
				if c.Rank() == 0 {
					if errs[i] = c.Send(ctx, 1, 1, buf); errs[i] == nil {
						_, errs[i] = c.Recv(ctx, 1, 2, buf)
					}
				} else {
					if _, errs[i] = c.Recv(ctx, 0, 1, buf); errs[i] == nil {
						errs[i] = c.Send(ctx, 0, 2, buf)
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		msgs += 2
	}
	if report != nil {
		report(msgs)
	}
}
