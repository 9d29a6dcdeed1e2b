//go:build mpi

package mpi

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sigcheck/sigcheck/channel"
)

const (
	ringDepth = 32 // receives posted ahead for tagFrame messages (ANY_SOURCE)
	sendSlots = 64 // frames in C memory on their way out: beyond, Send waits
	stageSize = 1 << 20
)

// Connect joins this process's rank of the MPI job to a channel
// Endpoint: MPI is initialized on the first call (MPI_Init_thread),
// MPI_COMM_WORLD is duplicated (MPI_Comm_idup) into a communicator of the
// endpoint's own, and the endpoint's rank and size are those of the
// world. Every rank must call Connect, in the same order as the others.
// opts are the channel's (channel.WithInjector). Close the endpoint,
// then call Finalize once at the end.
func Connect(ctx context.Context, opts ...channel.TransportOption) (*channel.Endpoint, error) {
	if err := initialize(); err != nil {
		return nil, err
	}
	comm, err := dup(ctx)
	if err != nil {
		return nil, err
	}
	var t *transport
	seq := connects.Add(1)
	ep, err := channel.NewEndpoint(world.rank, world.size, func(f channel.Frames) (channel.Transport, error) {
		var err error
		t, err = newTransport(f, comm)
		if t != nil {
			t.seq = seq
		}
		return t, err
	}, opts...)
	if err != nil {
		return nil, err
	}
	// Only now: the engine takes no word from a transport (Frames.Lost)
	// before NewEndpoint has returned.
	world.live.Add(1)
	go t.progress()
	return ep, nil
}

// transport is a channel.Transport over one MPI communicator.
// connects counts the endpoints this process connected: the same count on
// every rank (they connect in the same order), so messages can name one.
var connects atomic.Int64

type transport struct {
	seq        int64 // this endpoint's number (connects)
	f          channel.Frames
	rank, size int
	comm       C.MPI_Comm

	// The receive ring (the progress goroutine's): ringDepth receives
	// posted in order, tested from head; MPI matches messages to them in
	// posting order, so frames are handled in the order they came.
	rbuf  []unsafe.Pointer
	rreq  request
	head  int
	stage unsafe.Pointer // a large payload that cannot go straight to its buffer (stageSize)
	drain unsafe.Pointer // payloads of peers whose frames are no longer read (stageSize)

	// Send slots, under mpiMu.
	sbuf   []unsafe.Pointer
	sreq   request
	sdst   []int
	byeReq request // per peer, its bye's send
	torn   bool    // the communicator is freed (under mpiMu)
	free   []int
	idx    *C.int // sendSlots ints: MPI_Testsome's indices
	serr   *C.int // and errors
	orphan []orphan
	sent   []sendWait // large payloads on their way, tested by the progress loop

	mu       sync.Mutex
	gone     []error // per peer: why its frames are no longer read (nil: live)
	sentBye  []bool
	gotBye   []bool
	nGotBye  int
	closed   bool
	closeAt  time.Time // when Close was called
	byesSent bool      // Close has posted its byes

	wake chan struct{}
}

// sendWait is a large payload's send: the progress loop tests it and
// closes done (after setting err) when MPI has finished with the payload,
// so that each rank has one goroutine polling MPI, not one per sender
// competing with it for the processor and the MPI lock.
type sendWait struct {
	req  request
	err  *error
	done chan struct{}
}

// orphan is a collective that a waiter left when its context ended: MPI
// still owns the request and its C buffers until it completes.
type orphan struct {
	req  request
	bufs []unsafe.Pointer
}

