//go:build mpi

package mpi_test

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/mpi"
	"github.com/sigcheck/sigcheck/cmd/sigcheck/osu"
)

// TestOSU runs the OSU-style benchmarks of `sigcheck run` over this
// transport when -osu names one (latency, bw, bcast, allgather): what
// scripts/mpi-bench.sh and CI run, e.g.
//
//	mpirun -np 2 ./mpi.test -test.run OSU -osu bw -osu.protect none,checksum,merkle -osu.sizes 65536,1048576 -osu.inject 0.01
//
// Rank 0 prints one line a row (op, protection, size, value, unit,
// injected, detected, mismatches); the test fails if any delivered
// message differs from what was sent, or, under protection, if a
// corrupted frame went uncaught.
var (
	osuOp      = flag.String("osu", "", "run this OSU-style benchmark over MPI (latency, bw, bcast, allgather)")
	osuProtect = flag.String("osu.protect", "none", "protections, comma-separated")
	osuSizes   = flag.String("osu.sizes", "", "sizes in bytes, comma-separated (default: OSU's)")
	osuInject  = flag.Float64("osu.inject", 0, "fraction of frames to corrupt")
	osuIters   = flag.Int("osu.iters", 0, "timed iterations per row (default: OSU's)")
	osuCopyMax = flag.Int("osu.copymax", 0, "the largest payload sent through the staging ring (default: the transport's)")
)

func TestOSU(t *testing.T) {
	if *osuOp == "" {
		t.Skip("no -osu benchmark asked for")
	}
	if *osuCopyMax > 0 {
		defer mpi.SetCopyMax(*osuCopyMax)()
	}
	cfg := osu.Config{Op: *osuOp, Protect: strings.Split(*osuProtect, ","), Transport: "mpi", Iters: *osuIters}
	if *osuSizes != "" {
		for _, s := range strings.Split(*osuSizes, ",") {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("-osu.sizes: %q is not a size", s)
			}
			cfg.Sizes = append(cfg.Sizes, n)
		}
	}
	var opts []channel.TransportOption
	if *osuInject > 0 {
		opts = append(opts, channel.WithInjector(&channel.Injector{Rate: *osuInject, Seed: 1}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ep, err := mpi.Connect(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	var bad []string
	err = osu.Run(ctx, ep, cfg, func(r osu.Row) {
		fmt.Printf("%-9s %-4s %-8s %10d %12.2f %-4s injected %d detected %d mismatches %d\n",
			r.Op, r.Transport, r.Protect, r.Size, r.Value, r.Unit, r.Injected, r.Detected, r.Mismatches)
		if r.Mismatches != 0 || r.Protect != "none" && r.Detected != r.Injected {
			bad = append(bad, fmt.Sprintf("%s %s %d: %d mismatches, %d of %d corrupted frames caught", r.Op, r.Protect, r.Size, r.Mismatches, r.Detected, r.Injected))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Fatal(strings.Join(bad, "\n"))
	}
}
