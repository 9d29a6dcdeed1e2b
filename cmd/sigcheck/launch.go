package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// launchLoopback runs a TCP job of n processes of this program on this
// machine, as sigcheck run and enc-allgather do with -transport tcp: it
// listens on a loopback port, makes the job's secret, starts copies 1 to
// n-1 with args and, in their environment, the job's address and secret
// plus env(k), and runs copy 0's part here (first, given the listener and
// the secret). A copy that fails, named what k (rank 3, node 1), fails
// the job; when copy 0 fails, the others are stopped.
func launchLoopback(ctx context.Context, e *env, what string, n int, args []string,
	env func(k int) []string, first func(ctx context.Context, ln net.Listener, secret string) error) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot start the other %ss: %w", what, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	key := make([]byte, 32)
	rand.Read(key)
	secret := hex.EncodeToString(key)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		fails  []error
		stderr = &lockedWriter{w: e.stderr} // the copies write their errors concurrently
	)
	for k := 1; k < n; k++ {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), channel.EnvRoot+"="+ln.Addr().String(), channel.EnvSecret+"="+secret)
		cmd.Env = append(cmd.Env, env(k)...)
		cmd.Stdout = io.Discard
		cmd.Stderr = stderr
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			ln.Close()
			cancel()
			wg.Wait()
			return fmt.Errorf("starting %s %d: %w", what, k, err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil && ctx.Err() == nil {
				mu.Lock()
				fails = append(fails, fmt.Errorf("%s %d: %w", what, k, err))
				mu.Unlock()
			}
		})
	}
	err = first(ctx, ln, secret)
	if err != nil {
		cancel() // stop the others
	}
	wg.Wait()
	if err == nil && len(fails) > 0 {
		err = errors.Join(fails...)
	}
	return err
}
