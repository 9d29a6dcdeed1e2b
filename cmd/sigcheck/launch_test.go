package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// A copy that fails stops the job at once: copy 0, which waits for it
// (as it waits for the ranks to join), has its context canceled, and the
// error names the copy that failed, not the cancellation it caused.
func TestLaunchCopyFails(t *testing.T) {
	t.Setenv("SIGCHECK_TEST_AS_MAIN", "1") // the copies are this binary
	var errOut bytes.Buffer
	e := &env{stdout: &bytes.Buffer{}, stderr: &errOut}
	start := time.Now()
	err := launchLoopback(context.Background(), e, "rank", 2, []string{"run", "-no-such-flag", "latency"},
		func(int) []string { return nil },
		func(ctx context.Context, ln net.Listener, secret string) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Second):
				return errors.New("copy 0 was not stopped")
			}
		})
	if err == nil || !strings.Contains(err.Error(), "rank 1: exit status 2") || errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "not stopped") {
		t.Errorf("error %v, want rank 1's failure alone", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	if !strings.Contains(errOut.String(), "no-such-flag") {
		t.Errorf("the copy's own message is not on stderr: %q", errOut.String())
	}
}
