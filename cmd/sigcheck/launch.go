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
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/sigcheck/sigcheck/channel/tcp"
)

// launchLoopback runs a TCP job of n processes of this program on this
// machine, as sigcheck run and enc-allgather do with -transport tcp: it
// listens on a loopback port, makes the job's secret, starts copies 1 to
// n-1 with args and, in their environment, the job's address and secret
// plus env(k), and runs copy 0's part here (first, given the listener and
// the secret). A copy that fails, named what k (rank 3, node 1), fails
// the job and stops it: the others are killed and first's context is
// canceled, so that copy 0 does not wait for the lost copy until its
// join's deadline. When copy 0 fails, the others are stopped too.
//
// Each copy runs with its share of the machine's processors (procsEach),
// copy 0 too while first runs.
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
	procs := procsEach(n)
	for k := 1; k < n; k++ {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), tcp.EnvRoot+"="+ln.Addr().String(), tcp.EnvSecret+"="+secret)
		cmd.Env = append(cmd.Env, env(k)...)
		if procs > 0 {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(procs))
		}
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
				cancel() // the job cannot go on: this one would wait for it until its join's deadline
			}
		})
	}
	if procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	}
	err = first(ctx, ln, secret)
	if err != nil {
		cancel() // stop the others
	}
	wg.Wait()
	if len(fails) > 0 {
		// What failed first; this one's error, if it only says that it
		// was stopped for it, adds nothing.
		if err != nil && !errors.Is(err, context.Canceled) {
			fails = append(fails, err)
		}
		err = errors.Join(fails...)
	}
	return err
}

// procsEach is the GOMAXPROCS each of n copies on this machine runs
// with: its share of the processors this process may use (its own
// GOMAXPROCS, which follows the CPU affinity and a container's CPU
// quota; NumCPU does not see the quota), at least one; or 0 if
// GOMAXPROCS is set, which the copies then inherit. n Go runtimes
// each free to run as many threads as there are processors oversubscribe
// the machine: a rank's spare threads take the core its peer needs. With
// two ranks on 2 cores, GOMAXPROCS 1 each moved 1 MiB messages at 4.9
// GB/s against 3.7 at 2 each, and a 1 B one-way took 3.9–4.4 µs against
// 4.0–7.6. It is what mpirun's binding gives each rank (a core) when
// ranks and cores are as many, and what the C Open MPI ranks we measure
// against use: one thread each.
func procsEach(n int) int {
	if os.Getenv("GOMAXPROCS") != "" {
		return 0
	}
	return max(1, runtime.GOMAXPROCS(0)/n)
}
