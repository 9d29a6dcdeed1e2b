package channel

import (
	"context"
	"errors"
	"time"
)

// The engine's tests over TCP. channel/tcp imports this package, so this
// package's own (internal) tests cannot import it: the import would be a
// cycle. The external test package can, and does (tcp_hook_test.go): it
// hands these tests channel/tcp's Loopback through SetLoopback before any
// test runs, so that the properties that use the engine's internals run
// over real sockets as over NewLocal.

// testHookLoopback starts n ranks over loopback TCP with the job secret
// secret and the endpoint options opts; auth asks for links whose frames
// are authenticated (tcp.AuthOn), which loopback links are not by
// default (and all are under the flag -tcp.auth).
var testHookLoopback func(ctx context.Context, n int, secret []byte, auth bool, opts ...TransportOption) ([]*Endpoint, error)

// SetLoopback sets testHookLoopback (from package channel_test).
func SetLoopback(f func(ctx context.Context, n int, secret []byte, auth bool, opts ...TransportOption) ([]*Endpoint, error)) {
	testHookLoopback = f
}

// startTCP starts n ranks over loopback TCP in this process.
func startTCP(n int, secret []byte) ([]*Endpoint, error) { return startTCPWithOpts(n, secret) }

func startTCPWith(n int, secret []byte, inj *Injector) ([]*Endpoint, error) {
	return startTCPWithOpts(n, secret, WithInjector(inj))
}

func startTCPWithOpts(n int, secret []byte, opts ...TransportOption) ([]*Endpoint, error) {
	return loopback(n, secret, false, opts...)
}

// startTCPAuth starts n ranks over loopback TCP whose links' frames are
// authenticated.
func startTCPAuth(n int, secret []byte) ([]*Endpoint, error) { return loopback(n, secret, true) }

func loopback(n int, secret []byte, auth bool, opts ...TransportOption) ([]*Endpoint, error) {
	if testHookLoopback == nil {
		return nil, errors.New("no TCP transport: tcp_hook_test.go did not set it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return testHookLoopback(ctx, n, secret, auth, opts...)
}

// sockBuf is the socket buffer size of channel/tcp's links (its
// sockBuf), which the bare loopback baselines of bench_test.go give
// their connections too.
const sockBuf = 4 << 20
