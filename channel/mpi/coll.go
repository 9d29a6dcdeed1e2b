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
	"unsafe"

	"github.com/sigcheck/sigcheck/channel"
)

// The native collectives: MPI's own, for an unprotected Endpoint
// without an Injector (channel.Barrierer, Bcaster, Allgatherer). Each
// runs non-blocking (MPI_Ibarrier, MPI_Ibcast, MPI_Iallgather) on the
// transport's communicator, so that frames keep being delivered
// meanwhile (the waiting caller delivers them if nobody else does), over
// C memory, so that a caller whose context ends can return while MPI
// finishes it (every rank must still call it: MPI collectives cannot be
// withdrawn).

// Barrier is MPI_Ibarrier.
func (t *tx) Barrier(ctx context.Context) error {
	return t.collective(ctx, "MPI_Ibarrier", nil, func(req request) C.int { return C.sc_ibarrier(t.comm, req) })
}

// Bcast is MPI_Ibcast of buf from root.
func (t *tx) Bcast(ctx context.Context, root int, buf []byte) error {
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
func (t *tx) Allgather(ctx context.Context, send, recv []byte) error {
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
// left to the transport's goroutine with the request (orphan).
func (t *tx) collective(ctx context.Context, op string, bufs []unsafe.Pointer, start func(request) C.int) error {
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
	_, err := await(ctx, req, nil, t.deliverIfFree) // the frames keep coming meanwhile
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

// orphan is a collective that a waiter left when its context ended: MPI
// still owns the request and its C buffers until it completes.
type orphan struct {
	req  request
	bufs []unsafe.Pointer
}

// reapOrphans frees the collectives left by their callers once MPI is
// done with them. Under mpiMu.
func (t *tx) reapOrphans() {
	kept := t.orphan[:0]
	for _, o := range t.orphan {
		if done, _, _, _ := test(o.req); !done {
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

// status is what a completed request says of its message.
type status struct {
	src, count int
}

var errWithdrawn = errors.New("channel/mpi: receive withdrawn: the link was dropped")

// await waits for req to complete, testing it under the lock (which lets
// the other goroutines' MPI calls through between tests), spinning a
// while, then napping. It returns early with ctx's error (leaving the
// request to MPI), or, once stop says so, withdraws the request
// (MPI_Cancel) and waits for that. Between two tests it calls between,
// if not nil, and looks again at once if that did some work (delivered
// a frame).
func await(ctx context.Context, req request, stop, between func() bool) (status, error) {
	var w waiter
	canceled := false
	for {
		lockMPI()
		done, src, count, errc := test(req)
		mpiMu.Unlock()
		if done {
			if canceled {
				return status{}, errWithdrawn
			}
			return status{src, count}, mpiError("MPI_Test", errc)
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
		if between != nil && between() {
			w = waiter{}
			continue
		}
		w.pause()
	}
}