func newTransport(f channel.Frames, comm C.MPI_Comm) (*transport, error) {
	t := &transport{f: f, rank: f.Rank(), size: f.Size(), comm: comm,
		rreq: newRequests(ringDepth), sreq: newRequests(sendSlots), byeReq: newRequests(f.Size()),
		sdst:    make([]int, sendSlots),
		idx:     (*C.int)(cmalloc(sendSlots * 4)),
		serr:    (*C.int)(cmalloc(sendSlots * 4)),
		stage:   cmalloc(stageSize),
		gone:    make([]error, f.Size()),
		sentBye: make([]bool, f.Size()),
		gotBye:  make([]bool, f.Size()),
		wake:    make(chan struct{}, 1),
	}
	for i := range sendSlots {
		t.sbuf = append(t.sbuf, cmalloc(frameMax))
		t.free = append(t.free, sendSlots-1-i)
	}
	lockMPI()
	defer mpiMu.Unlock()
	for i := range ringDepth {
		t.rbuf = append(t.rbuf, cmalloc(frameMax))
		if err := t.post(i); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// post posts ring receive i. Under mpiMu.
func (t *transport) post(i int) error {
	return mpiError("MPI_Irecv", C.sc_irecv(t.rbuf[i], frameMax, -1, tagFrame, t.comm, reqAt(t.rreq, i)))
}

// usable says whether frames can go to dst.
func (t *transport) usable(dst int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return channel.ErrClosed
	}
	if err := t.gone[dst]; err != nil {
		return &channel.PeerError{Rank: dst, Err: err}
	}
	return nil
}

// Send sends one frame: header and payload in one message from a send
// slot, or the header so and the payload from the caller's memory,
// pinned, until MPI has read it. A large frame's send, once started,
// cannot be withdrawn (Open MPI cannot cancel a send): Send then waits
// for its receiver's progress loop to take it, which it does as soon as
// the header is in, whatever the engine above does; ctx bounds the wait
// for a send slot.
func (t *transport) Send(ctx context.Context, dst int, h channel.Header, payload []byte) error {
	if err := t.usable(dst); err != nil {
		return err
	}
	s, err := t.slot(ctx)
	if err != nil {
		return err
	}
	buf := cbytes(t.sbuf[s], frameMax)
	h.Put(buf)
	n := channel.HeaderSize
	if h.Plen <= inlineMax {
		n += copy(buf[n:], payload)
	}
	var pin runtime.Pinner
	var req request
	lockMPI()
	rc := C.sc_isend(t.sbuf[s], C.int(n), C.int(dst), tagFrame, t.comm, reqAt(t.sreq, s))
	t.sdst[s] = dst
	if rc != C.MPI_SUCCESS {
		t.free = append(t.free, s)
	} else if h.Plen > inlineMax {
		req = newRequests(1)
		var p unsafe.Pointer
		if len(payload) > 0 {
			pin.Pin(&payload[0])
			p = unsafe.Pointer(&payload[0])
		}
		rc = C.sc_isend(p, C.int(len(payload)), C.int(dst), tagPayload, t.comm, req)
	}
	mpiMu.Unlock()
	t.kick()
	if rc == C.MPI_SUCCESS && req != nil {
		w := sendWait{req: req, err: &err, done: make(chan struct{})}
		lockMPI()
		t.sent = append(t.sent, w)
		mpiMu.Unlock()
		t.kick()
		<-w.done
	} else {
		err = mpiError("MPI_Isend", rc)
	}
	if req != nil {
		freeRequests(req)
		pin.Unpin()
	}
	if err != nil {
		t.drop(dst, err)
		return &channel.PeerError{Rank: dst, Err: err}
	}
	return nil
}

// slot takes a free send slot, reclaiming those whose sends are done.
func (t *transport) slot(ctx context.Context) (int, error) {
	var w waiter
	for {
		lockMPI()
		if t.torn {
			mpiMu.Unlock()
			return 0, channel.ErrClosed
		}
		if len(t.free) == 0 {
			t.reap()
		}
		if k := len(t.free); k > 0 {
			s := t.free[k-1]
			t.free = t.free[:k-1]
			mpiMu.Unlock()
			return s, nil
		}
		mpiMu.Unlock()
		if ctx != nil {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		w.pause()
	}
}

// reap frees the slots whose sends have completed. Under mpiMu.
func (t *transport) reap() {
	if len(t.free) == sendSlots {
		return
	}
	var out C.int
	C.sc_testsome(sendSlots, t.sreq, &out, t.idx, t.serr)
	idx := unsafe.Slice(t.idx, sendSlots)
	errs := unsafe.Slice(t.serr, sendSlots)
	for i := range int(out) {
		s := int(idx[i])
		t.free = append(t.free, s)
		if errs[i] != C.MPI_SUCCESS {
			// Reported once the lock is let go: Lost reaches the engine.
			dst, err := t.sdst[s], mpiError("MPI_Isend", errs[i])
			go t.drop(dst, err)
		}
	}
}

// kick wakes the progress loop from a nap: a send usually means an
// answer is coming.
func (t *transport) kick() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Abort stops reading frames from peer (and tells it so): the engine's
// way to end a payload being written into a buffer that must be given
// back. A payload receive under way is withdrawn if MPI can, or
// finished.
func (t *transport) Abort(peer int, err error) {
	if peer >= 0 && peer < t.size && peer != t.rank {
		t.drop(peer, err)
	}
}

// drop stops reading frames from peer (their payloads are still taken
// and thrown away, so that the peer never waits on them) and tells the
// peer and the engine that the link is gone.
func (t *transport) drop(peer int, err error) {
	t.mu.Lock()
	first := t.gone[peer] == nil
	if first {
		t.gone[peer] = err
	}
	t.mu.Unlock()
	if first {
		t.bye(peer)
		t.f.Lost(peer, err)
	}
}

// bye sends peer the empty message that ends the link, once, with a
// request of its own (no slot: it carries nothing).
func (t *transport) bye(peer int) {
	t.mu.Lock()
	sent := t.sentBye[peer]
	t.sentBye[peer] = true
	t.mu.Unlock()
	if sent {
		return
	}
	lockMPI()
	if !t.torn { // after teardown there is no communicator to say it on
		C.sc_isend(nil, 0, C.int(peer), tagFrame, t.comm, reqAt(t.byeReq, peer))
	}
	mpiMu.Unlock()
}

// Close ends the endpoint's transport: every peer is sent a bye, and
// the progress loop keeps taking (and dropping) what comes until every
// peer has sent its own; Finalize waits for that.
func (t *transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.closeAt = time.Now()
	t.mu.Unlock()
	for p := range t.size {
		if p != t.rank {
			t.bye(p)
		}
	}
	// Only now may the progress loop free the communicator: a bye posted
	// after that would be lost, and its peer would wait for it.
	t.mu.Lock()
	t.byesSent = true
	t.mu.Unlock()
	t.kick()
	return nil
}

// progress is the transport's receive loop: it tests the head of the
// ring, hands each frame to the engine, and reposts the receive.
func (t *transport) progress() {
	defer world.live.Done()
	var w waiter
	for {
		var done, src, count, errc C.int
		deferToWaiters()
		mpiMu.Lock()
		t.reap()
		t.reapOrphans()
		t.drainGone()
		woke := t.testSent()
		C.sc_test(reqAt(t.rreq, t.head), &done, &src, &count, &errc)
		mpiMu.Unlock()
		if woke {
			w = waiter{}
			runtime.Gosched() // let the sender it woke run here, now
		}
		if done == 0 {
			if t.finished() {
				t.teardown()
				return
			}
			w.idle(t.wake)
			continue
		}
		t.handle(t.head, int(src), int(count), errc)
		mpiMu.Lock()
		err := t.post(t.head)
		mpiMu.Unlock()
		if err != nil {
			t.fail(err)
			return
		}
		t.head = (t.head + 1) % ringDepth
		w = waiter{}
		// The frame may have woken a receiver: let it run here, now,
		// rather than wait for another thread to take it.
		runtime.Gosched()
	}
}

// handle takes the message of ring slot i.
func (t *transport) handle(i, src, count int, errc C.int) {
	if src < 0 || src >= t.size || src == t.rank {
		return // MPI names the source; a bad one cannot be ours
	}
	if errc != C.MPI_SUCCESS {
		t.drop(src, mpiError("receiving a frame", errc))
		return
	}
	if count == 0 {
		t.gotByeFrom(src)
		return
	}
	t.mu.Lock()
	skip := t.closed || t.gone[src] != nil
	t.mu.Unlock()
	if skip {
		return // its payload, if any, is drained
	}
	h, inline, err := parseFrame(src, cbytes(t.rbuf[i], count))
	if err == nil {
		if h.Plen <= inlineMax {
			err = t.f.Deliver(src, h, func(b []byte) error {
				inline = inline[copy(b, inline):]
				return nil
			})
		} else {
			p := &payloadFill{t: t, src: src, plen: h.Plen}
			err = t.f.Deliver(src, h, p.fill)
			p.release()
			if err == nil && !p.started {
				err = fmt.Errorf("%w: rank %d: a frame's payload was not read", channel.ErrProtocol, src)
			}
		}
	}
	if err != nil {
		t.drop(src, err)
	}
}

// payloadFill reads a large frame's payload (its tagPayload message)
// for the engine. The payload goes straight into the first slice the
// engine gives if that slice's array has room for all of it (the
// engine's next slices are then the rest of the same array, and nothing
// is copied: a receive buffer); else into C memory, copied out slice by
// slice.
type payloadFill struct {
	t       *transport
	src     int
	plen    int
	started bool
	direct  []byte // where the payload went, if in Go memory
	at      int    // bytes handed to the engine
	pin     runtime.Pinner
}

func (p *payloadFill) fill(b []byte) error {
	if !p.started {
		p.started = true
		var dst unsafe.Pointer
		if cap(b) >= p.plen {
			p.direct = b[:p.plen]
			p.pin.Pin(&p.direct[0])
			dst = unsafe.Pointer(&p.direct[0])
		} else {
			dst = p.t.stage
		}
		if err := p.t.recvPayload(p.src, dst, p.plen); err != nil {
			return err
		}
	}
	if p.at+len(b) > p.plen {
		return fmt.Errorf("%w: rank %d: the engine read past a payload", channel.ErrProtocol, p.src)
	}
	if len(b) > 0 {
		if p.direct != nil {
			if &b[0] != &p.direct[p.at] {
				copy(b, p.direct[p.at:])
			}
		} else {
			copy(b, cbytes(p.t.stage, p.plen)[p.at:])
		}
	}
	p.at += len(b)
	return nil
}

func (p *payloadFill) release() { p.pin.Unpin() }

// recvPayload receives the payload of src's frame into dst: exactly n
// bytes, or the link is broken. A link dropped meanwhile (Abort)
// withdraws the receive.
func (t *transport) recvPayload(src int, dst unsafe.Pointer, n int) error {
	req := newRequests(1)
	defer freeRequests(req)
	lockMPI()
	rc := C.sc_irecv(dst, C.int(n), C.int(src), tagPayload, t.comm, req)
	mpiMu.Unlock()
	if err := mpiError("MPI_Irecv", rc); err != nil {
		return err
	}
	st, err := await(nil, req, func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.gone[src] != nil
	})
	switch {
	case err != nil:
		return err
	case st.count != n:
		return fmt.Errorf("%w: rank %d: a payload of %d bytes whose header says %d", channel.ErrProtocol, src, st.count, n)
	}
	return nil
}

// gotByeFrom records src's last message.
func (t *transport) gotByeFrom(src int) {
	t.mu.Lock()
	if !t.gotBye[src] {
		t.gotBye[src] = true
		t.nGotBye++
	}
	first := t.gone[src] == nil
	if first {
		t.gone[src] = ErrPeerClosed
	}
	t.mu.Unlock()
	if first {
		t.f.Lost(src, ErrPeerClosed)
	}
}

// drainGone takes and drops the payloads of peers whose frames are no
// longer read. Under mpiMu.
func (t *transport) drainGone() {
	t.mu.Lock()
	var gone []int
	for p, err := range t.gone {
		if err != nil || t.closed && p != t.rank {
			gone = append(gone, p)
		}
	}
	t.mu.Unlock()
	if len(gone) == 0 {
		return
	}
	if t.drain == nil {
		t.drain = cmalloc(stageSize)
	}
	for _, p := range gone {
		for got := C.int(1); got != 0; {
			C.sc_drain(C.int(p), tagPayload, t.comm, t.drain, stageSize, &got)
		}
	}
}

// finished says whether the transport is closed and every peer has said
// its last; or, byeTimeout after Close, that some have not: then it says
// which on stderr, and gives up on them (Finalize must not hang on a peer
// that vanished without a word).
func (t *transport) finished() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.byesSent {
		return false
	}
	if t.nGotBye == t.size-1 {
		return true
	}
	if time.Since(t.closeAt) < byeTimeout {
		return false
	}
	var missing []int
	for p, got := range t.gotBye {
		if !got && p != t.rank {
			missing = append(missing, p)
		}
	}
	fmt.Fprintf(os.Stderr, "channel/mpi: rank %d, endpoint %d: no last word from ranks %v %v after closing; going on without\n", t.rank, t.seq, missing, byeTimeout)
	return true
}

