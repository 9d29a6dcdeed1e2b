package chaos

import (
	"flag"
	"os"
	"testing"
	"time"
)

var (
	nFlag    = flag.Int("chaos.n", 1000, "schedules to run")
	seedFlag = flag.Uint64("chaos.seed", 0, "run only the schedule of this seed (0: chaos.n seeds from chaos.from)")
	fromFlag = flag.Uint64("chaos.from", 1, "the first seed of the campaign")
	tcpFlag  = flag.Bool("chaos.tcp", true, "draw TCP jobs too (a proxy on loopback between the ranks)")
	budget   = flag.Duration("chaos.budget", 6*time.Minute, "draw no new schedule after this long (0: no limit), so that go test stays within its timeout on a slow machine")
	vFlag    = flag.Bool("chaos.v", false, "print every error an operation returns")
	openFlag = flag.Bool("chaos.openers", true, "let drops and reorders hit the first frame of a message (false: spare it, as campaigns did before the channel kept order after a lost opener)")
)

// TestCampaign runs the campaign and fails on every schedule that hangs,
// delivers wrong bytes, leaves its sides disagreeing or outgrows its
// memory bound, naming its seed (-chaos.seed replays it); it stops after
// 20 of them.
func TestCampaign(t *testing.T) {
	if *vFlag {
		Trace = os.Stderr
	}
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
	var tally Tally
	const maxBad = 20
	start := time.Now()
	for _, seed := range seeds {
		if *budget > 0 && time.Since(start) > *budget {
			t.Logf("stopped after %d of %d schedules: -chaos.budget %v spent", tally.Schedules, len(seeds), *budget)
			break
		}
		s := Draw(seed, *tcpFlag)
		r := Run(s, *openFlag)
		tally.Add(s, r)
		if r.Bad() {
			// The run goes on, so that a long one reports every bad seed
			// it finds rather than its first.
			t.Errorf("%s\n%+v", s, r)
			if tally.Bad == maxBad {
				t.Fatalf("stopped after %d bad schedules", tally.Bad)
			}
			continue
		}
		if tally.Schedules%1000 == 0 {
			t.Logf("%d schedules, seeds %d to %d, in %v", tally.Schedules, seeds[0], seed, time.Since(start).Round(time.Second))
		}
	}
	for _, line := range tally.Summary() {
		t.Log(line)
	}
}
