//go:build mpi

package mpi

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sigcheck/sigcheck/channel"
)

// The transport's parts, a file each: its life (here: connecting,
// dropping a link, closing), sending (send.go), receiving
// (recv.go), who drives MPI while a rank waits (progress.go) and MPI's
// own collectives (coll.go).

const (
	ringDepth = 64 // receives posted ahead for tagFrame messages (any source)
	sendSlots = 64 // small frames in C memory on their way out: beyond, Send waits
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
	var t *tx
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
	go t.run()
	if testHookConnected != nil {
		testHookConnected(t)
	}
	return ep, nil
}

// testHookConnected, if set (tests), is called with every transport
// Connect makes.
var testHookConnected func(*tx)

// sendRaw sends b to dst with tag as it is, for the tests that play a
// peer breaking the protocol.
func (t *tx) sendRaw(dst, tag int, b []byte) error {
	req := newRequests(1)
	defer freeRequests(req)
	var pin runtime.Pinner
	if len(b) > 0 {
		pin.Pin(&b[0])
	}
	defer pin.Unpin()
	lockMPI()
	rc := C.sc_isend_go(cptr(b), C.int(len(b)), C.int(dst), C.int(tag), t.comm, handle(unsafe.Pointer(req)))
	mpiMu.Unlock()
	if err := mpiError("MPI_Isend", rc); err != nil {
		return err
	}
	_, err := await(nil, req, nil, nil)
	return err
}

// connects counts the endpoints this process connected: the same count on
// every rank (they connect in the same order), so messages can name one.
var connects atomic.Int64

// tx is a channel.Transport over one MPI communicator.
type tx struct {
	seq        int64 // this endpoint's number (connects)
	f          channel.Frames
	rank, size int
	comm       C.MPI_Comm

	// Under mpiMu.
	slots  *C.sc_slots // small frames on their way out (send.go)
	ring   *C.sc_ring  // receives posted for frames (recv.go)
	slotsH C.uintptr_t // the two as a message's path takes them (handle)
	ringH  C.uintptr_t
	byeReq request  // per peer, its bye's send
	torn   bool     // the communicator is freed
	orphan []orphan // collectives their callers left (coll.go)

	rx  receiver // the delivering goroutine's state (recv.go)
	drv driver   // who delivers, and when (progress.go)

	mu       sync.Mutex
	gone     []error     // per peer: why its frames are no longer read (nil: live)
	broken   atomic.Bool // a peer gone, or closed: usable and isGone look under mu
	sentBye  []bool
	gotBye   []bool
	nGotBye  int
	closed   bool
	closeAt  time.Time // when Close was called
	byesSent bool      // Close has posted its byes
}

func newTransport(f channel.Frames, comm C.MPI_Comm) (*tx, error) {
	t := &tx{f: f, rank: f.Rank(), size: f.Size(), comm: comm,
		byeReq:  newRequests(f.Size()),
		gone:    make([]error, f.Size()),
		sentBye: make([]bool, f.Size()),
		gotBye:  make([]bool, f.Size()),
	}
	t.drv.init()
	t.rx.init(t)
	lockMPI()
	defer mpiMu.Unlock()
	t.slots = C.sc_slots_new(comm, sendSlots, frameMax)
	var rc C.int
	t.ring = C.sc_ring_new(comm, ringDepth, frameMax, tagFrame, &rc)
	if t.slots == nil || t.ring == nil {
		panic("channel/mpi: out of C memory for an endpoint's buffers")
	}
	t.slotsH, t.ringH = handle(unsafe.Pointer(t.slots)), handle(unsafe.Pointer(t.ring))
	if err := mpiError("MPI_Irecv", rc); err != nil {
		return nil, err
	}
	return t, nil
}

// usable says whether frames can go to dst.
func (t *tx) usable(dst int) error {
	if !t.broken.Load() {
		return nil // the usual case, without the lock
	}
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

// isGone says whether src's frames are no longer read.
func (t *tx) isGone(src int) bool {
	if !t.broken.Load() {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed || t.gone[src] != nil
}

// Abort stops reading frames from peer (and tells it so): the engine's
// way to end a payload being written into a buffer that must be given
// back. A payload receive under way is withdrawn if MPI can, or
// finished.
func (t *tx) Abort(peer int, err error) {
	if peer >= 0 && peer < t.size && peer != t.rank {
		t.drop(peer, err)
	}
}

// drop stops reading frames from peer (their payloads are still taken
// and thrown away, so that the peer never waits on them) and tells the
// peer and the engine that the link is gone.
func (t *tx) drop(peer int, err error) {
	if t.markGone(peer, err) {
		t.bye(peer)
		t.f.Lost(peer, err)
	}
}

// markGone records why peer's frames are no longer read, and reports
// whether that is news.
func (t *tx) markGone(peer int, err error) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone[peer] != nil {
		return false
	}
	t.gone[peer] = err
	t.broken.Store(true)
	return true
}

// bye sends peer the empty message that ends the link, once, with a
// request of its own (no slot: it carries nothing).
func (t *tx) bye(peer int) {
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
// the transport's goroutine keeps taking (and dropping) what comes until
// every peer has sent its own; Finalize waits for that.
func (t *tx) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.broken.Store(true)
	t.closeAt = time.Now()
	t.mu.Unlock()
	for p := range t.size {
		if p != t.rank {
			t.bye(p)
		}
	}
	// Only now may the transport's goroutine free the communicator: a
	// bye posted after that would be lost, and its peer would wait for
	// it.
	t.mu.Lock()
	t.byesSent = true
	t.mu.Unlock()
	t.drv.wake()
	return nil
}

// gotByeFrom records src's last message.
func (t *tx) gotByeFrom(src int) {
	t.mu.Lock()
	if !t.gotBye[src] {
		t.gotBye[src] = true
		t.nGotBye++
	}
	t.mu.Unlock()
	if t.markGone(src, ErrPeerClosed) {
		t.f.Lost(src, ErrPeerClosed)
	}
}

// finished says whether the transport is closed and every peer has said
// its last; or, byeTimeout after Close, that some have not: then it says
// which on stderr, and gives up on them (Finalize must not hang on a peer
// that vanished without a word).
func (t *tx) finished() bool {
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
func (t *tx) teardown() {
	var w waiter
	for {
		lockMPI()
		idle := C.sc_slots_busy(t.slots, out) == 0
		t.reapOrphans()
		idle = idle && len(t.orphan) == 0
		for p := range t.size {
			if idle && !isNull(reqAt(t.byeReq, p)) {
				idle, _, _, _ = test(reqAt(t.byeReq, p))
			}
		}
		if idle {
			t.torn = true
			C.sc_ring_free(t.ring)
			C.sc_slots_free(t.slots)
			C.sc_comm_free(&t.comm)
			t.ring, t.slots = nil, nil
		}
		mpiMu.Unlock()
		if idle {
			break
		}
		w.pause()
	}
	t.rx.free()
	freeRequests(t.byeReq)
}

// fail ends a transport whose receives MPI no longer takes: every peer is
// lost.
func (t *tx) fail(err error) {
	for p := range t.size {
		if p != t.rank && t.markGone(p, err) {
			t.f.Lost(p, err)
		}
	}
}

// cptr is the address of b's first byte for C (0 if b is empty), as an
// integer (see shim.h): the caller keeps b alive (runtime.KeepAlive, or
// pinned) while C uses it.
func cptr(b []byte) C.uintptr_t {
	if len(b) == 0 {
		return 0
	}
	return C.uintptr_t(uintptr(unsafe.Pointer(&b[0])))
}