const byeTimeout = 10 * time.Second

// teardown waits for the last sends, withdraws the ring's receives and
// frees the communicator and the C memory.
func (t *transport) teardown() {
	var w waiter
	for {
		lockMPI()
		t.reap()
		t.reapOrphans()
		t.testSent()
		idle := len(t.free) == sendSlots && len(t.orphan) == 0 && len(t.sent) == 0
		for p := range t.size {
			if idle && !isNull(reqAt(t.byeReq, p)) {
				var done, src, count, errc C.int
				C.sc_test(reqAt(t.byeReq, p), &done, &src, &count, &errc)
				idle = done != 0
			}
		}
		if idle {
			t.torn = true
		}
		mpiMu.Unlock()
		if idle {
			break
		}
		w.pause()
	}
	for i := range ringDepth {
		lockMPI()
		C.sc_cancel(reqAt(t.rreq, i))
		mpiMu.Unlock()
		await(nil, reqAt(t.rreq, i), nil)
	}
	lockMPI()
	C.sc_comm_free(&t.comm)
	mpiMu.Unlock()
	for _, b := range append(t.rbuf, t.sbuf...) {
		cfree(b)
	}
	for _, b := range []unsafe.Pointer{t.stage, t.drain, unsafe.Pointer(t.rreq), unsafe.Pointer(t.sreq), unsafe.Pointer(t.byeReq), unsafe.Pointer(t.idx), unsafe.Pointer(t.serr)} {
		if b != nil {
			cfree(b)
		}
	}
}

