package tcp

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sigcheck/sigcheck/channel/transport"
)

// Reading a link. A receive that waits for a frame from one peer reads
// that peer's socket itself, as a plain blocking Read would and as MPI's
// progress engine does inside MPI_Recv: the runtime's poller wakes the
// goroutine that wants the frame, which parses it, matches it and
// returns. Handed from a reader goroutine instead, every message costs a
// goroutine switch and, with a spare processor, a thread woken to take
// it (wakep): on two cores shared by two ranks, that thread runs where
// the other rank should, and a one-byte one-way trip took several times
// as long as a plain Go ping-pong's (BenchmarkLoopbackLatency measures
// that one beside BenchmarkLatency/transport=tcp).
//
// A protected send that waits for its receiver's verdict reads the
// receiver's link the same way (pending.next).
//
// A link has one read token (link.tok): whoever holds it reads whole
// frames and delivers them to the engine, whatever receive they are for.
// The link's own goroutine (readLoop) holds it when no receive does —
// for frames nobody waits for yet: a message whose receive comes later,
// an eager send's verdict — but only once the link has gone unread for
// takeover (up to maxTakeover while receives keep reading it), or at
// once when a goroutine waits for its frames without reading them (a
// receive from transport.AnySource, Flush, a protected send whose link another
// receive reads: waiting). A receive that finds the link's goroutine
// holding the token asks for it (yield) and gets it at the next frame
// boundary; one that finds another receive holding it waits as before,
// since that receive delivers every frame of the link.
//
// A wait is cut only between frames: a deadline (the receive's context,
// a yield, the receive finished by another goroutine) is set on the
// socket while its holder waits for a header, never while a payload is
// read, so no frame is ever half read by one goroutine and half by
// another; a header begun by one is finished by the next (hb, hn).

// takeover is how long a link goes unread by receives before its own
// goroutine reads it: long enough that a rank in a ping-pong keeps
// reading for itself from one receive to the next, short enough that a
// frame nobody waits for is taken soon and the peer's writes never stall
// on a full socket for long.
const takeover = time.Millisecond

// maxTakeover bounds how long the link's goroutine sleeps while receives
// keep reading the link (its wait doubles from takeover each time it
// finds them at it): a rank in a long ping-pong wakes it some 30 times a
// second, and a frame nobody waits for once they stop is read within
// this.
const maxTakeover = 32 * time.Millisecond

// linkRead is a link's read side.
type linkRead struct {
	tok   chan struct{} // the read token: held while full
	hb    [transport.HeaderSize + tagSize]byte
	hlen  int                // a header's bytes: with its tag on an authenticated link
	hn    int                // bytes of hb read so far (a header begun by the previous holder)
	fill  func([]byte) error // reads a payload (plain, or authFill): made once
	plain func([]byte) error // reads bytes of the stream where they are to go
	ar    *authRead          // an authenticated link's frame being read (nil: not authenticated)
	cutFn func()             // cut, made once (a method value allocates)

	mu       sync.Mutex // what follows
	inHeader bool       // the holder waits for a header: a deadline may cut the wait
	cutting  bool       // a deadline is set on the socket to cut it
	bg       bool       // the link's goroutine holds the token
	yield    bool       // a receive wants the token from the link's goroutine

	// The context of the receive holding the token, and what disarms
	// the cut it arms (armCtx): only once the reader is about to sleep,
	// if its reader can say so (lazyCtx: a polling reader), else at once.
	ctx     context.Context
	stopCtx func() bool
	lazyCtx bool

	kick     chan struct{} // wakes the link's goroutine to read now
	dead     chan struct{} // closed when the connection is
	waiters  atomic.Int32  // goroutines waiting for this link's frames without reading it
	lastUser atomic.Int64  // when a receive last gave the token back (UnixNano)
}

// initRead sets up the read side of the link to rank peer.
func (tc *link) initRead(peer int) {
	lr := &tc.rd
	lr.tok = make(chan struct{}, 1)
	lr.kick = make(chan struct{}, 1)
	lr.dead = make(chan struct{})
	lr.cutFn = tc.cut
	lr.plain = func(b []byte) error {
		// A payload comes from what the header's read brought into the
		// buffer, then straight from the socket into its destination.
		n := 0
		if k := tc.br.Buffered(); k > 0 {
			n, _ = tc.br.Read(b[:min(k, len(b))]) // a copy, no system call
		}
		if n < len(b) {
			_, err := io.ReadFull(tc.r, b[n:])
			return err
		}
		return nil
	}
	lr.fill, lr.hlen = lr.plain, transport.HeaderSize
	if tc.auth != nil {
		lr.ar = &authRead{in: tc.auth.in, peer: peer, addr: tc.c.RemoteAddr()}
		lr.fill, lr.hlen = tc.authFill, transport.HeaderSize+tagSize
	}
}

// armCtx makes the context of the receive holding the token cut its
// wait for a header short when it is done (context.AfterFunc, which
// allocates: a polling reader calls it only when it is about to sleep,
// which a ping-pong's reads seldom do). Only the token holder calls it.
func (tc *link) armCtx() {
	if lr := &tc.rd; lr.ctx != nil && lr.stopCtx == nil {
		lr.stopCtx = context.AfterFunc(lr.ctx, lr.cutFn)
	}
}

// cut cuts the token holder's wait for a header short, if it is waiting
// for one (a payload is never cut).
func (tc *link) cut() {
	tc.rd.mu.Lock()
	tc.cutLocked()
	tc.rd.mu.Unlock()
}

// cutLocked is cut, under tc.rd.mu.
func (tc *link) cutLocked() {
	if lr := &tc.rd; lr.inHeader && !lr.cutting {
		lr.cutting = true
		tc.c.SetReadDeadline(time.Unix(1, 0))
	}
}

