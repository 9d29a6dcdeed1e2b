package osu

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// runLocal runs cfg on n in-process ranks and returns rank 0's rows.
func runLocal(t *testing.T, n int, cfg Config, opts ...channel.TransportOption) ([]Row, error) {
	t.Helper()
	eps, err := channel.NewLocal(n, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		rows []Row
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs = make([]error, n)
	)
	for r, ep := range eps {
		wg.Go(func() {
			errs[r] = Run(ctx, ep, cfg, func(row Row) {
				mu.Lock()
				rows = append(rows, row)
				mu.Unlock()
			})
			if errs[r] != nil {
				cancel() // the others would wait for this rank forever
			}
		})
	}
	wg.Wait()
	return rows, errors.Join(errs...)
}

// ranksFor returns 2 for the point-to-point benchmarks, which run between
// 2 ranks only, and 3 for the collectives.
func ranksFor(op string) int {
	if op == Latency || op == Bandwidth {
		return 2
	}
	return 3
}

func TestEveryOpEveryProtection(t *testing.T) {
	sizes := []int{1, 7, 1000, 70000}
	prot := Protections()
	for _, op := range Ops() {
		t.Run(op, func(t *testing.T) {
			rows, err := runLocal(t, ranksFor(op), Config{Op: op, Protect: prot, Sizes: sizes, Iters: 3, Warmup: 1, Transport: "local"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(sizes)*len(prot) {
				t.Fatalf("%d rows, want %d", len(rows), len(sizes)*len(prot))
			}
			for i, r := range rows {
				want := Row{Op: op, Transport: "local", Protect: prot[i%len(prot)], Size: sizes[i/len(prot)], Unit: Unit(op), Iters: 3}
				got := r
				got.Value = 0
				if got != want {
					t.Errorf("row %d = %+v, want %+v (value aside)", i, r, want)
				}
				if !(r.Value > 0) {
					t.Errorf("row %d: value %v", i, r.Value)
				}
			}
		})
	}
}

// Under injected flips the protected layers deliver every message intact
// and catch every damaged frame; unprotected, the check sees the damage.
func TestInjectedFaults(t *testing.T) {
	for _, op := range Ops() {
		t.Run(op, func(t *testing.T) {
			inj := &channel.Injector{Rate: 0.1, Seed: 7}
			rows, err := runLocal(t, ranksFor(op), Config{Op: op, Protect: []string{"checksum", "merkle"}, Sizes: []int{100, 300000}, Iters: 6, Warmup: 1},
				channel.WithInjector(inj))
			if err != nil {
				t.Fatal(err)
			}
			var injected uint64
			for _, r := range rows {
				if r.Mismatches != 0 || r.Detected != r.Injected {
					t.Errorf("%+v: want no mismatch and detected = injected", r)
				}
				injected += r.Injected
			}
			if injected == 0 {
				t.Fatal("nothing injected: the test tests nothing")
			}
		})
		t.Run(op+"/none", func(t *testing.T) {
			rows, err := runLocal(t, ranksFor(op), Config{Op: op, Sizes: []int{5, 3000}, Iters: 4, Warmup: 1},
				channel.WithInjector(&channel.Injector{Rate: 0.3, Seed: 1}))
			if err != nil {
				t.Fatal(err)
			}
			var mismatches uint64
			for _, r := range rows {
				if r.Detected != 0 || (r.Injected > 0) != (r.Mismatches > 0) {
					t.Errorf("%+v: unprotected, want a mismatch for some damaged frames, none without, nothing detected", r)
				}
				mismatches += r.Mismatches
			}
			if mismatches == 0 {
				t.Error("no mismatch seen: the check checks nothing")
			}
		})
	}
}

func TestData(t *testing.T) {
	var b bufs
	for n := 1; n <= 40; n++ {
		b.want = nil
		for _, src := range []int{0, 3} {
			d := make([]byte, n)
			fill(d, src)
			stamp(d, 12)
			if !b.check(d, src, 12) {
				t.Fatalf("n=%d src=%d: fresh data fails its check", n, src)
			}
			if b.check(d, src, 13) {
				t.Fatalf("n=%d: another iteration's stamp passes", n)
			}
			if n > 8 && b.check(d, src+1, 12) {
				t.Fatalf("n=%d: another rank's data passes", n)
			}
			if b.check(d[:n-1], src, 12) {
				t.Fatalf("n=%d: a short buffer passes", n)
			}
			for i := range n {
				for bit := range 8 {
					d[i] ^= 1 << bit
					if b.check(d, src, 12) {
						t.Fatalf("n=%d: bit %d of byte %d flipped passes", n, bit, i)
					}
					d[i] ^= 1 << bit
				}
			}
		}
	}
}

func TestBadConfig(t *testing.T) {
	eps, err := channel.NewLocal(1)
	if err != nil {
		t.Fatal(err)
	}
	defer eps[0].Close()
	for _, cfg := range []Config{
		{Op: "pingpong"},
		{Op: Latency},
		{Op: Bandwidth},
		{Op: Bcast, Protect: []string{"crc"}},
		{Op: Bcast, Protect: []string{"merkle", "merkle"}},
		{Op: Bcast, Sizes: []int{0}},
		{Op: Bcast, Sizes: []int{MaxSize + 1}},
		{Op: Bcast, Iters: -1},
	} {
		err := Run(context.Background(), eps[0], cfg, nil)
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: error %v, want ErrConfig", cfg, err)
		}
	}
	// Latency and bw on 3 ranks are refused, not run on 2 of them.
	for _, op := range []string{Latency, Bandwidth} {
		cfg := Config{Op: op}
		if err := cfg.Check(3); !errors.Is(err, ErrConfig) || err.Error() != op+" runs between 2 ranks, not 3" {
			t.Errorf("%s on 3 ranks: %v", op, err)
		}
	}
	// A window no machine holds is refused, not allocated.
	big := Config{Op: Bandwidth, Window: 1 << 20, Sizes: []int{8, 4096}}
	if err := big.Check(2); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "1048576 messages of 4096 bytes") {
		t.Errorf("a 4 GiB window: %v", err)
	}
	if ok := (Config{Op: Bandwidth, Sizes: []int{MaxSize}}); ok.Check(2) != nil {
		t.Errorf("the largest size with the default window: %v", ok.Check(2))
	}
	// One rank is enough for the collectives.
	if err := Run(context.Background(), eps[0], Config{Op: Allgather, Sizes: []int{8}, Iters: 2}, nil); err != nil {
		t.Error(err)
	}
}