// fail ends a transport whose receives MPI no longer takes: every peer is
// lost.
func (t *transport) fail(err error) {
	for p := range t.size {
		if p != t.rank {
			t.mu.Lock()
			if t.gone[p] == nil {
				t.gone[p] = err
			}
			t.mu.Unlock()
			t.f.Lost(p, err)
		}
	}
}

// status is what a completed request says of its message.
type status struct {
	src, count int
}

var errWithdrawn = errors.New("channel/mpi: receive withdrawn: the link was dropped")

// await waits for req to complete, testing it under the lock (which lets
// the other goroutines' MPI calls through between tests), spinning a
// while, then napping. It returns early with ctx's error (leaving the
// request to MPI), or, once stop says so, withdraws the request
// (MPI_Cancel) and waits for that.
func await(ctx context.Context, req request, stop func() bool) (status, error) {
	var w waiter
	canceled := false
	for {
		var done, src, count, errc C.int
		lockMPI()
		C.sc_test(req, &done, &src, &count, &errc)
		mpiMu.Unlock()
		if done != 0 {
			if canceled {
				return status{}, errWithdrawn
			}
			return status{int(src), int(count)}, mpiError("MPI_Test", errc)
		}
		if ctx != nil && ctx.Err() != nil {
			return status{}, ctx.Err()
		}
		if !canceled && stop != nil && stop() {
			canceled = true
			lockMPI()
			C.sc_cancel(req)
			mpiMu.Unlock()
		}
		w.pause()
	}
}

