package tcp

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

// startTCP starts n ranks over loopback TCP in this process.
func startTCP(n int, secret []byte) ([]*channel.Endpoint, error) {
	eps, _, err := startTxs(n, Config{Secret: secret})
	return eps, err
}

// startTxs starts n ranks over loopback TCP with base's settings, and
// returns their transports too.
func startTxs(n int, base Config) ([]*channel.Endpoint, []*tx, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return loopback(ctx, n, base)
}

// asComms returns endpoints as Comms, closed when the test ends.
func asComms(t testing.TB, eps []*channel.Endpoint, err error) []channel.Comm {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	comms := make([]channel.Comm, len(eps))
	for i, ep := range eps {
		comms[i] = ep
		t.Cleanup(func() { ep.Close() })
	}
	return comms
}

func closeAll(eps []*channel.Endpoint) {
	for _, ep := range eps {
		ep.Close()
	}
}

// spmd runs fn on every rank at once, as an MPI program does, and returns
// the ranks' errors joined, under a deadline: a hang fails.
func spmd(t testing.TB, comms []channel.Comm, fn func(ctx context.Context, c channel.Comm) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for i, c := range comms {
		wg.Go(func() {
			if err := fn(ctx, c); err != nil {
				errs[i] = fmt.Errorf("rank %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 99))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