func TestDefaults(t *testing.T) {
	s := DefaultSizes(Latency, 2)
	if len(s) != 27 || s[0] != 1 || s[26] != 64<<20 {
		t.Errorf("latency sizes %v", s)
	}
	if s := DefaultSizes(Allgather, 4); s[len(s)-1] != 16<<20 {
		t.Errorf("allgather on 4 ranks up to %d", s[len(s)-1])
	}
	for _, tc := range []struct {
		op                string
		size, warm, iters int
	}{
		{Latency, 8, 100, 1000},
		{Latency, 1 << 20, 10, 100},
		{Latency, 64 << 20, 2, 10},
		{Bandwidth, 8, 10, 100},
		{Bandwidth, 64 << 20, 2, 5},
	} {
		cfg := Config{Op: tc.op}
		w, i := cfg.counts(tc.size, cfg.window(tc.size))
		if w != tc.warm || i != tc.iters {
			t.Errorf("%s %d: %d+%d iterations, want %d+%d", tc.op, tc.size, w, i, tc.warm, tc.iters)
		}
	}
}

// With Full, every row has a spread that brackets its mean, from as many
// samples as iterations (pooled over the ranks for the collectives).
func TestFull(t *testing.T) {
	for _, op := range Ops() {
		t.Run(op, func(t *testing.T) {
			rows, err := runLocal(t, ranksFor(op), Config{Op: op, Protect: []string{"none", "merkle"}, Sizes: []int{64, 100000}, Iters: 7, Warmup: 1, Full: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				sp := r.Spread
				if sp == nil {
					t.Fatalf("%+v: no spread", r)
				}
				if !(0 < sp.Min && sp.Min <= sp.P50 && sp.P50 <= sp.P90 && sp.P90 <= sp.P99 && sp.P99 <= sp.Max) {
					t.Errorf("%+v: spread %+v out of order", r, *sp)
				}
				// The mean lies within [min, max] (bw's mean is a harmonic
				// one, all bytes over all time: within the windows' range too).
				if r.Value < sp.Min*0.999 || r.Value > sp.Max*1.001 {
					t.Errorf("%+v: mean %v outside [%v, %v]", r, r.Value, sp.Min, sp.Max)
				}
			}
		})
	}
	rows, err := runLocal(t, 2, Config{Op: Latency, Sizes: []int{8}, Iters: 3})
	if err != nil || len(rows) != 1 || rows[0].Spread != nil {
		t.Errorf("without Full: %+v, %v", rows, err)
	}
}

func TestSpreadOf(t *testing.T) {
	var s []float64
	for i := 100; i >= 1; i-- {
		s = append(s, float64(i))
	}
	got := *spreadOf(s)
	if want := (Spread{Min: 1, P50: 50, P90: 90, P99: 99, Max: 100}); got != want {
		t.Errorf("1..100: %+v, want %+v", got, want)
	}
	if got := *spreadOf([]float64{3}); got != (Spread{3, 3, 3, 3, 3}) {
		t.Errorf("one sample: %+v", got)
	}
	if spreadOf(nil) != nil {
		t.Error("no samples: a spread")
	}
}
