package transport

import "sync/atomic"

// Wait is the wait of a goroutine for a frame it reads itself
// (Progresser.Progress). The engine signals it (Signal) when what the
// goroutine waits for has come — delivered by that goroutine or by any
// other — and the transport, while it reads, looks for the signal
// without taking it from the waiter (Over, or C and Return).
//
// The signal is a token in a channel of one, not a closed channel: the
// engine reuses a Wait for receive after receive without allocating.
type Wait struct {
	ready chan struct{}
	cut   atomic.Pointer[func()]
}

// NewWait returns a Wait not yet signalled.
func NewWait() *Wait { return &Wait{ready: make(chan struct{}, 1)} }

// Signal ends the wait: it leaves the waiter its token. It never
// blocks, and a second Signal before the token is taken is a no-op. The
// engine calls Cut too when it signals from a goroutine other than the
// one reading.
func (w *Wait) Signal() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// Cut cuts short the read the transport set to be cut (SetCut), if any.
func (w *Wait) Cut() {
	if f := w.cut.Load(); f != nil {
		(*f)()
	}
}

// C is the channel the waiter takes its token from. A transport that
// takes it in a select must Return it.
func (w *Wait) C() <-chan struct{} { return w.ready }

// Return puts back a token taken from C, for the waiter to take, unless
// one is there already.
func (w *Wait) Return() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// Over reports whether the wait is over, leaving the token.
func (w *Wait) Over() bool {
	select {
	case <-w.ready:
		w.Return()
		return true
	default:
		return false
	}
}

// Pending reports whether a token waits to be taken (the engine's check
// before it reuses a Wait: only an empty one may be).
func (w *Wait) Pending() bool { return len(w.ready) != 0 }

// SetCut sets what cuts short the transport's blocking read when the
// wait ends from another goroutine (a deadline on a socket); nil, once
// the read is over, removes it. A transport that only polls needs none.
func (w *Wait) SetCut(f *func()) { w.cut.Store(f) }

// Cutting reports whether a cut is set (the engine reuses a Wait only
// when none is).
func (w *Wait) Cutting() bool { return w.cut.Load() != nil }
