package chaos

import (
	"flag"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

var (
	nFlag    = flag.Int("chaos.n", 300, "schedules to run (CI runs seeds 1 to 6000: go test ./... the first 300, .ci/run the rest)")
	seedFlag = flag.Uint64("chaos.seed", 0, "run only the schedule of this seed (0: chaos.n seeds from chaos.from)")
	fromFlag = flag.Uint64("chaos.from", 1, "the first seed of the campaign")
	parFlag  = flag.Int("chaos.par", 8*runtime.GOMAXPROCS(0), "schedules run at once (1: one after the other)")
	tcpFlag  = flag.Bool("chaos.tcp", true, "draw TCP jobs too (a proxy on loopback between the ranks)")
	budget   = flag.Duration("chaos.budget", 6*time.Minute, "draw no new schedule after this long (0: no limit), so that go test stays within its timeout on a slow machine")
	vFlag    = flag.Bool("chaos.v", false, "print every error an operation returns")
	openFlag = flag.Bool("chaos.openers", true, "let drops and reorders hit the first frame of a message (false: spare it, as campaigns did before the channel kept order after a lost opener)")
)

func TestMain(m *testing.M) {
	// A hang's report gives the stacks of its own schedule's goroutines,
	// told from those of the schedules run beside it by their label
	// (stacks): tracebacks show labels only when asked.
	os.Setenv("GODEBUG", os.Getenv("GODEBUG")+",tracebacklabels=1")
	flag.Parse()
	if *vFlag {
		Trace = os.Stderr
	}
	os.Exit(m.Run())
}

// TestCampaign runs the campaign and fails on every schedule that hangs,
// delivers wrong bytes, leaves its sides disagreeing or outgrows its
// memory bound, naming its seed (-chaos.seed replays it); it stops after
// 20 of them.
//
// Its schedules run -chaos.par at once: most of a schedule's time is
// waiting (a deadline that a lost frame or a dead peer runs out, a probe,
// a delay), and one after the other a thousand took six minutes. go test
// runs 300 of them (about 8 s on 2 cores); CI runs seeds 301 to 6000
// beside (.ci/run).
func TestCampaign(t *testing.T) {
	t.Parallel()
	n := *nFlag
	if testing.Short() {
		n = min(n, 100)
	}
	seeds := make([]uint64, 0, n)
	if *seedFlag != 0 {
		seeds = append(seeds, *seedFlag)
	} else {
		for s := range n {
			seeds = append(seeds, *fromFlag+uint64(s))
		}
	}
	type ran struct {
		s Schedule
		r Result
	}
	next, results := make(chan uint64), make(chan ran)
	stop := make(chan struct{}) // no more schedules: too many bad ones
	var drawn int               // seeds handed out, the dealer's until results closes
	start := time.Now()
	go func() {
		defer close(next)
		for _, seed := range seeds {
			if *budget > 0 && time.Since(start) > *budget {
				return
			}
			select {
			case next <- seed:
				drawn++
			case <-stop:
				return
			}
		}
	}()
	var workers sync.WaitGroup
	for range max(1, min(*parFlag, len(seeds))) {
		workers.Go(func() {
			for seed := range next {
				s := Draw(seed, *tcpFlag)
				results <- ran{s, Run(s, *openFlag)}
			}
		})
	}
	go func() { workers.Wait(); close(results) }()

	var tally Tally
	const maxBad = 20
	for x := range results {
		tally.Add(x.s, x.r)
		if x.r.Bad() {
			// The run goes on, so that a long one reports every bad seed
			// it finds rather than its first.
			t.Errorf("%s\n%+v", x.s, x.r)
			if tally.Bad == maxBad {
				close(stop) // the schedules under way finish, and are counted
			}
			continue
		}
		if tally.Schedules%1000 == 0 {
			t.Logf("%d schedules from seed %d, in %v", tally.Schedules, seeds[0], time.Since(start).Round(time.Second))
		}
	}
	if tally.Bad >= maxBad {
		t.Fatalf("stopped after %d bad schedules", tally.Bad)
	}
	if drawn < len(seeds) {
		t.Logf("stopped after %d of %d schedules: -chaos.budget %v spent", drawn, len(seeds), *budget)
	}
	for _, line := range tally.Summary() {
		t.Log(line)
	}
}
