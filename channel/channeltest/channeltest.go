// Package channeltest makes jobs of channel ranks in one process for the
// tests of packages built on channel, as net/http/httptest makes servers
// for those built on net/http.
package channeltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/tcp"
)

// Endpoints returns the n ranks of a job in this process over transport
// "local" (channel.NewLocal) or "tcp" (loopback sockets, a tcp.Connect per
// rank: tcp.Loopback), closed when the test ends. Any other
// transport, or a job that does not form in 20 s, fails the test.
func Endpoints(t testing.TB, transport string, n int) []*channel.Endpoint {
	t.Helper()
	var eps []*channel.Endpoint
	var err error
	switch transport {
	case "local":
		eps, err = channel.NewLocal(n)
	case "tcp":
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		eps, err = tcp.Loopback(ctx, n, tcp.Config{})
		cancel()
	default:
		t.Fatalf("channeltest: no transport %q (local or tcp)", transport)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		t.Cleanup(func() { ep.Close() })
	}
	return eps
}

// Run runs fn for ranks 0 to n-1 at once, each in a goroutine of its
// own, under a context that ends after timeout (so that a rank that
// hangs fails rather than stalls the test), and joins the errors they
// return, each after its rank's name (name(r), or "rank r" if name is
// nil).
func Run(t testing.TB, n int, timeout time.Duration, name func(r int) string, fn func(ctx context.Context, r int) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			if err := fn(ctx, r); err != nil {
				label := fmt.Sprintf("rank %d", r)
				if name != nil {
					label = name(r)
				}
				errs[r] = fmt.Errorf("%s: %w", label, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
