package encrypt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/tcp"
)

// Environment of a node process that TestProcesses starts (this test
// binary again): the job, and which node it holds.
const (
	envNode = "ENCRYPT_TEST_NODE"
	envJob  = "ENCRYPT_TEST_JOB" // p,N,mapping,size,size…
)

func TestMain(m *testing.M) {
	if k := os.Getenv(envNode); k != "" {
		if err := nodeProcess(k, os.Getenv(envJob)); err != nil {
			fmt.Fprintln(os.Stderr, "node", k+":", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type procJob struct {
	p, n  int
	mp    Mapping
	sizes []int
}

func (j procJob) String() string {
	s := []string{strconv.Itoa(j.p), strconv.Itoa(j.n), strconv.Itoa(int(j.mp))}
	for _, m := range j.sizes {
		s = append(s, strconv.Itoa(m))
	}
	return strings.Join(s, ",")
}

func parseJob(s string) (procJob, error) {
	f := strings.Split(s, ",")
	var v []int
	for _, x := range f {
		n, err := strconv.Atoi(x)
		if err != nil {
			return procJob{}, err
		}
		v = append(v, n)
	}
	if len(v) < 4 {
		return procJob{}, fmt.Errorf("job %q", s)
	}
	return procJob{p: v[0], n: v[1], mp: Mapping(v[2]), sizes: v[3:]}, nil
}

// runNode joins node k's ranks to the job over TCP and runs every
// algorithm at every size on them, checking every block.
func runNode(ctx context.Context, j procJob, k int, root string, secret []byte, ln net.Listener) error {
	lay, err := NewLayout(j.p, j.n, j.mp)
	if err != nil {
		return err
	}
	mine := lay.Ranks(k)
	eps := make([]*channel.Endpoint, len(mine))
	errs := make([]error, len(mine))
	var wg sync.WaitGroup
	for i, r := range mine {
		cfg := tcp.Config{Rank: r, Size: j.p, Root: root, Secret: secret}
		if r == 0 {
			cfg.Listener = ln
		}
		wg.Go(func() { eps[i], errs[i] = tcp.Connect(ctx, cfg) })
	}
	wg.Wait()
	defer func() {
		for _, ep := range eps {
			if ep != nil {
				ep.Close()
			}
		}
	}()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	node := NewNode(lay, k)
	for i, r := range mine {
		wg.Go(func() {
			errs[i] = func() error {
				g, err := New(ctx, eps[i], eps[i], lay, node)
				if err != nil {
					return err
				}
				for _, m := range j.sizes {
					for _, a := range append(Algorithms(), Auto) {
						recv := make([]byte, j.p*m)
						if _, err := g.Run(ctx, a, block(m, r, uint64(m)), recv); err != nil {
							return fmt.Errorf("%v, %d B: %w", a.Title(), m, err)
						}
						for o := range j.p {
							if string(recv[o*m:(o+1)*m]) != string(block(m, o, uint64(m))) {
								return fmt.Errorf("rank %d, %v, %d B: rank %d's block differs", r, a.Title(), m, o)
							}
						}
					}
				}
				return channel.Barrier(ctx, eps[i]) // no rank leaves while others need it
			}()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func nodeProcess(k, job string) error {
	j, err := parseJob(job)
	if err != nil {
		return err
	}
	node, err := strconv.Atoi(k)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return runNode(ctx, j, node, os.Getenv(tcp.EnvRoot), []byte(os.Getenv(tcp.EnvSecret)), nil)
}

// Every algorithm over real processes: N processes of ℓ ranks each
// (this one holds node 0 and starts the others), joined over loopback
// TCP, the ranks of a process sharing its Node.
func TestProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no executable to start:", err)
	}
	for _, j := range []procJob{
		{4, 2, Block, []int{0, 1, 1000, 1 << 20}},
		{7, 3, Cyclic, []int{5, 70000}},
		{5, 5, Block, []int{33}},
	} {
		t.Run(j.String(), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			key := make([]byte, 16)
			rand.Read(key)
			secret := hex.EncodeToString(key)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var cmds []*exec.Cmd
			for k := 1; k < j.n; k++ {
				cmd := exec.CommandContext(ctx, exe, "-test.run", "^$")
				cmd.Env = append(os.Environ(), envNode+"="+strconv.Itoa(k), envJob+"="+j.String(),
					tcp.EnvRoot+"="+ln.Addr().String(), tcp.EnvSecret+"="+secret)
				cmd.Stderr = os.Stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds = append(cmds, cmd)
			}
			err = runNode(ctx, j, 0, ln.Addr().String(), []byte(secret), ln)
			if err != nil {
				cancel()
			}
			for k, cmd := range cmds {
				if werr := cmd.Wait(); werr != nil && err == nil {
					err = fmt.Errorf("node %d: %w", k+1, werr)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
