package transport

import (
	"sync/atomic"
	"testing"
)

// A token taken from C is put back without blocking, also when a signal
// refilled the channel meanwhile: the blocking send this replaces hung
// the waiting receive forever (the fault campaign, run concurrently,
// found it).
func TestReturnNeverBlocks(t *testing.T) {
	w := NewWait()
	w.Return() // empty: the token goes back
	if !w.Pending() {
		t.Fatal("the token was not put back")
	}
	w.Return() // full (a signal came meanwhile): returns
	<-w.C()
	if w.Pending() {
		t.Fatal("two tokens for one")
	}
}

// Over looks without taking: the waiter still finds its token, once.
func TestOverLeavesTheToken(t *testing.T) {
	w := NewWait()
	if w.Over() {
		t.Fatal("a new Wait is over")
	}
	w.Signal()
	w.Signal() // a second signal before the token is taken: no-op, no block
	if !w.Over() || !w.Over() {
		t.Fatal("a signalled Wait is not over")
	}
	<-w.C()
	if w.Pending() || w.Over() {
		t.Fatal("the token was doubled")
	}
}

// Cut calls what the transport set, and nothing once it is removed.
func TestCut(t *testing.T) {
	w := NewWait()
	var n atomic.Int32
	f := func() { n.Add(1) }
	w.Cut() // none set
	w.SetCut(&f)
	if !w.Cutting() {
		t.Fatal("Cutting after SetCut")
	}
	w.Cut()
	w.SetCut(nil)
	w.Cut()
	if n.Load() != 1 || w.Cutting() {
		t.Fatalf("cut ran %d times", n.Load())
	}
}
