//go:build mpi

package mpi

/*
#cgo nocallback sc_ring_poll
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/sigcheck/sigcheck/channel"
)

// Receiving. Frames come through the receive ring (slots.c): receives
// posted ahead for tagFrame messages from any rank, tested from the head,
// so that frames are handled in the order MPI matched them, which keeps
// each sender's order. Whoever holds the delivery token (progress.go)
// polls the ring and hands each frame to the engine on its own goroutine.
// A small frame's payload is read from the ring's memory; a larger one's
// is its own message, received when the engine asks for the payload
// (fill), straight into the receive buffer it gives.

// receiver is the delivering side's state: only the token's holder
// touches it, so it is made once and reused frame after frame, and a
// frame costs no allocation.
type receiver struct {
	t *tx

	inline []byte             // a small frame's payload still to read
	inFill func([]byte) error // reads it (made once)

	src, plen, at int                // a large frame's source, length and bytes read so far
	started       bool               // its payload's receive was made
	direct        []byte             // where it went, if into the engine's memory
	pin           runtime.Pinner     // which is pinned while MPI writes it
	lgFill        func([]byte) error // reads it (made once)
	req           request            // its receive
	stage         unsafe.Pointer     // C memory for a payload with nowhere to go (MaxFrame), made when first needed
	drain         unsafe.Pointer     // C memory that drained payloads go to (MaxFrame), made when first needed
}

func (r *receiver) init(t *tx) {
	r.t = t
	r.inFill = r.fillInline
	r.lgFill = r.fillLarge
	r.req = newRequests(1)
}

func (r *receiver) free() {
	for _, p := range []unsafe.Pointer{r.stage, r.drain} {
		if p != nil {
			cfree(p)
		}
	}
	freeRequests(r.req)
}

// deliverOne polls the ring once and delivers the frame that came, if
// one did. Only the token's holder calls it.
func (t *tx) deliverOne() bool {
	deferToWaiters()
	mpiMu.Lock()
	if t.torn {
		mpiMu.Unlock()
		return false
	}
	rc := C.sc_ring_poll(t.ringH, outH)
	src, count, errc, msg := out.src, out.count, out.err, out.msg
	mpiMu.Unlock()
	switch rc {
	case 0:
		return false
	case -1:
		t.fail(mpiError("MPI_Irecv", errc))
		return false
	}
	t.handle(int(src), int(count), errc, unsafe.Pointer(msg))
	return true
}

// handle takes one message off the ring.
func (t *tx) handle(src, count int, errc C.int, msg unsafe.Pointer) {
	switch {
	case src < 0 || src >= t.size || src == t.rank:
		return // MPI names the source; a bad one cannot be ours
	case errc == C.MPI_ERR_TRUNCATE:
		t.drop(src, fmt.Errorf("%w: rank %d: a frame message of more than %d bytes", channel.ErrProtocol, src, frameMax))
		return
	case errc != C.MPI_SUCCESS:
		t.drop(src, mpiError("receiving a frame", errc))
		return
	case count < 0:
		t.drop(src, fmt.Errorf("%w: rank %d: a frame message whose length MPI cannot tell", channel.ErrProtocol, src))
		return
	case count == 0:
		t.gotByeFrom(src)
		return
	case t.isGone(src):
		return // its payload, if any, is drained
	}
	h, inline, err := parseFrame(src, cbytes(msg, count))
	if err == nil {
		if h.Plen <= inlineMax {
			err = t.rx.deliverInline(src, h, inline)
		} else {
			err = t.rx.deliverLarge(src, h)
		}
	}
	if err != nil {
		t.drop(src, err)
	}
}

func (r *receiver) deliverInline(src int, h channel.Header, payload []byte) error {
	r.inline = payload
	err := r.t.f.Deliver(src, h, r.inFill)
	r.inline = nil
	return err
}

func (r *receiver) fillInline(b []byte) error {
	if len(b) > len(r.inline) {
		return fmt.Errorf("%w: the engine read past a frame's payload", channel.ErrProtocol)
	}
	r.inline = r.inline[copy(b, r.inline):]
	return nil
}

func (r *receiver) deliverLarge(src int, h channel.Header) error {
	r.src, r.plen, r.at, r.started, r.direct = src, h.Plen, 0, false, nil
	err := r.t.f.Deliver(src, h, r.lgFill)
	r.pin.Unpin()
	r.direct = nil
	if err == nil && r.at != r.plen {
		// Unread, its payload waits in MPI: the link is dropped, and
		// drainGone takes it.
		err = fmt.Errorf("%w: rank %d: %d of a frame's %d payload bytes were read", channel.ErrProtocol, src, r.at, r.plen)
	}
	return err
}

// fillLarge reads a large frame's payload for the engine. The payload
// goes straight into the first slice the engine gives if that slice's
// array has room for all of it (the engine's next slices are then the
// rest of the same array, and nothing is copied: a receive buffer); else
// into C memory, copied out slice by slice.
func (r *receiver) fillLarge(b []byte) error {
	if !r.started {
		r.started = true
		var dst C.uintptr_t
		if cap(b) >= r.plen {
			r.direct = b[:r.plen]
			r.pin.Pin(&r.direct[0])
			dst = cptr(r.direct)
		} else {
			if r.stage == nil {
				r.stage = cmalloc(channel.MaxFrame)
			}
			dst = C.uintptr_t(uintptr(r.stage))
		}
		if err := r.t.recvPayload(r.src, dst, r.plen, r.req); err != nil {
			return err
		}
	}
	if r.at+len(b) > r.plen {
		return fmt.Errorf("%w: rank %d: the engine read past a payload", channel.ErrProtocol, r.src)
	}
	if len(b) > 0 {
		from := r.direct
		if from == nil {
			from = cbytes(r.stage, r.plen)
		}
		if from = from[r.at:]; &b[0] != &from[0] {
			copy(b, from)
		}
	}
	r.at += len(b)
	return nil
}

// recvPayload receives the payload of src's frame into dst: exactly n
// bytes, or the link is broken. The receive is made only once the
// payload's message has come and is exactly n bytes long (a matched
// probe, sc_take_payload): MPI then never writes into the engine's
// memory a message it would cut short, nor after the receive has ended,
// which a receive cut short by MPI_ERR_TRUNCATE does not promise. It
// gives up on a link dropped meanwhile (Abort; the payload, if it comes,
// is drained), and on a payload that has not come payloadTimeout after
// its header: its sender sent both in one go, so a peer that sends a
// header alone is broken, and would otherwise keep every other peer's
// frames waiting behind it.
func (t *tx) recvPayload(src int, dst C.uintptr_t, n int, req request) error {
	timeout := payloadTimeout
	if testHookPayloadTimeout != 0 {
		timeout = testHookPayloadTimeout
	}
	var w waiter
	var start time.Time
	for looks := 0; ; looks++ {
		lockMPI()
		if t.rx.drain == nil {
			t.rx.drain = cmalloc(channel.MaxFrame)
		}
		rc := C.sc_take_payload(C.int(src), tagPayload, t.comm, dst, C.int(n), handle(unsafe.Pointer(req)), t.rx.drain, channel.MaxFrame, outH)
		count, errc := int(out.count), out.err
		mpiMu.Unlock()
		switch {
		case errc != C.MPI_SUCCESS:
			return mpiError("receiving a payload", errc)
		case rc < 0:
			return fmt.Errorf("%w: rank %d: a payload of %d bytes whose header says %d", channel.ErrProtocol, src, count, n)
		case rc > 0:
			_, err := await(nil, req, nil, nil)
			return err
		case t.isGone(src):
			return errWithdrawn
		}
		if looks%64 == 63 { // the clock now and then: a look costs less
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > timeout {
				return fmt.Errorf("%w: rank %d: no payload %v after its frame's header", channel.ErrProtocol, src, timeout)
			}
		}
		w.pause()
	}
}

// payloadTimeout bounds the wait for a payload once its header is in.
const payloadTimeout = 30 * time.Second

// testHookPayloadTimeout, if not 0 (tests), replaces payloadTimeout.
var testHookPayloadTimeout time.Duration

// drainGone takes and drops the payloads of peers whose frames are no
// longer read, so that none waits for them. Under mpiMu.
func (t *tx) drainGone() {
	if !t.broken.Load() {
		return
	}
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
	if t.rx.drain == nil {
		t.rx.drain = cmalloc(channel.MaxFrame)
	}
	for _, p := range gone {
		for got := C.int(1); got != 0; {
			C.sc_drain(C.int(p), tagPayload, t.comm, t.rx.drain, channel.MaxFrame, &got)
		}
	}
}
