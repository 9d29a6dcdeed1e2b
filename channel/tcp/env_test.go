package tcp

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
)

// mpirunEnv sets what Open MPI's mpirun sets for one rank of a job on
// one node, with dir as the session directory.
func mpirunEnv(t *testing.T, dir string, rank, size int, key string) {
	for _, k := range []string{EnvRank, EnvSize, EnvRoot, EnvSecret} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	t.Setenv("OMPI_COMM_WORLD_RANK", strconv.Itoa(rank))
	t.Setenv("OMPI_COMM_WORLD_SIZE", strconv.Itoa(size))
	t.Setenv(envOMPISessionDir, dir)
	t.Setenv(envOMPIJob, "1774125057")
	t.Setenv(envOMPINodes, "1")
	t.Setenv(envOMPIJobKey, key)
}

func TestTCPConfigFromMpirun(t *testing.T) {
	for _, key := range []string{"d1a730b70f6811da-8839a47db852dd78", ""} {
		t.Run("key="+key, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cfgs := make([]Config, 3)
			for r := range 3 { // rank 0 first: the others find its file at once
				mpirunEnv(t, dir, r, 3, key)
				cfg, err := ConfigFromEnvContext(ctx)
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
				cfgs[r] = cfg
			}
			if cfgs[0].Listener == nil || cfgs[1].Root != cfgs[0].Listener.Addr().String() || len(cfgs[0].Secret) == 0 ||
				!bytes.Equal(cfgs[1].Secret, cfgs[0].Secret) || !bytes.Equal(cfgs[2].Secret, cfgs[0].Secret) {
				t.Fatalf("the ranks disagree: root %q, listener %v, secrets %q %q %q", cfgs[1].Root, cfgs[0].Listener, cfgs[0].Secret, cfgs[1].Secret, cfgs[2].Secret)
			}
			eps := make([]*channel.Endpoint, 3)
			errs := make([]error, 3)
			var wg sync.WaitGroup
			for r := range 3 {
				wg.Go(func() { eps[r], errs[r] = Connect(ctx, cfgs[r]) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			for _, ep := range eps {
				defer ep.Close()
			}
			if err := eps[2].Send(ctx, 0, 1, []byte("through mpirun's session directory")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			st, err := eps[0].Recv(ctx, 2, 1, buf)
			if err != nil || string(buf[:st.Len]) != "through mpirun's session directory" {
				t.Fatalf("got %q, %v", buf[:st.Len], err)
			}
		})
	}
}

// A rank whose rank 0 never writes its file says what it waited for.
func TestTCPConfigFromMpirunTimeout(t *testing.T) {
	dir := t.TempDir()
	mpirunEnv(t, dir, 1, 2, "k")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := ConfigFromEnvContext(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("got %v", err)
	}
}

func TestTCPConfigFromMpirunNodes(t *testing.T) {
	mpirunEnv(t, t.TempDir(), 1, 2, "k")
	t.Setenv(envOMPINodes, "2")
	if _, err := ConfigFromEnvContext(context.Background()); err == nil || !strings.Contains(err.Error(), EnvRoot) {
		t.Fatalf("a job on two nodes gave %v", err)
	}
}

func TestParseJobFile(t *testing.T) {
	for _, c := range []struct {
		in     string
		addr   string
		secret string
		ok     bool
	}{
		{"127.0.0.1:4000\n\n", "127.0.0.1:4000", "", true},
		{"[::1]:4000\nabcd\n", "[::1]:4000", "abcd", true},
		{"127.0.0.1:4000\n", "", "", false},
		{"127.0.0.1\n\n", "", "", false},
		{"127.0.0.1:0\n\n", "", "", false},
		{":4000\n\n", "", "", false},
		{"127.0.0.1:4000\nx\ny\n", "", "", false},
		{strings.Repeat("a", maxJobFile+1), "", "", false},
	} {
		addr, secret, err := ParseJobFile([]byte(c.in))
		if c.ok != (err == nil) || addr != c.addr || string(secret) != c.secret {
			t.Errorf("%q: %q %q %v", c.in, addr, secret, err)
		}
		if err != nil && !errors.Is(err, ErrJobFile) {
			t.Errorf("%q: %v is not ErrJobFile", c.in, err)
		}
	}
}

// SIGCHECK_TCP_AUTH sets Config.Auth; a value that is not auto, on or
// off is an error that names the variable.
func TestConfigFromEnvAuth(t *testing.T) {
	t.Setenv(EnvRank, "0")
	t.Setenv(EnvSize, "1")
	for v, want := range map[string]Auth{"": AuthAuto, "auto": AuthAuto, "on": AuthOn, "off": AuthOff, "ON": AuthOn} {
		t.Setenv(EnvAuth, v)
		if cfg, err := ConfigFromEnv(); err != nil || cfg.Auth != want {
			t.Errorf("%s=%q: %v %v, want %v", EnvAuth, v, cfg.Auth, err, want)
		}
	}
	t.Setenv(EnvAuth, "maybe")
	if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), EnvAuth) {
		t.Errorf("%s=maybe: %v", EnvAuth, err)
	}
}
