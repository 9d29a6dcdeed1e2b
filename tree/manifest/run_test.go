package manifest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// runsOf turns a set of segments (below 64) into sorted, disjoint runs.
func runsOf(set uint64) []Run {
	var r []Run
	for j := range 64 {
		if set>>j&1 == 1 {
			r = appendSegment(r, j)
		}
	}
	return r
}

func setOf(runs []Run) uint64 {
	var s uint64
	for _, r := range runs {
		for j := r.First; j < r.end(); j++ {
			s |= 1 << j
		}
	}
	return s
}

// canonical says whether runs are sorted, disjoint, not touching and not
// empty: the form every list of runs keeps.
func canonical(runs []Run) bool {
	for k, r := range runs {
		if r.N <= 0 || k > 0 && runs[k-1].end() >= r.First {
			return false
		}
	}
	return true
}

// The set operations on runs are the set operations on their segments,
// and keep runs canonical.
func TestRunSetLaws(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(28)
	params.MinSuccessfulTests = 2000
	props := gopter.NewProperties(params)
	props.Property("union, intersect, subtract, intersects and Count are ∪, ∩, ∖, ∈ and |·|", prop.ForAll(
		func(a, b uint64, j int) bool {
			ra, rb := runsOf(a), runsOf(b)
			u, i, d := union(ra, rb), intersect(ra, rb), subtract(ra, rb)
			return setOf(u) == a|b && setOf(i) == a&b && setOf(d) == a&^b &&
				canonical(u) && canonical(i) && canonical(d) &&
				intersects(ra, j) == (a>>j&1 == 1) && Count(ra) == int64(popcount(a))
		},
		gen.UInt64(), gen.UInt64(), gen.IntRange(0, 63),
	))
	props.TestingRun(t)
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// The repair's law: over random sets, parity and damage (segments flipped,
// files truncated, extended or missing, parity chunks damaged), Plan passes
// exactly when every stripe's lost segments are no more than its parity
// rows intact over each chunk; when it passes, Repair restores every file
// byte for byte, and when it fails, nothing is written.
func TestRepairLaw(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(28)
	params.MinSuccessfulTests = 150
	props := gopter.NewProperties(params)
	props.Property("Plan passes ⟺ the parity suffices; then Repair restores; else nothing is written", prop.ForAll(
		func(seed uint64) bool {
			r := rand.New(rand.NewPCG(seed, 7))
			seg := []int{64, 100, 1000, 2048}[r.IntN(4)]
			nfiles := 1 + r.IntN(4)
			var names []string
			var datas [][]byte
			for k := range nfiles {
				names = append(names, string(rune('a'+k))+".bin")
				datas = append(datas, randomData(r.IntN(20*seg), r.Uint64()))
			}
			opt := PerStripe(1 + r.IntN(6))
			if r.IntN(3) == 0 {
				opt = Redundancy(float64(1 + r.IntN(30)))
			}
			m, mf := makeSet(t, names, datas, Segment(seg), opt)
			// Damage the parity, a chunk at a time.
			if r.IntN(2) == 0 && m.Parity > 0 {
				for range 1 + r.IntN(3) {
					off, n := m.ParityRange(r.IntN(m.Stripes), r.IntN(m.Parity))
					mf.b[off+r.Int64N(n)] ^= 0x10
				}
				m, _ = Open(mf, int64(len(mf.b)))
			}
			files := make([]*memFile, nfiles)
			for k, d := range datas {
				b := slices.Clone(d)
				switch r.IntN(6) {
				case 0:
					files[k] = nil
					continue
				case 1:
					b = b[:r.IntN(len(b)+1)]
				case 2:
					b = append(b, randomData(1+r.IntN(seg), r.Uint64())...)
				}
				for range r.IntN(3) {
					if len(b) > 0 {
						b[r.IntN(len(b))] ^= 0x80
					}
				}
				files[k] = &memFile{b}
			}
			reps := checkAll(t, m, files)
			// What the law says: per stripe and chunk, lost ≤ intact rows.
			want := true
			lostIn := map[int]int{}
			for i, rep := range reps {
				for _, run := range rep.Lost() {
					for j := run.First; j < run.end(); j++ {
						if m.Parity == 0 {
							want = false
							continue
						}
						lostIn[int(m.Global(i, j)%int64(m.Stripes))]++
					}
				}
			}
			buf := make([]byte, 1000)
			for s, n := range lostIn {
				rows := m.intactRows(s, buf)
				for c := range m.chunks() {
					intact := 0
					for _, r := range rows {
						if r.has(c) {
							intact++
						}
					}
					if intact < n {
						want = false
					}
				}
			}
			before := make([][]byte, nfiles)
			for k, f := range files {
				if f != nil {
					before[k] = slices.Clone(f.b)
				}
			}
			err := repairAll(t, m, files, 0)
			if want != (err == nil) || err != nil && !errors.Is(err, ErrTooManyFaults) {
				t.Logf("seed %d: the law says %v, Repair says %v", seed, want, err)
				return false
			}
			for k, f := range files {
				if err == nil && !bytes.Equal(f.b, datas[k]) {
					t.Logf("seed %d: file %d not restored", seed, k)
					return false
				}
				if err != nil && before[k] != nil && !bytes.Equal(f.b, before[k]) {
					t.Logf("seed %d: a refused repair wrote file %d", seed, k)
					return false
				}
			}
			return true
		},
		gen.UInt64(),
	))
	props.TestingRun(t)
}
