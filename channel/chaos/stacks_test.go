package chaos

import (
	"strings"
	"testing"
)

// TestStacksOfItsSchedule: a hang's report gives the stacks of its own
// schedule's goroutines, not those of the schedules run beside it.
func TestStacksOfItsSchedule(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 2)
	for _, seed := range []uint64{7, 77} {
		labeled(Schedule{Seed: seed}, func() {
			go func() {
				started <- struct{}{}
				parked(release)
			}()
		})
	}
	<-started
	<-started
	got := stacks(7)
	if !strings.Contains(got, `"chaos.seed": "7"`) || !strings.Contains(got, "chaos.parked(") {
		t.Errorf("the stacks of seed 7 miss its goroutine:\n%s", got)
	}
	if strings.Contains(got, `"chaos.seed": "77"`) {
		t.Errorf("the stacks of seed 7 hold seed 77's:\n%s", got)
	}
}

// parked is where the goroutines of TestStacksOfItsSchedule wait.
//
//go:noinline
func parked(release chan struct{}) { <-release }
