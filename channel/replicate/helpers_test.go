package replicate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/channeltest"
)

// natives returns n ranks of a transport, closed when the test ends.
func natives(t testing.TB, transport string, n int) []channel.Comm {
	t.Helper()
	out := make([]channel.Comm, n)
	for i, ep := range channeltest.Endpoints(t, transport, n) {
		out[i] = ep
	}
	return out
}

// world makes n virtual ranks of r replicas over a transport.
func world(t testing.TB, transport string, n, r int, opts ...Option) []*Comm {
	t.Helper()
	nat := natives(t, transport, n*r)
	cs := make([]*Comm, n*r)
	for i, c := range nat {
		x, err := New(c, r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = x
		t.Cleanup(func() { x.Close() })
	}
	return cs
}

// spmd runs fn on every replica at once and joins their errors; a hang
// fails at the deadline.
func spmd(t testing.TB, cs []*Comm, fn func(ctx context.Context, c *Comm) error) error {
	t.Helper()
	name := func(i int) string {
		return fmt.Sprintf("native %d (rank %d replica %d)", i, cs[i].Rank(), cs[i].Replica())
	}
	return channeltest.Run(t, len(cs), 20*time.Second, name, func(ctx context.Context, i int) error { return fn(ctx, cs[i]) })
}

func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
