package channel

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/internal/wire"
)

// ctlQueue sends a receiver's control frames (asks, verdicts). Over TCP
// they go from a goroutine of their own: the transport's reading
// goroutines produce them and must never block on a write — two ranks
// whose readers each waited to write to the other, behind full socket
// buffers, would stop for good. In process a write never blocks, so the
// goroutine that produced them sends them (flush), once it holds no lock.
//
// Over a transport that can try a write without waiting (transport.TrySender:
// TCP), the reading goroutine that made a frame sends it itself when it
// is done with the frame it read (handled), and the queue's goroutine
// is woken only for the frames a socket would not take at once. Waking
// it costs a thread wake-up and a hop between goroutines per verdict,
// which on a loaded machine is most of a small protected message's
// latency.
type ctlQueue struct {
	e        *engine
	inline   bool
	mu       sync.Mutex
	q        []ctlFrame
	n        atomic.Int32 // len(q), kept under mu, for flush to look without mu
	draining bool         // a flush or the queue's goroutine is sending: the others leave it the queue
	arriving atomic.Int32 // frames being handled (arrive): their handled sends what is pushed meanwhile
	running  bool         // the draining is the queue's goroutine's
	wake     chan struct{}
	stopped  chan struct{}
	once     sync.Once

	// Held verdicts (hold): under mu.
	held      []ctlFrame
	heldN     atomic.Int32 // len(held), for the senders to look without mu
	heldTimer *time.Timer  // releases them if nothing else has within holdWait
	heldArmed bool
	heldBy    time.Time     // when the armed timer fires
	rode      atomic.Uint64 // held verdicts that went in the write of another frame
	// testHookHoldSync, if not 0 (tests), replaces holdWaitSync.
	testHookHoldSync time.Duration
}

type ctlFrame struct {
	dst     int
	h       wire.Header
	payload []byte
}

// newCtlFrame makes a control frame of h and payload: its length and
// check are set here.
func newCtlFrame(dst int, h wire.Header, payload []byte) ctlFrame {
	h.Plen = len(payload)
	h.Sum = xxh3.Hash(payload)
	return ctlFrame{dst, h, payload}
}

func newCtlQueue(e *engine, inline bool) *ctlQueue {
	c := &ctlQueue{e: e, inline: inline, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	if !inline {
		go c.run()
	}
	return c
}

// push queues a control frame; it never blocks.
func (c *ctlQueue) push(dst int, h wire.Header, payload []byte) {
	f := newCtlFrame(dst, h, payload)
	c.mu.Lock()
	c.q = append(c.q, f)
	c.n.Store(int32(len(c.q)))
	// A frame being handled, or a drain under way, sends it (handled,
	// flush and run look at the queue again before they stop, under mu).
	// With n stored first, either this sees a handler's arriving, or
	// that handler, which lowers arriving before it looks at n, sees
	// this frame (handled): one of them sends it.
	idle := c.arriving.Load() == 0 && !c.draining
	c.mu.Unlock()
	if c.inline || !idle {
		return // the caller flushes
	}
	c.signal()
}

func (c *ctlQueue) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// handling says that a frame is being handled: the control frames it
// makes are sent by handled, from the same goroutine, where they can be.
func (c *ctlQueue) handling() {
	if c.inline {
		return
	}
	c.arriving.Add(1)
}

// handled ends handling: it sends the queued control frames that the
// transport takes without waiting, from the calling goroutine (which
// holds no lock of the engine), and leaves the rest to the queue's
// goroutine.
func (c *ctlQueue) handled() {
	if c.inline {
		c.flush()
		return
	}
	ts := c.e.caps.try
	c.arriving.Add(-1)
	if c.n.Load() == 0 {
		return // most frames make no control frame: no lock
	}
	c.mu.Lock()
	if c.draining || len(c.q) == 0 {
		c.mu.Unlock()
		return
	}
	c.draining = true
	for ts != nil && len(c.q) > 0 {
		f := c.q[0]
		c.mu.Unlock()
		ok := ts.TrySend(f.dst, f.h, f.payload)
		c.mu.Lock()
		if !ok {
			break
		}
		c.shift()
	}
	c.draining = false
	left := len(c.q) > 0
	c.mu.Unlock()
	if left {
		c.signal()
	}
}

// flush sends the queued frames, in order, from the calling goroutine
// (inline queues only; the caller holds no lock of the engine). A flush
// that finds another under way (further up the same goroutine's stack,
// or on another goroutine) leaves the frames to it, which keeps their
// order and bounds the recursion between two ranks to one level.
//
// Most calls find the queue empty (every frame handled calls it), and
// look without the lock: the frames this goroutine pushed are in n, and
// those that others push are theirs to flush.
func (c *ctlQueue) flush() {
	if !c.inline || c.n.Load() == 0 {
		return
	}
	c.mu.Lock()
	if c.draining || len(c.q) == 0 {
		c.mu.Unlock()
		return
	}
	c.draining = true
	f := c.shift()
	c.mu.Unlock()
	// The last look at the queue and the end of draining are one step:
	// a frame pushed meanwhile is never left to a flush that has ended.
	for ok := true; ok; f, ok = c.pop(true) {
		c.send(f)
	}
}

// pop takes the first queued frame, if any; for a flush it also ends the
// draining when there is none.
func (c *ctlQueue) pop(flushing bool) (ctlFrame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.q) == 0 {
		if flushing {
			c.draining = false
		}
		return ctlFrame{}, false
	}
	return c.shift(), true
}