// A waiter spins for spinFor, then naps, longer each time up to maxNap:
// MPI has no way to wake a thread when a message comes, so a rank that
// waits must look. Each look yields to the other goroutines
// (runtime.Gosched), so that the receiver a frame woke runs on the same
// thread at once; without that, it waited for another thread to take it
// up, and a 1-byte ping-pong was many times slower (TestOSU -osu latency
// measures it). The price: behind a goroutine that computes
// without pause, each look waits in the global run queue for that
// goroutine's time slice (10 ms), and messages crawl meanwhile (the load
// test shows it, and that the busy goroutine is not starved). When mpirun
// put more ranks on the node than it has cores, each look also yields the
// core to the other processes (sched_yield).
type waiter struct {
	start time.Time
	naps  int
	timer *time.Timer
}

const (
	spinFor = 200 * time.Microsecond
	minNap  = 10 * time.Microsecond
	maxNap  = time.Millisecond
)

func (w *waiter) pause() {
	if w.spin() {
		return
	}
	time.Sleep(w.nap())
}

func (w *waiter) spin() bool {
	if w.start.IsZero() {
		w.start = time.Now()
	}
	if time.Since(w.start) < spinFor {
		runtime.Gosched()
		if world.oversub {
			C.sc_yield()
		}
		return true
	}
	return false
}

func (w *waiter) nap() time.Duration {
	d := min(maxNap, minNap<<min(w.naps, 8))
	w.naps++
	return d
}

// idle is pause for the progress loop, whose naps end early on wake.
func (w *waiter) idle(wake <-chan struct{}) {
	if w.spin() {
		return
	}
	d := w.nap()
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-wake:
		w.timer.Stop()
		*w = waiter{timer: w.timer}
	case <-w.timer.C:
	}
}