func (lr *linkRead) kickNow() {
	select {
	case lr.kick <- struct{}{}:
	default:
	}
}

// readFrames reads and delivers r's frames, holding the token, until stop
// (asked under lr.mu at every frame boundary) says to give the token
// back. An error is the link's: it is then lost.
func (t *tx) readFrames(r int, tc *link, stop func() bool) error {
	lr := &tc.rd
	for {
		lr.mu.Lock()
		if stop() {
			lr.mu.Unlock()
			return nil
		}
		lr.inHeader = true
		lr.mu.Unlock()
		var err error
		for lr.hn < lr.hlen && err == nil {
			var n int
			n, err = tc.br.Read(lr.hb[lr.hn:lr.hlen])
			lr.hn += n
		}
		lr.mu.Lock()
		lr.inHeader = false
		cut := lr.cutting
		if cut {
			lr.cutting = false
			tc.c.SetReadDeadline(time.Time{})
		}
		lr.mu.Unlock()
		if err != nil {
			if cut && errors.Is(err, os.ErrDeadlineExceeded) {
				continue // cut short: stop says why
			}
			return err
		}
		lr.hn = 0
		if lr.ar != nil {
			if err := lr.ar.header(lr.hb[:lr.hlen]); err != nil {
				return err
			}
		}
		h, err := transport.ParseHeader(lr.hb[:transport.HeaderSize])
		if err == nil && lr.ar != nil {
			lr.ar.begin(h.Plen)
		}
		if err == nil {
			err = t.f.Deliver(r, h, lr.fill)
		}
		if err == nil && lr.ar != nil {
			err = lr.ar.end()
		}
		if err != nil {
			return err
		}
	}
}

// readLoop is the link's own goroutine: it reads the link whenever no
// receive does (see takeover), until the connection is gone.
func (t *tx) readLoop(r int, tc *link) {
	lr := &tc.rd
	timer := time.NewTimer(takeover)
	defer timer.Stop()
	kicked := true
	wait := takeover // doubles while receives keep the link, up to maxTakeover
	for {
		if !kicked {
			select {
			case <-lr.kick:
				kicked = true
			case <-timer.C:
			case <-lr.dead:
				return
			}
		}
		idle := time.Duration(time.Now().UnixNano() - lr.lastUser.Load())
		if !kicked && idle < takeover && lr.waiters.Load() == 0 && t.anyWaiters.Load() == 0 {
			wait = min(2*wait, maxTakeover)
			timer.Reset(max(wait, takeover-idle))
			continue
		}
		kicked = false
		select {
		case lr.tok <- struct{}{}:
			wait = takeover
		default: // a receive reads it; it kicks when it stops, if someone waits
			wait = min(2*wait, maxTakeover)
			timer.Reset(wait)
			continue
		}
		lr.mu.Lock()
		lr.bg, lr.yield = true, false
		lr.mu.Unlock()
		err := t.readFrames(r, tc, func() bool { return lr.yield })
		lr.mu.Lock()
		lr.bg, lr.yield = false, false
		lr.mu.Unlock()
		if err != nil {
			tc.broke(err) // before anyone else can read on from where this read stopped
		}
		<-lr.tok
		if err != nil {
			t.fail(r, tc, err)
			return
		}
		timer.Reset(takeover)
	}
}

// Progress is transport.Progresser's: see there and the top of this
// file.
func (t *tx) Progress(ctx context.Context, src int, w *transport.Wait) bool {
	tc := t.conn(src)
	if tc == nil {
		return false
	}
	lr := &tc.rd
	select {
	case lr.tok <- struct{}{}:
	default:
		lr.mu.Lock()
		bg := lr.bg
		if bg {
			lr.yield = true
			tc.cutLocked()
		}
		lr.mu.Unlock()
		if !bg {
			return false // another receive reads the link: it delivers ours too
		}
		select { // the link's goroutine gives it up at its next frame boundary
		case lr.tok <- struct{}{}:
		case <-w.C():
			w.Return()
			return true
		case <-ctx.Done():
			return true
		case <-lr.dead:
			return false
		}
	}
	w.SetCut(&lr.cutFn)
	if ctx.Done() != nil {
		lr.ctx = ctx
		if !lr.lazyCtx {
			tc.armCtx()
		}
	}
	err := t.readFrames(src, tc, func() bool {
		return w.Over() || ctx.Err() != nil
	})
	if lr.stopCtx != nil {
		lr.stopCtx()
		lr.stopCtx = nil
	}
	lr.ctx = nil
	w.SetCut(nil)
	lr.lastUser.Store(time.Now().UnixNano())
	if err != nil {
		tc.broke(err) // before anyone else can read on from where this read stopped
	}
	<-lr.tok
	if lr.waiters.Load() > 0 || t.anyWaiters.Load() > 0 {
		lr.kickNow() // someone still waits for this link's frames
	}
	if err != nil {
		t.fail(src, tc, err)
	}
	return true
}

// Waiting is transport.Progresser's: see there.
func (t *tx) Waiting(src, n int) {
	if src != transport.AnySource {
		if tc := t.conn(src); tc != nil {
			tc.rd.waiters.Add(int32(n))
			if n > 0 {
				tc.rd.kickNow()
			}
		}
		return
	}
	t.anyWaiters.Add(int32(n))
	if n > 0 {
		t.mu.Lock()
		conns := slices.Clone(t.conns)
		t.mu.Unlock()
		for _, tc := range conns {
			if tc != nil {
				tc.rd.kickNow()
			}
		}
	}
}