// shift takes the first queued frame out of the queue (which has one).
// Under mu. Shifting the (one or two) frames left keeps the array for
// the next push; reslicing from the front would allocate again and
// again.
func (c *ctlQueue) shift() ctlFrame {
	f := c.q[0]
	c.q = c.q[:copy(c.q, c.q[1:])]
	c.n.Store(int32(len(c.q)))
	return f
}

func (c *ctlQueue) run() {
	for {
		select {
		case <-c.wake:
		case <-c.stopped:
			return
		}
		for f, ok := c.take(); ok; f, ok = c.take() {
			c.send(f)
		}
	}
}

// take is pop for the queue's goroutine: it drains only while no
// handled does (that keeps the frames' order), and ends its draining
// when the queue is empty.
func (c *ctlQueue) take() (ctlFrame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.q) == 0 || c.draining && !c.running {
		c.draining = c.draining && !c.running
		c.running = false
		return ctlFrame{}, false
	}
	c.draining, c.running = true, true
	return c.shift(), true
}

func (c *ctlQueue) send(f ctlFrame) {
	if c.inline { // a copy in process: nothing to wait for
		if cl := c.e.caps.call; cl != nil && f.dst != c.e.rank {
			cl.Control(f.dst, f.h, f.payload)
			return
		}
		c.e.frame(context.Background(), f.dst, &f.h, f.payload)
		return
	}
	// A peer that cannot take a small frame in this long is as good as
	// lost; the transport then says so.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c.e.frame(ctx, f.dst, &f.h, f.payload)
	cancel()
}

func (c *ctlQueue) stop() { c.once.Do(func() { close(c.stopped) }) }

// Held verdicts. A receiver's final OK for a small message (an eager
// send's, which its sender does not wait for) is not written at once
// over a transport that writes several frames in one call (batchSender:
// TCP): it is held, and goes out in the same write as the next frame
// this rank sends to that peer — in a ping-pong, the reply (engine.frame
// takes it). Written on its own it costs the receiver a system call
// between verifying the message and sending the reply, and the sender a
// second read: a large share of a protected 1 B one-way once links'
// readers poll (BenchmarkProtectionOverhead/transport=tcp/size=1B).
//
// A larger message's OK is held too, though its sender waits for it:
// in a ping-pong of 1 MiB, written on its own just before the reply, it
// woke the sender twice (the verdict, then the reply), where riding with
// the reply it wakes it once (BenchmarkProtectionOverhead/transport=tcp/
// size=1MiB). Its sender waits at most holdWaitSync for it more than
// before.
//
// A held verdict is released — sent on its own — as soon as this rank
// waits for anything (a receive, a protected send's verdict, Flush:
// release), when it closes (flushHeld), and at the latest after
// holdWait (holdWaitSync for a message over EagerLimit), so that a rank
// that goes off to compute does not keep its peers' eager copies, their
// Flush, nor their Send of a large message waiting for long.
const (
	holdWait     = time.Millisecond
	holdWaitSync = 100 * time.Microsecond
)

