package jacobi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/replicate"
	"github.com/sigcheck/sigcheck/channel/tcp"
)

// Setup is one run of the application under replication, all ranks in
// this process (goroutines), over the local or a loopback TCP transport.
type Setup struct {
	Virtual, Degree int
	Protocol        replicate.Protocol
	Transport       string // "local" or "tcp"
	Config          Config
	Injector        *replicate.Injector
	// DetectOnly with Reference: see replicate.WithDetectOnly.
	DetectOnly bool
	Reference  int
}

// Outcome is what a run gave.
type Outcome struct {
	// Result is virtual rank 0's, as its replica 0 computed it; Agree says
	// whether every replica of rank 0 computed the same hash.
	Result  Result
	Agree   bool
	Hashes  []uint64 // rank 0's answer as each of its replicas computed it
	Err     error    // the first rank's error (the job was aborted on it)
	Stats   []replicate.Stats
	Map     replicate.Map
	Elapsed time.Duration
}

// Natives starts n native ranks over a transport; close them when done.
func Natives(ctx context.Context, transport string, n int) ([]*channel.Endpoint, error) {
	switch transport {
	case "local":
		return channel.NewLocal(n)
	case "tcp":
		return tcp.Loopback(ctx, n, tcp.Config{})
	}
	return nil, fmt.Errorf("jacobi: unknown transport %q (local, tcp)", transport)
}

// RunReplicated runs the application as s says. The first rank to fail
// aborts the job (the others' contexts are cancelled), as an MPI job's
// abort would.
func RunReplicated(ctx context.Context, s Setup) (Outcome, error) {
	eps, err := Natives(ctx, s.Transport, s.Virtual*s.Degree)
	if err != nil {
		return Outcome{}, err
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	opts := []replicate.Option{replicate.WithProtocol(s.Protocol)}
	if s.Injector != nil {
		opts = append(opts, replicate.WithInjector(*s.Injector))
	}
	if s.DetectOnly {
		opts = append(opts, replicate.WithDetectOnly(s.Reference))
	}
	cs := make([]*replicate.Comm, len(eps))
	for i, ep := range eps {
		if cs[i], err = replicate.New(ep, s.Degree, opts...); err != nil {
			return Outcome{}, err
		}
		defer cs[i].Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]Result, len(cs))
	errs := make([]error, len(cs))
	var first sync.Once
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			cfg := s.Config
			cfg.OnStep = c.Step
			results[i], errs[i] = Run(ctx, c, cfg)
			if errs[i] != nil {
				first.Do(func() {
					firstErr = fmt.Errorf("rank %d replica %d: %w", c.Rank(), c.Replica(), errs[i])
					cancel()
				})
			}
		})
	}
	wg.Wait()
	o := Outcome{Elapsed: time.Since(start), Err: firstErr, Map: cs[0].Map(), Agree: true}
	o.Result = results[o.Map.Native(0, 0)]
	for k := range s.Degree {
		o.Hashes = append(o.Hashes, results[o.Map.Native(0, k)].Hash)
		if results[o.Map.Native(0, k)].Hash != o.Result.Hash {
			o.Agree = false
		}
	}
	for _, c := range cs {
		o.Stats = append(o.Stats, c.Stats())
	}
	return o, nil
}

// RunPlain runs the application unreplicated on n ranks of a transport.
func RunPlain(ctx context.Context, transport string, n int, cfg Config) (Result, time.Duration, error) {
	eps, err := Natives(ctx, transport, n)
	if err != nil {
		return Result{}, 0, err
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	res := make([]Result, n)
	errs := make([]error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { res[i], errs[i] = Run(ctx, ep, cfg) })
	}
	wg.Wait()
	return res[0], time.Since(start), errors.Join(errs...)
}
