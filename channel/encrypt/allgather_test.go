package encrypt

import (
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// jobCase is a random job: p ranks on n nodes, a mapping, m-byte blocks.
type jobCase struct {
	p, n int
	mp   Mapping
	m    int
}

var sizes = []int{0, 1, 7, 64, 1000, 4096, 65536, 300000, 1 << 20}

// jobGen draws p in 1…maxP, N in 1…p (dividing p or not), a mapping and
// a size from 0 B to 1 MiB; the size is cut so that the job's p² blocks
// stay under budget bytes in memory.
func jobGen(maxP, budget int) gopter.Gen {
	return gopter.CombineGens(gen.IntRange(1, maxP), gen.IntRange(1, 1<<20), gen.IntRange(0, 1), gen.IntRange(0, len(sizes)-1)).
		Map(func(v []any) jobCase {
			p := v[0].(int)
			c := jobCase{p: p, n: 1 + v[1].(int)%p, mp: Mapping(v[2].(int)), m: sizes[v[3].(int)]}
			for c.m > 0 && 2*p*p*c.m > budget {
				c.m /= 4
			}
			return c
		})
}

// Every algorithm gives every rank exactly the blocks an unencrypted
// all-gather gives (each rank's own, in rank order), in process.
func TestEveryAlgorithmGathers(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(13)
	params.MinSuccessfulTests = 30
	if testing.Short() {
		params.MinSuccessfulTests = 8
	}
	props := gopter.NewProperties(params)
	props.Property("encrypted all-gather = all-gather", prop.ForAll(func(c jobCase) (bool, error) {
		j := localJob(t, c.p, c.n, c.mp)
		for _, a := range Algorithms() {
			if _, err := j.check(t, a, c.m, false); err != nil {
				t.Logf("p=%d N=%d %v m=%d %v: %v", c.p, c.n, c.mp, c.m, a.Title(), err)
				return false, err
			}
		}
		_, err := j.check(t, Auto, c.m, false)
		return err == nil, err
	}, jobGen(64, 64<<20)))
	props.TestingRun(t)
}

// The same over loopback TCP: each rank its own connection, ranks of a
// node sharing a Node as the ranks of one process do.
func TestEveryAlgorithmGathersTCP(t *testing.T) {
	params := gopter.DefaultTestParametersWithSeed(14)
	params.MinSuccessfulTests = 6
	props := gopter.NewProperties(params)
	props.Property("encrypted all-gather over TCP = all-gather", prop.ForAll(func(c jobCase) (bool, error) {
		lay, err := NewLayout(c.p, c.n, c.mp)
		if err != nil {
			return false, err
		}
		j := newJob(t, endpoints(t, "tcp", c.p), lay, nil)
		for _, a := range Algorithms() {
			if _, err := j.check(t, a, c.m, false); err != nil {
				t.Logf("p=%d N=%d %v m=%d %v: %v", c.p, c.n, c.mp, c.m, a.Title(), err)
				return false, err
			}
		}
		return true, nil
	}, jobGen(10, 32<<20)))
	props.TestingRun(t)
}

// The unencrypted counterparts gather the same.
func TestUnencryptedGathers(t *testing.T) {
	for _, c := range []jobCase{{6, 4, Block, 100}, {9, 3, Cyclic, 1000}, {16, 4, Block, 3}} {
		j := localJob(t, c.p, c.n, c.mp)
		for _, a := range Algorithms() {
			if _, err := j.check(t, a, c.m, true); err != nil {
				t.Errorf("p=%d N=%d %v %v: %v", c.p, c.n, c.mp, a.Title(), err)
			}
		}
	}
}

// Many all-gathers in a row on one job, of changing sizes and algorithms
// (HS1 and HS2 alternate their shared buffers; link counters carry on).
func TestRepeated(t *testing.T) {
	j := localJob(t, 12, 3, Cyclic)
	for i := range 40 {
		a := Algorithms()[i%8]
		if _, err := j.check(t, a, (i*37)%500, false); err != nil {
			t.Fatalf("call %d %v: %v", i, a.Title(), err)
		}
	}
}
