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
	rawBW      = flag.String("rawbw", "", "TestRawBandwidth: sizes in bytes, comma-separated")
	rawProtect = flag.String("rawbw.protect", "none", "TestRawBandwidth: protections, comma-separated (none, checksum, merkle)")
	osuWarmup  = flag.Int("osu.warmup", 0, "untimed iterations before the timed ones (default: OSU's)")
)

func TestOSU(t *testing.T) {
	if *osuOp == "" {
		t.Skip("no -osu benchmark asked for")
	}
	cfg := osu.Config{Op: *osuOp, Protect: strings.Split(*osuProtect, ","), Transport: "mpi", Iters: *osuIters, Warmup: *osuWarmup}
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

// TestRawBandwidth, with -rawbw sizes, measures what osu's bw measures
// (windows of 64 non-blocking sends, fewer above 256 KiB, and an
// acknowledgement per window; MB/s), the way scripts/mpi-pingpong.c
// does over MPI itself: without reading the bytes received, which osu
// does for every message on the receiving rank, in the timed loop. On a
// rank with one core that check competes with the transfer it checks;
// C's loop has none. So the transport is compared with MPI on equal
// terms, in its way: every message of a window from a buffer of its own
// and into one of its own. Only the first and last byte of each
// window's last message are looked at, so a transport that moved
// nothing would still fail. -rawbw.protect measures the protection
// layers too, each over the same endpoint, size by size.
//
//	mpirun -np 2 ./mpi.test -test.run RawBandwidth -rawbw 65536,1048576 -rawbw.protect none,checksum,merkle
func TestRawBandwidth(t *testing.T) {
	if *rawBW == "" {
		t.Skip("no -rawbw sizes asked for")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ep, err := mpi.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if ep.Size() != 2 {
		t.Fatalf("%d ranks: -rawbw runs between 2", ep.Size())
	}
	layers := map[string]channel.Comm{"none": ep}
	if layers["checksum"], err = channel.WithChecksum(ep); err != nil {
		t.Fatal(err)
	}
	if layers["merkle"], err = channel.WithMerkle(ep); err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(*rawBW, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			t.Fatalf("-rawbw: %q is not a size", f)
		}
		window := min(64, max(2, (16<<20)/n))
		iters, warm := 100, 10
		if n > 8<<10 {
			iters, warm = 20, 2
		}
		if n >= 4<<20 {
			iters = 10
		}
		bufs := make([][]byte, window)
		for i := range bufs {
			bufs[i] = make([]byte, n)
		}
		reqs := make([]*channel.Request, window)
		for _, how := range strings.Split(*rawProtect, ",") {
			c := layers[how]
			if c == nil {
				t.Fatalf("-rawbw.protect: no protection %q", how)
			}
			rawWindows(ctx, t, c, ep, n, window, warm, iters, bufs, reqs, how)
		}
	}
	if err := ep.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
}

// rawWindows is one row of TestRawBandwidth: over c, with ep's barrier
// before the clock starts and the eager sends flushed before it stops.
func rawWindows(ctx context.Context, t *testing.T, c channel.Comm, ep *channel.Endpoint, n, window, warm, iters int, bufs [][]byte, reqs []*channel.Request, how string) {
	var t0 time.Time
	for k := range warm + iters {
		if k == warm {
			if err := channel.Flush(ctx, c); err != nil {
				t.Fatal(err)
			}
			if err := ep.Barrier(ctx); err != nil {
				t.Fatal(err)
			}
			t0 = time.Now()
		}
		if ep.Rank() == 0 {
			last := bufs[window-1]
			last[0], last[n-1] = byte(k), byte(k+1)
			for i := range reqs {
				reqs[i] = channel.Isend(ctx, c, 1, 1, bufs[i])
			}
		} else {
			for i := range reqs {
				reqs[i] = channel.Irecv(ctx, c, 0, 1, bufs[i])
			}
		}
		if err := channel.WaitAll(reqs...); err != nil {
			t.Fatal(err)
		}
		if ep.Rank() == 0 {
			if _, err := c.Recv(ctx, 1, 2, nil); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if last := bufs[window-1]; last[0] != byte(k) || last[n-1] != byte(k+1) {
			t.Fatalf("%d bytes, %s, window %d: not the bytes sent", n, how, k)
		}
		if err := c.Send(ctx, 0, 2, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := channel.Flush(ctx, c); err != nil {
		t.Fatal(err)
	}
	if ep.Rank() == 0 {
		secs := time.Since(t0).Seconds()
		fmt.Printf("%-9s %-4s %-8s %10d %12.2f %-4s\n", "rawbw", "mpi", how, n, float64(n)*float64(window)*float64(iters)/secs/1e6, "MB/s")
	}
}
