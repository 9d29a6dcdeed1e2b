package channel

import "testing"

// A token taken from a done channel is put back without blocking, also
// when a signal refilled the channel meanwhile: the blocking send this
// replaces hung the waiting receive forever (the fault campaign, run
// concurrently, found it).
func TestPutBackNeverBlocks(t *testing.T) {
	done := make(chan struct{}, 1)
	putBack(done) // empty: the token goes back
	if len(done) != 1 {
		t.Fatal("the token was not put back")
	}
	putBack(done) // full (a signal came meanwhile): returns
	<-done
	if len(done) != 0 {
		t.Fatal("two tokens for one")
	}
}
