package encrypt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/channeltest"
)

// job is p ranks laid out on nodes, each with its Gatherer.
type job struct {
	lay Layout
	gs  []*Gatherer
}

// spmd runs fn on every rank at once and joins their errors; a hang
// fails at the deadline.
func spmd(t testing.TB, n int, fn func(ctx context.Context, r int) error) error {
	t.Helper()
	return channeltest.Run(t, n, 60*time.Second, nil, fn)
}

// endpoints of p ranks: in process, or over loopback TCP (each rank its
// own tcp.Connect, as ranks of one node in one process are).
func endpoints(t testing.TB, transport string, p int) []*channel.Endpoint {
	t.Helper()
	return channeltest.Endpoints(t, transport, p)
}

// newJob makes the Gatherers of a job over eps on layout lay.
func newJob(t testing.TB, eps []*channel.Endpoint, lay Layout, opts func(r int) []Option) *job {
	t.Helper()
	nodes := NewNodes(lay)
	j := &job{lay: lay, gs: make([]*Gatherer, len(eps))}
	err := spmd(t, len(eps), func(ctx context.Context, r int) error {
		var o []Option
		if opts != nil {
			o = opts(r)
		}
		g, err := New(ctx, eps[r], eps[r], lay, nodes[lay.Node(r)], o...)
		j.gs[r] = g
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func localJob(t testing.TB, p, n int, m Mapping) *job {
	t.Helper()
	lay, err := NewLayout(p, n, m)
	if err != nil {
		t.Fatal(err)
	}
	return newJob(t, endpoints(t, "local", p), lay, nil)
}

func block(m int, rank int, seed uint64) []byte {
	b := make([]byte, m)
	r := rand.New(rand.NewPCG(seed, uint64(rank)))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// check runs alg once on the job with m-byte blocks and checks that every
// rank got every block; it returns each rank's counts.
func (j *job) check(t testing.TB, a Algorithm, m int, plain bool) ([]Counts, error) {
	t.Helper()
	p := j.lay.Size()
	seed := rand.Uint64()
	want := make([]byte, 0, p*m)
	for r := range p {
		want = append(want, block(m, r, seed)...)
	}
	counts := make([]Counts, p)
	err := spmd(t, p, func(ctx context.Context, r int) error {
		recv := make([]byte, p*m)
		for i := range recv {
			recv[i] = 0xAA
		}
		var err error
		if plain {
			counts[r], err = j.gs[r].RunUnencrypted(ctx, a, block(m, r, seed), recv)
		} else {
			counts[r], err = j.gs[r].Run(ctx, a, block(m, r, seed), recv)
		}
		if err != nil {
			return err
		}
		for o := range p {
			if string(recv[o*m:(o+1)*m]) != string(want[o*m:(o+1)*m]) {
				return fmt.Errorf("%v: block of rank %d differs", a, o)
			}
		}
		return nil
	})
	return counts, err
}

func maxCounts(cs []Counts) Counts {
	var c Counts
	for _, x := range cs {
		c = c.Max(x)
	}
	return c
}