// holding says whether final OK verdicts are held rather than sent.
func (c *ctlQueue) holding() bool { return !c.inline && c.e.caps.batch != nil }

// hold keeps a final OK verdict for the next frame to dst: for holdWait
// at most, or holdWaitSync if its sender waits for it. Under e.mu (as
// push).
func (c *ctlQueue) hold(dst int, h wire.Header, payload []byte) {
	f := newCtlFrame(dst, h, payload)
	c.mu.Lock()
	wait := holdWait
	if h.Total > EagerLimit {
		wait = holdWaitSync
		if c.testHookHoldSync != 0 {
			wait = c.testHookHoldSync
		}
	}
	c.held = append(c.held, f)
	c.heldN.Store(int32(len(c.held)))
	if !c.heldArmed || wait < holdWait && time.Until(c.heldBy) > wait {
		c.heldArmed, c.heldBy = true, time.Now().Add(wait)
		if c.heldTimer == nil {
			c.heldTimer = time.AfterFunc(wait, c.expire)
		} else {
			c.heldTimer.Reset(wait)
		}
	}
	c.mu.Unlock()
}

// takeHeld moves the verdicts held for dst into fs, for the caller to
// send ahead of its frame, in order.
func (c *ctlQueue) takeHeld(dst int, fs []ctlFrame) []ctlFrame {
	if c.heldN.Load() == 0 {
		return fs
	}
	c.mu.Lock()
	kept := c.held[:0]
	for _, f := range c.held {
		if f.dst == dst {
			fs = append(fs, f)
		} else {
			kept = append(kept, f)
		}
	}
	clear(c.held[len(kept):])
	c.held = kept
	c.heldN.Store(int32(len(kept)))
	c.mu.Unlock()
	return fs
}

// expire is the hold's timer: it releases what is still held.
func (c *ctlQueue) expire() {
	if c.expired() {
		c.release()
	}
}

// expired disarms the hold's timer, which has fired, and reports
// whether anything is still held. Disarmed whatever it finds: a frame
// may take what is held (takeHeld) before release runs, and a timer
// left marked armed with nothing to fire would keep the next hold from
// arming it — a large message's OK was then held until this rank's next
// call, not holdWaitSync.
func (c *ctlQueue) expired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.heldArmed = false
	return len(c.held) > 0
}

// release sends the held verdicts as control frames are sent: from the
// calling goroutine where the transport takes them at once, else from
// the queue's. It never blocks; the caller holds no lock of the engine.
func (c *ctlQueue) release() {
	if c.heldN.Load() == 0 {
		return
	}
	c.handling()
	c.mu.Lock()
	c.q = c.drainHeld(c.q)
	c.n.Store(int32(len(c.q)))
	c.mu.Unlock()
	c.handled()
}

// drainHeld moves every held verdict into fs, in order, and disarms the
// hold's timer. Under mu.
func (c *ctlQueue) drainHeld(fs []ctlFrame) []ctlFrame {
	fs = append(fs, c.held...)
	clear(c.held)
	c.held = c.held[:0]
	c.heldN.Store(0)
	if c.heldArmed {
		c.heldArmed = false
		c.heldTimer.Stop()
	}
	return fs
}

// settle waits, up to d, until the control frames queued so far have
// gone: none is left in the queue and none is being sent. A rank that
// closes lets its verdicts go before its links do (Endpoint.Close); the
// goroutine that queued them, or the queue's own, sends them meanwhile.
func (c *ctlQueue) settle(d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		c.mu.Lock()
		idle := len(c.q) == 0 && !c.draining
		c.mu.Unlock()
		if idle || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// flushHeld sends the held verdicts now, waiting for the transport to
// take them (at most a second each): for a rank that closes, whose
// peers would otherwise see it gone before its word.
func (c *ctlQueue) flushHeld() {
	if c.heldN.Load() == 0 {
		return
	}
	c.mu.Lock()
	fs := c.drainHeld(nil)
	c.mu.Unlock()
	for _, f := range fs {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c.e.tx.Send(ctx, f.dst, f.h, f.payload)
		cancel()
	}
}
