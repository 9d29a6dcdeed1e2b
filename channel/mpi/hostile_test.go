//go:build mpi

package mpi

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// connectTx connects this rank for one test and returns its endpoint
// and transport; the endpoint is closed at the test's end.
func connectTx(t *testing.T) (*channel.Endpoint, *tx, context.Context) {
	t.Helper()
	var got *tx
	testHookConnected = func(x *tx) { got = x }
	defer func() { testHookConnected = nil }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	ep, err := Connect(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ep.Close()
		cancel()
	})
	return ep, got, ctx
}

// frameBytes is h encoded, followed by payload.
func frameBytes(h channel.Header, payload []byte) []byte {
	b := make([]byte, channel.HeaderSize, channel.HeaderSize+len(payload))
	h.Put(b)
	return append(b, payload...)
}

// TestHostilePeer: rank 1 breaks the protocol in one way per case, with
// raw MPI messages on the endpoint's communicator; rank 0's receive from
// it ends with a *channel.PeerError that is channel.ErrProtocol, never a
// panic, a hang or a message. Every case has a fresh endpoint: the link
// is gone after it.
func TestHostilePeer(t *testing.T) {
	msg := func(n int) channel.Header {
		return channel.Header{Kind: wire.KindMsg, Tag: 5, ID: 1, Total: int64(n), Plen: n}
	}
	cases := []struct {
		name string
		send func(t *tx) error
	}{
		{"a frame shorter than a header", func(t *tx) error { return t.sendRaw(0, tagFrame, make([]byte, 10)) }},
		{"a header that fails its check", func(t *tx) error {
			b := frameBytes(msg(3), []byte{1, 2, 3})
			b[9] ^= 1
			return t.sendRaw(0, tagFrame, b)
		}},
		{"a frame message longer than any", func(t *tx) error {
			return t.sendRaw(0, tagFrame, frameBytes(msg(frameMax), make([]byte, frameMax)))
		}},
		{"an inline payload shorter than its header says", func(t *tx) error {
			return t.sendRaw(0, tagFrame, frameBytes(msg(100), make([]byte, 50)))
		}},
		{"a payload longer than its header says", func(t *tx) error {
			if err := t.sendRaw(0, tagFrame, frameBytes(msg(64<<10), nil)); err != nil {
				return err
			}
			return t.sendRaw(0, tagPayload, make([]byte, 128<<10))
		}},
		{"a payload shorter than its header says", func(t *tx) error {
			if err := t.sendRaw(0, tagFrame, frameBytes(msg(64<<10), nil)); err != nil {
				return err
			}
			return t.sendRaw(0, tagPayload, make([]byte, 1<<10))
		}},
		{"a header whose payload never comes", func(t *tx) error {
			return t.sendRaw(0, tagFrame, frameBytes(msg(64<<10), nil))
		}},
	}
	testHookPayloadTimeout = 300 * time.Millisecond
	defer func() { testHookPayloadTimeout = 0 }()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep, x, ctx := connectTx(t)
			switch ep.Rank() {
			case 1:
				if err := c.send(x); err != nil {
					t.Fatal(err)
				}
			case 0:
				_, err := ep.Recv(ctx, 1, 5, make([]byte, 1<<20))
				var pe *channel.PeerError
				if !errors.As(err, &pe) || pe.Rank != 1 || !errors.Is(err, channel.ErrProtocol) {
					t.Fatalf("the receive gave %v", err)
				}
				t.Log(err)
			}
		})
	}
}
