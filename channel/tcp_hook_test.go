package channel_test

import (
	"context"
	"flag"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/tcp"
)

// tcpAuth runs every test of the engine over TCP with authenticated
// links (CI does, beside the run without).
var tcpAuth = flag.Bool("tcp.auth", false, "authenticate the frames of every TCP link of the engine's tests (tcp.AuthOn)")

// The internal tests' TCP transport (export_test.go says why it is set
// from here).
func init() {
	channel.SetLoopback(func(ctx context.Context, n int, secret []byte, auth bool, opts ...channel.TransportOption) ([]*channel.Endpoint, error) {
		cfg := tcp.Config{Secret: secret, Options: opts}
		if auth || *tcpAuth {
			cfg.Auth = tcp.AuthOn
		}
		return tcp.Loopback(ctx, n, cfg)
	})
}
