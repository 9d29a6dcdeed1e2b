package replicate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sigcheck/sigcheck/channel"
)

// TestLayersOverReplicatedComm: a replicated Comm is a channel.Comm, and
// channel's protection layers and typed messaging run over it (they used
// to panic on a Comm of another package): a ring of messages arrives
// whole, as over the Comm itself.
func TestLayersOverReplicatedComm(t *testing.T) {
	for _, layer := range []string{"checksum", "merkle"} {
		t.Run(layer, func(t *testing.T) {
			const n = 3
			cs := world(t, "local", n, 2)
			err := spmd(t, cs, func(ctx context.Context, x *Comm) error {
				var c channel.Comm
				var err error
				if layer == "checksum" {
					c, err = channel.WithChecksum(x)
				} else {
					c, err = channel.WithMerkle(x)
				}
				if err != nil {
					return err
				}
				for _, size := range []int{0, 1, 1000, 70000} {
					if err := c.Send(ctx, (c.Rank()+1)%n, 5, pattern(size, uint64(c.Rank()*1000+size))); err != nil {
						return err
					}
					buf := make([]byte, size+3)
					prev := (c.Rank() + n - 1) % n
					st, err := c.Recv(ctx, prev, 5, buf)
					if err != nil {
						return err
					}
					if st != (channel.Status{Source: prev, Tag: 5, Len: size}) || !bytes.Equal(buf[:size], pattern(size, uint64(prev*1000+size))) {
						return fmt.Errorf("size %d: status %+v, data wrong", size, st)
					}
				}
				if s, ok := channel.LookupStats(c); !ok || s.MessagesReceived != 4 || s.Detected != 0 {
					return fmt.Errorf("the layer's stats: %+v (%v)", s, ok)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNewNeedsDuplicator: New over a Comm it cannot duplicate is an
// error, not a panic.
func TestNewNeedsDuplicator(t *testing.T) {
	nat := natives(t, "local", 2)
	l, err := channel.WithChecksum(struct{ channel.Comm }{nat[0]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(l, 1); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("New over a %T: %v", l, err)
	}
}
