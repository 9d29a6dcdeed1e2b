package channel

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every function handed to goSend runs exactly once, however many are
// handed at once; no more than maxIdleWorkers wait afterwards, and idle
// workers end once they have waited their time.
func TestWorkers(t *testing.T) {
	testHookWorkerIdle.Store(int64(20 * time.Millisecond))
	defer testHookWorkerIdle.Store(0)
	const n = 2000
	var ran [n]atomic.Int32
	var wg sync.WaitGroup
	for round := range 3 {
		wg.Add(n)
		for i := range n {
			goSend(func() {
				if i%7 == 0 {
					time.Sleep(time.Millisecond) // some stay busy while others are handed out
				}
				ran[i].Add(1)
				wg.Done()
			})
		}
		wg.Wait()
		for i := range ran {
			if got := ran[i].Load(); got != int32(round+1) {
				t.Fatalf("round %d: function %d ran %d times", round, i, got)
			}
		}
		workers.mu.Lock()
		idle := len(workers.idle)
		workers.mu.Unlock()
		if idle > maxIdleWorkers {
			t.Fatalf("%d idle workers, more than %d", idle, maxIdleWorkers)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		workers.mu.Lock()
		idle := len(workers.idle)
		workers.mu.Unlock()
		if idle == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle workers still waiting long after their time", idle)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
