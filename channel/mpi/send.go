//go:build mpi

package mpi

/*
#cgo nocallback sc_slots_send
#include "shim.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/transport"
)

// Sending. The caller's own goroutine makes the MPI calls: no goroutine
// of the transport's is in between. A frame goes one of two ways, by its
// payload's size:
//
//   - Small (at most inlineMax): header and payload are copied into a
//     send slot in C memory (one cgo call) and sent as one message; Send
//     returns at once.
//   - Larger: the header goes from a slot, and the payload as a message
//     of its own from the caller's memory, pinned (runtime.Pinner), which
//     the receiver takes straight into the buffer its engine gives; Send
//     waits until MPI has read it. Post (transport.Poster) returns as soon
//     as both are under way, and the engine's next send to the peer starts
//     meanwhile, so a window of such sends is in flight at once; a copy
//     into C memory, after which Send could return at once, costs more
//     than it saves (TestRawBandwidth measures: scripts/mpi-bench.sh).

// pieceSize is the engine's piece over this transport
// (transport.Piecer): the frames of a protected message. Each is hashed
// by the sender while the receiver checks the one before, and by the
// receiver while it is still in its cache from the copy.
const pieceSize = 256 << 10

// Piece is transport.Piecer's.
func (t *tx) Piece() int { return pieceSize }

// Send sends one frame (channel.Transport). The small frame's way is
// kept to a few small frames of the stack: a send that runs on a
// goroutine of its own (Isend's, unless it went at once) would otherwise
// grow its stack (a copy) on the way.
func (t *tx) Send(ctx context.Context, dst int, h channel.Header, payload []byte) error {
	if err := t.usable(dst); err != nil {
		return err
	}
	if h.Plen <= inlineMax && len(payload) <= inlineMax {
		if rc := t.postSmall(dst, &h, payload); rc != C.MPI_SUCCESS {
			return t.sendSmallAgain(ctx, dst, &h, payload, rc)
		}
		return nil
	}
	return t.sendLarge(ctx, dst, &h, payload)
}

// sendLarge sends a frame whose payload is a message of its own.
func (t *tx) sendLarge(ctx context.Context, dst int, h *channel.Header, payload []byte) error {
	if err := checkPayload(h, payload); err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	req := newRequests(1)
	defer freeRequests(req)
	if err := t.postPinned(ctx, dst, h, payload, req, &pin); err != nil {
		return err
	}
	return t.awaitPinned(dst, req)
}

// Post starts a frame's send (transport.Poster): a small frame goes as
// by Send, and finish has nothing to wait for; a larger one's payload is
// under way from the caller's memory, pinned, when Post returns, and
// finish waits until MPI has read it. The engine's next send to dst
// starts meanwhile, so that a window of such frames is in flight at
// once.
func (t *tx) Post(ctx context.Context, dst int, h channel.Header, payload []byte) (func() error, error) {
	if err := t.usable(dst); err != nil {
		return nil, err
	}
	if h.Plen <= inlineMax && len(payload) <= inlineMax {
		if err := t.sendSmall(ctx, dst, &h, payload); err != nil {
			return nil, err
		}
		return transport.Sent, nil
	}
	if err := checkPayload(&h, payload); err != nil {
		return nil, err
	}
	s := &postedSend{t: t, dst: dst, req: newRequests(1)}
	if err := t.postPinned(ctx, dst, &h, payload, s.req, &s.pin); err != nil {
		s.pin.Unpin()
		freeRequests(s.req)
		return nil, err
	}
	return s.finish, nil
}

// postedSend is a large frame's send under way (Post).
type postedSend struct {
	t   *tx
	dst int
	req request
	pin runtime.Pinner
}

func (s *postedSend) finish() error {
	err := s.t.awaitPinned(s.dst, s.req)
	s.pin.Unpin()
	freeRequests(s.req)
	return err
}

// SendBatch sends frames to dst in order (transport.BatchSender): as
// many Sends would, but the larger payloads' sends are all under way
// before it waits for the first, so that the receiver takes one while
// the next is announced.
func (t *tx) SendBatch(ctx context.Context, dst int, hs []channel.Header, ps [][]byte) error {
	if err := t.usable(dst); err != nil {
		return err
	}
	if len(hs) != len(ps) {
		return fmt.Errorf("channel/mpi: a batch of %d headers and %d payloads", len(hs), len(ps))
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	var reqs request
	nreq := 0
	defer func() {
		if reqs != nil {
			freeRequests(reqs)
		}
	}()
	var err error
	for i := range hs {
		h, p := &hs[i], ps[i]
		if err = checkPayload(h, p); err != nil {
			break
		}
		switch {
		case h.Plen <= inlineMax:
			err = t.sendSmall(ctx, dst, h, p)
		default:
			if reqs == nil {
				reqs = newRequests(len(hs))
			}
			err = t.postPinned(ctx, dst, h, p, reqAt(reqs, nreq), &pin)
			if err == nil {
				nreq++
			}
		}
		if err != nil {
			break
		}
	}
	// The payloads under way are the caller's memory: waited for, error
	// or not.
	for i := range nreq {
		if e := t.awaitPinned(dst, reqAt(reqs, i)); err == nil {
			err = e
		}
	}
	return err
}

// TrySend sends a small frame if a send slot is free
// (transport.TrySender).
func (t *tx) TrySend(dst int, h channel.Header, payload []byte) bool {
	if h.Plen > inlineMax || len(payload) > inlineMax || t.usable(dst) != nil {
		return false
	}
	sent, err := t.trySmall(dst, &h, payload)
	return sent && err == nil
}

// checkPayload refuses a frame whose payload does not fit the way its
// header sends it. The header's length decides the way, since it is
// what the receiver goes by; a payload shorter than the header says
// goes as it is (the fault injector's truncated frames), and its
// receiver finds it short.
func checkPayload(h *channel.Header, payload []byte) error {
	if h.Plen <= inlineMax && len(payload) > inlineMax || len(payload) > channel.MaxFrame {
		return fmt.Errorf("channel/mpi: a frame of %d payload bytes whose header says %d", len(payload), h.Plen)
	}
	return nil
}

// sendSmall sends a frame with its payload in one message from a slot,
// waiting for a free slot as long as ctx lets it.
func (t *tx) sendSmall(ctx context.Context, dst int, h *channel.Header, payload []byte) error {
	if rc := t.postSmall(dst, h, payload); rc != C.MPI_SUCCESS {
		return t.sendSmallAgain(ctx, dst, h, payload, rc)
	}
	return nil
}

// sendSmallAgain is sendSmall after a first try that returned rc.
func (t *tx) sendSmallAgain(ctx context.Context, dst int, h *channel.Header, payload []byte, rc C.int) error {
	var w waiter
	for {
		switch rc {
		case C.MPI_SUCCESS:
			return nil
		case errTorn:
			return channel.ErrClosed
		case C.sc_busy:
		default:
			return t.broke(dst, mpiError("MPI_Isend", rc))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		w.pause()
		rc = t.postSmall(dst, h, payload)
	}
}

// trySmall sends a frame from a slot if one is free.
func (t *tx) trySmall(dst int, h *channel.Header, payload []byte) (bool, error) {
	switch rc := t.postSmall(dst, h, payload); rc {
	case C.MPI_SUCCESS:
		return true, nil
	case C.sc_busy:
		return false, nil
	case errTorn:
		return false, channel.ErrClosed
	default:
		return false, t.broke(dst, mpiError("MPI_Isend", rc))
	}
}

// errTorn is what postSmall returns once the communicator is freed.
const errTorn = -3

// postSmall sends a frame from a slot if one is free: MPI_SUCCESS,
// sc_busy, errTorn or MPI's error.
func (t *tx) postSmall(dst int, h *channel.Header, payload []byte) C.int {
	lockMPI()
	if t.torn {
		mpiMu.Unlock()
		return errTorn
	}
	h.Put(outHeader())
	rc := C.sc_slots_send(t.slotsH, cptr(payload), C.int(len(payload)), C.int(dst), tagFrame, outH)
	fdst, ferr := out.faildst, out.failerr
	mpiMu.Unlock()
	runtime.KeepAlive(payload)
	if ferr != C.MPI_SUCCESS {
		t.sendFailed(fdst, ferr)
	}
	return rc
}

// sendFailed drops the link of an earlier send that failed, if one did.
func (t *tx) sendFailed(dst, code C.int) {
	if code != C.MPI_SUCCESS && int(dst) >= 0 && int(dst) < t.size {
		t.drop(int(dst), mpiError("MPI_Isend", code))
	}
}

// broke drops the link with dst on err, and returns the error its Send
// returns.
func (t *tx) broke(dst int, err error) error {
	t.drop(dst, err)
	return &channel.PeerError{Rank: dst, Err: err}
}

// postHeader sends h alone from a slot, then calls then with the lock
// still held (the payload's send: the two go out in this order, with no
// other frame to dst between), waiting for a free slot. It returns the
// error of either.
func (t *tx) postHeader(ctx context.Context, dst int, h *channel.Header, then func() C.int) error {
	var w waiter
	for {
		lockMPI()
		if t.torn {
			mpiMu.Unlock()
			return channel.ErrClosed
		}
		h.Put(outHeader())
		rc := C.sc_slots_send(t.slotsH, 0, 0, C.int(dst), tagFrame, outH)
		fdst, ferr := out.faildst, out.failerr
		if rc == C.MPI_SUCCESS {
			rc = then()
		}
		mpiMu.Unlock()
		t.sendFailed(fdst, ferr)
		switch rc {
		case C.MPI_SUCCESS:
			return nil
		case C.sc_busy:
			if err := ctx.Err(); err != nil {
				return err
			}
			w.pause()
			continue
		}
		return t.broke(dst, mpiError("MPI_Isend", rc))
	}
}

// postPinned starts a frame whose payload goes from the caller's memory,
// pinned by pin until awaitPinned has seen req complete.
func (t *tx) postPinned(ctx context.Context, dst int, h *channel.Header, payload []byte, req request, pin *runtime.Pinner) error {
	if len(payload) > 0 {
		pin.Pin(&payload[0])
	}
	return t.postHeader(ctx, dst, h, func() C.int {
		return C.sc_isend_go(cptr(payload), C.int(len(payload)), C.int(dst), tagPayload, t.comm, handle(unsafe.Pointer(req)))
	})
}

// awaitPinned waits for a payload sent from the caller's memory to be
// read: no context ends it, since MPI cannot withdraw a send and the
// memory is the caller's once Send returns. Its receiver takes it as soon
// as its header is in, whatever the engine above does with the frame,
// and a receiver that dropped the link still takes it (drainGone); a
// receiver that died ends the job (see the package doc). Meanwhile it
// delivers this rank's frames when no one else does: its peer may be
// waiting in the same way for this rank to take its own.
func (t *tx) awaitPinned(dst int, req request) error {
	var w waiter
	for {
		lockMPI()
		done, _, _, errc := test(req)
		mpiMu.Unlock()
		if done {
			if err := mpiError("MPI_Isend", errc); err != nil {
				return t.broke(dst, err)
			}
			return nil
		}
		if t.deliverIfFree() {
			w = waiter{}
		} else {
			w.pause()
		}
	}
}
