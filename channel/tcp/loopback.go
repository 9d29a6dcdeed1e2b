package tcp

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"sync"

	"github.com/sigcheck/sigcheck/channel"
)

// Loopback starts a job of n TCP ranks in this process, on
// 127.0.0.1: every rank its own Endpoint over real sockets, joined as
// Connect joins them, with base's settings (Rank, Size, Root and
// Listener are set here; a Secret is drawn at random if base has none).
// It is for tests, studies and benchmarks that want the TCP transport
// without starting processes. On an error no endpoint is left open.
func Loopback(ctx context.Context, n int, base Config) ([]*channel.Endpoint, error) {
	eps, _, err := loopback(ctx, n, base)
	return eps, err
}

// loopback is Loopback, which also returns the ranks' transports (for
// the tests).
func loopback(ctx context.Context, n int, base Config) ([]*channel.Endpoint, []*tx, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	if len(base.Secret) == 0 {
		base.Secret = make([]byte, 32)
		rand.Read(base.Secret)
	}
	eps := make([]*channel.Endpoint, n)
	txs := make([]*tx, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		cfg := base
		cfg.Rank, cfg.Size, cfg.Root, cfg.Listener = r, n, ln.Addr().String(), nil
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() { eps[r], txs[r], errs[r] = connect(ctx, cfg) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
		ln.Close()
		return nil, nil, err
	}
	return eps, txs, nil
}
