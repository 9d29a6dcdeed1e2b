//go:build mpi

package mpitest

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/chaos"
	"github.com/sigcheck/sigcheck/channel/mpi"
	"github.com/sigcheck/sigcheck/channel/mpi/mpitest"
)

var (
	nFlag    = flag.Int("chaos.n", 200, "schedules to run")
	seedFlag = flag.Uint64("chaos.seed", 0, "run only the schedule of this seed (0: chaos.n seeds from chaos.from)")
	fromFlag = flag.Uint64("chaos.from", 1, "the first seed of the campaign")
	budget   = flag.Duration("chaos.budget", 2*time.Minute, "draw no new schedule after this long (0: no limit); rank 0's clock decides for all")
	vFlag    = flag.Bool("chaos.v", false, "print every error an operation returns")
	openFlag = flag.Bool("chaos.openers", true, "let drops and reorders hit the first frame of a message")
)

func TestMain(m *testing.M) {
	mpitest.Main(m, "go test -c -tags mpi -o chaos-mpi.test ./channel/chaos/mpitest && mpirun -np 3 ./chaos-mpi.test")
}

// TestCampaignMPI runs the campaign with this process as one rank of
// every job, and fails on every schedule that hangs, delivers wrong
// bytes, leaves its sides disagreeing or outgrows its memory bound,
// naming its seed; it stops after 20 of them. Every process judges every
// schedule alike, so they stop together.
func TestCampaignMPI(t *testing.T) {
	if *vFlag {
		chaos.Trace = os.Stderr
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	ctl, err := mpi.Connect(cctx)
	ccancel()
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	p := chaos.Process{Connect: mpi.Connect, Ctl: ctl}
	rank := ctl.Rank()

	n := *nFlag
	first := *fromFlag
	if *seedFlag != 0 {
		n, first = 1, *seedFlag
	}
	var tally chaos.Tally
	const maxBad = 20
	start := time.Now()
	for i := range n {
		// Rank 0's clock decides whether another schedule starts, for
		// all: the processes must run the same ones.
		more := []byte{1}
		if rank == 0 && *budget > 0 && time.Since(start) > *budget {
			more[0] = 0
		}
		bctx, bcancel := context.WithTimeout(ctx, time.Minute)
		err := channel.Bcast(bctx, ctl, 0, more)
		bcancel()
		if err != nil {
			t.Fatalf("agreeing on the next schedule: %v", err)
		}
		if more[0] == 0 {
			if rank == 0 {
				t.Logf("stopped after %d of %d schedules: -chaos.budget %v spent", tally.Schedules, n, *budget)
			}
			break
		}
		s := chaos.DrawMPI(first+uint64(i), ctl.Size())
		r, err := chaos.RunProcess(s, *openFlag, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Hang != "" {
			// This rank's goroutines are stuck: the others wait for its
			// report. Failing here ends the process, and mpirun the job.
			t.Fatalf("rank %d: %s\n%s", rank, s, r.Hang)
		}
		tally.Add(s, r)
		if r.Bad() {
			// Every process judged it bad; each says what its rank saw.
			if rank == 0 {
				t.Errorf("%s\n%+v", s, r)
			} else {
				t.Errorf("seed %d, rank %d's errors: %q", s.Seed, rank, r.Errors)
			}
			if tally.Bad == maxBad {
				t.Fatalf("stopped after %d bad schedules", tally.Bad)
			}
		}
		if rank == 0 && tally.Schedules%500 == 0 {
			t.Logf("%d schedules, seeds %d to %d, in %v", tally.Schedules, first, s.Seed, time.Since(start).Round(time.Second))
		}
	}
	if rank == 0 {
		for _, line := range tally.Summary() {
			t.Log(line)
		}
	}
}
