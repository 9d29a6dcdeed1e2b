package channel_test

import (
	"context"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/tcp"
)

// The internal tests' TCP transport (export_test.go says why it is set
// from here).
func init() {
	channel.SetLoopback(func(ctx context.Context, n int, secret []byte, opts ...channel.TransportOption) ([]*channel.Endpoint, error) {
		return tcp.Loopback(ctx, n, tcp.Config{Secret: secret, Options: opts})
	})
}
