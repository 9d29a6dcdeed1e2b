package channeltest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRunJoinsNamedErrors(t *testing.T) {
	boom := errors.New("boom")
	err := Run(t, 3, time.Second, nil, func(ctx context.Context, r int) error {
		if r == 1 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "rank 1: boom") || strings.Contains(err.Error(), "rank 0") {
		t.Fatalf("Run returned %v", err)
	}
	err = Run(t, 2, 10*time.Millisecond, func(r int) string { return "node " + string(rune('A'+r)) },
		func(ctx context.Context, r int) error { <-ctx.Done(); return ctx.Err() })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "node B:") {
		t.Fatalf("a rank stuck past the timeout: %v", err)
	}
}

func TestEndpointsCarryMessages(t *testing.T) {
	for _, transport := range []string{"local", "tcp"} {
		eps := Endpoints(t, transport, 3)
		err := Run(t, 3, 10*time.Second, nil, func(ctx context.Context, r int) error {
			if r == 0 {
				for d := 1; d < 3; d++ {
					if err := eps[0].Send(ctx, d, 1, []byte{byte(d)}); err != nil {
						return err
					}
				}
				return nil
			}
			var b [1]byte
			if _, err := eps[r].Recv(ctx, 0, 1, b[:]); err != nil {
				return err
			}
			if b[0] != byte(r) {
				return errors.New("wrong byte")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", transport, err)
		}
	}
}
