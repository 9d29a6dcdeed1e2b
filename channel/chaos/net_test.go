package chaos

import (
	"errors"
	"testing"
	"time"
)

// TestBreakBothWays: the two directions of a link break at once, each
// from a goroutine that holds its own direction's lock (a frame refused
// each way, or a refusal one way and an Abort the other). Taking the
// other direction's lock there, as breakLink once did, hangs both.
func TestBreakBothWays(t *testing.T) {
	eps, net, err := newInProcess(2, newInjector(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, ep := range eps {
			ep.Close()
		}
	}()
	a, b := net.link(0, 1), net.link(1, 0)
	done := make(chan struct{}, 2)
	a.mu.Lock()
	b.mu.Lock()
	go func() { net.breakLink(0, 1, errors.New("refused 0→1")); done <- struct{}{} }()
	go func() { net.breakLink(1, 0, errors.New("refused 1→0")); done <- struct{}{} }()
	for range 2 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("breaking a link waits for the lock of its other direction")
		}
	}
	a.mu.Unlock()
	b.mu.Unlock()
	if a.brokenBy() == nil || b.brokenBy() == nil {
		t.Error("a direction of the link is not broken")
	}
}
