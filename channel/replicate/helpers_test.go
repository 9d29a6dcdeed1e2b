package replicate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// natives returns n ranks of a transport, closed when the test ends.
func natives(t testing.TB, transport string, n int) []channel.Comm {
	t.Helper()
	var eps []*channel.Endpoint
	var err error
	switch transport {
	case "local":
		eps, err = channel.NewLocal(n)
	case "tcp":
		eps, err = startTCP(n)
	default:
		t.Fatalf("no transport %q", transport)
	}
	if err != nil {
		t.Fatal(err)
	}
	out := make([]channel.Comm, n)
	for i, ep := range eps {
		out[i] = ep
		t.Cleanup(func() { ep.Close() })
	}
	return out
}

func startTCP(n int) ([]*channel.Endpoint, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return channel.ConnectLoopback(ctx, n, channel.TCPConfig{})
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
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			if err := fn(ctx, c); err != nil {
				errs[i] = fmt.Errorf("native %d (rank %d replica %d): %w", i, c.Rank(), c.Replica(), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
