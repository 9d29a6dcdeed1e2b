package encrypt

import (
	"math/rand/v2"
	"testing"
)

// Table II, counted as the algorithms run, for p and N powers of two in
// block order (the paper's setting), every rank's critical path taken.
func TestTableII(t *testing.T) {
	const m = 64
	for _, tc := range []struct{ p, n int }{{16, 4}, {64, 8}, {128, 8}, {8, 2}, {16, 8}} {
		j := localJob(t, tc.p, tc.n, Block)
		for _, a := range Algorithms() {
			cs, err := j.check(t, a, m, false)
			if err != nil {
				t.Fatalf("p=%d N=%d %v: %v", tc.p, tc.n, a.Title(), err)
			}
			got, want := maxCounts(cs), TableII(a, tc.p, tc.n, m)
			if got.Metrics() != want.Metrics() {
				t.Errorf("p=%d N=%d %v:\n got  %v\n want %v (Table II)", tc.p, tc.n, a.Title(), got, want)
			}
		}
	}
}

// Table I's lower bounds hold for every algorithm, and for p or N not
// powers of two the counts stay within what the paper states: RD-based
// schedules take at most 2·lg p steps, and encryption and decryption
// stay within Table II's formulas with ℓ the largest node and lg
// rounded up.
func TestBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	const m = 32
	for range 12 {
		p := 2 + rng.IntN(40)
		n := 2 + rng.IntN(min(p-1, 9))
		mp := Mapping(rng.IntN(2))
		j := localJob(t, p, n, mp)
		lmin, lmax := j.lay.PerNode()
		for _, a := range Algorithms() {
			cs, err := j.check(t, a, m, false)
			if err != nil {
				t.Fatalf("p=%d N=%d %v %v: %v", p, n, mp, a.Title(), err)
			}
			got := maxCounts(cs)
			lb := LowerBound(p, n, lmax, m)
			g, l := got.Metrics(), lb.Metrics()
			for i := range g {
				// HS1/HS2 leave intra-node transfers out, so their r_c and
				// s_c fall below Table I's (the paper says so too).
				if (a == HS1 || a == HS2) && i < 2 {
					continue
				}
				if g[i] < l[i] {
					t.Errorf("p=%d N=%d %v %v: %s = %d below Table I's %d", p, n, mp, a.Title(), MetricNames[i], g[i], l[i])
				}
			}
			P, N := int64(p), int64(n)
			switch a {
			case CRD:
				// the extra ranks' hand-over, RD among nodes, RD in a node
				if got.Rc > 1+2*lg(n)+2*lg(lmax) {
					t.Errorf("p=%d N=%d %v %v: r_c = %d > 1 + 2·lg N + 2·lg ℓ", p, n, mp, a.Title(), got.Rc)
				}
			case Naive, ORD, ORD2:
				if got.Rc > 2*lg(p) {
					t.Errorf("p=%d N=%d %v %v: r_c = %d > 2·lg p", p, n, mp, a.Title(), got.Rc)
				}
			case HS1, HS2:
				if got.Rc > 2*lg(n) {
					t.Errorf("p=%d N=%d %v %v: r_c = %d > 2·lg N", p, n, mp, a.Title(), got.Rc)
				}
			}
			switch a {
			case CRing, CRD, HS2:
				// One block sealed a rank (a carrier of extra ranks seals theirs
				// with its own, once), and a node's share of the others opened.
				if got.Re != 1 || got.Se > int64(m*ceilDivInt(lmax, lmin)) {
					t.Errorf("p=%d N=%d %v %v: r_e=%d s_e=%d", p, n, mp, a.Title(), got.Re, got.Se)
				}
				if a == HS2 && got.Sd > int64(m)*ceilDiv(P-int64(lmin), int64(lmin)) {
					t.Errorf("p=%d N=%d %v %v: s_d=%d", p, n, mp, a.Title(), got.Sd)
				}
			case HS1:
				if got.Re != 1 || got.Rd > ceilDiv(N-1, int64(lmin)) {
					t.Errorf("p=%d N=%d %v %v: r_e=%d r_d=%d", p, n, mp, a.Title(), got.Re, got.Rd)
				}
			case Naive:
				if got.Re != 1 || got.Rd != P-1 || got.Sd != (P-1)*m {
					t.Errorf("p=%d N=%d %v %v: %v", p, n, mp, a.Title(), got)
				}
			}
		}
	}
}

func ceilDivInt(a, b int) int { return (a + b - 1) / b }

func TestLowerBoundRd(t *testing.T) {
	// ⌈lg N / lg(ℓ+1)⌉: N=8, ℓ=1 → 3; ℓ=3 → 2 (4 < 8 ≤ 16); ℓ=7 → 1.
	for _, tc := range []struct {
		n, l int
		rd   int64
	}{{8, 1, 3}, {8, 3, 2}, {8, 7, 1}, {2, 1, 1}, {9, 2, 2}, {10, 2, 3}} {
		if got := LowerBound(tc.n*tc.l, tc.n, tc.l, 1).Rd; got != tc.rd {
			t.Errorf("N=%d ℓ=%d: r_d ≥ %d, want %d", tc.n, tc.l, got, tc.rd)
		}
	}
}

// With a model, the counts carry the critical path's time: on two
// nodes of one rank, C-Ring seals m bytes, sends them, opens m bytes.
func TestModelTime(t *testing.T) {
	md := Model{Intra: Link{1, 1}, Inter: Link{100, 2}, Encrypt: Link{10, 3}, Decrypt: Link{1000, 5}}
	lay, _ := NewLayout(2, 2, Block)
	j := newJob(t, endpoints(t, "local", 2), lay, func(int) []Option { return []Option{WithModel(md)} })
	const m = 7
	cs, err := j.check(t, CRing, m, false)
	if err != nil {
		t.Fatal(err)
	}
	want := (10 + 3*m) + (100 + 2*m) + (1000 + 5*m)
	for r, c := range cs {
		if c.Time != float64(want) {
			t.Errorf("rank %d: time %g, want %d", r, c.Time, want)
		}
	}
}