// The native collectives: MPI's own, for an unprotected Endpoint
// without an Injector (channel.Barrierer, Bcaster, Allgatherer). Each
// runs non-blocking (MPI_Ibarrier, MPI_Ibcast, MPI_Iallgather) on the
// transport's communicator, so the progress loop keeps delivering
// frames meanwhile, over C memory, so that a caller whose context ends
// can return while MPI finishes it (every rank must still call it: MPI
// collectives cannot be withdrawn).

// Barrier is MPI_Ibarrier.
func (t *transport) Barrier(ctx context.Context) error {
	return t.collective(ctx, "MPI_Ibarrier", nil, func(req request) C.int { return C.sc_ibarrier(t.comm, req) })
}

// Bcast is MPI_Ibcast of buf from root.
func (t *transport) Bcast(ctx context.Context, root int, buf []byte) error {
	if len(buf) > math.MaxInt32 {
		return fmt.Errorf("channel/mpi: a native broadcast of %d bytes: MPI counts stop at %d", len(buf), math.MaxInt32)
	}
	c := cmalloc(len(buf))
	if t.rank == root {
		copy(cbytes(c, len(buf)), buf)
	}
	err := t.collective(ctx, "MPI_Ibcast", []unsafe.Pointer{c}, func(req request) C.int {
		return C.sc_ibcast(c, C.int(len(buf)), C.int(root), t.comm, req)
	})
	if err == nil {
		copy(buf, cbytes(c, len(buf)))
		cfree(c)
	}
	return err
}

// Allgather is MPI_Iallgather of send into recv (send's length times the
// ranks).
func (t *transport) Allgather(ctx context.Context, send, recv []byte) error {
	if len(recv) > math.MaxInt32 {
		return fmt.Errorf("channel/mpi: a native all-gather of %d bytes: MPI counts stop at %d", len(recv), math.MaxInt32)
	}
	s, r := cmalloc(len(send)), cmalloc(len(recv))
	copy(cbytes(s, len(send)), send)
	err := t.collective(ctx, "MPI_Iallgather", []unsafe.Pointer{s, r}, func(req request) C.int {
		return C.sc_iallgather(s, r, C.int(len(send)), t.comm, req)
	})
	if err == nil {
		copy(recv, cbytes(r, len(recv)))
		cfree(s)
		cfree(r)
	}
	return err
}

// collective starts one non-blocking collective and waits for it; its C
// buffers are freed by the caller on success, or, if ctx ends first,
// left to the progress loop with the request (orphan).
func (t *transport) collective(ctx context.Context, op string, bufs []unsafe.Pointer, start func(request) C.int) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		for _, b := range bufs {
			cfree(b)
		}
		return channel.ErrClosed
	}
	req := newRequests(1)
	rc := C.int(C.MPI_ERR_COMM)
	lockMPI()
	if !t.torn {
		rc = start(req)
	}
	mpiMu.Unlock()
	if err := mpiError(op, rc); err != nil {
		freeRequests(req)
		for _, b := range bufs {
			cfree(b)
		}
		return err
	}
	_, err := await(ctx, req, nil)
	if err != nil && ctx.Err() != nil {
		lockMPI()
		t.orphan = append(t.orphan, orphan{req, bufs})
		mpiMu.Unlock()
		return err
	}
	freeRequests(req)
	if err != nil {
		for _, b := range bufs {
			cfree(b)
		}
		return err
	}
	return nil
}

// testSent completes the large payloads MPI is done with and wakes their
// senders. Under mpiMu.
func (t *transport) testSent() bool {
	woke := false
	kept := t.sent[:0]
	for _, w := range t.sent {
		var done, src, count, errc C.int
		C.sc_test(w.req, &done, &src, &count, &errc)
		if done == 0 {
			kept = append(kept, w)
			continue
		}
		*w.err = mpiError("MPI_Isend", errc)
		close(w.done)
		woke = true
	}
	clear(t.sent[len(kept):])
	t.sent = kept
	return woke
}

// reapOrphans frees the collectives left by their callers once MPI is
// done with them. Under mpiMu.
func (t *transport) reapOrphans() {
	kept := t.orphan[:0]
	for _, o := range t.orphan {
		var done, src, count, errc C.int
		C.sc_test(o.req, &done, &src, &count, &errc)
		if done == 0 {
			kept = append(kept, o)
			continue
		}
		freeRequests(o.req)
		for _, b := range o.bufs {
			cfree(b)
		}
	}
	t.orphan = kept
}
