//go:build mpi

package mpi

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// mpiMu is the MPI lock: every MPI call of this process is made with it
// held (MPI_THREAD_SERIALIZED: any thread may call MPI, one at a time).
// A goroutine that polls takes it again and again; a sync.Mutex lets the
// one that just let it go take it back before a parked sender wakes (for
// up to a millisecond, until the mutex turns fair), so the others
// announce themselves (lockMPI) and a poller waits for them
// (deferToWaiters).
var (
	mpiMu   sync.Mutex
	mpiWant atomic.Int32
)

// lockMPI takes the MPI lock ahead of the goroutines that poll.
func lockMPI() {
	mpiWant.Add(1)
	mpiMu.Lock()
	mpiWant.Add(-1)
}

// deferToWaiters lets a goroutine waiting in lockMPI have the lock
// first: a bounded wait, so that a waiter that is itself descheduled
// does not stall the poller.
func deferToWaiters() {
	for i := 0; i < 1<<12 && mpiWant.Load() > 0; i++ {
		if i&63 == 63 {
			runtime.Gosched()
		}
	}
}

// world is this process's MPI: initialized once, finalized once.
var world struct {
	mu        sync.Mutex
	inited    bool
	finalized bool
	rank      int
	size      int
	nodes     []int       // per world rank, its node (Node)
	main      chan func() // runs a function on the thread that called MPI_Init_thread
	live      sync.WaitGroup
	oversub   bool // more ranks on this node than cores: spinners yield the CPU
}

// initialize starts MPI in this process, once: MPI_Init_thread asking
// for MPI_THREAD_SERIALIZED, on a goroutine locked to its thread, which
// stays to call MPI_Finalize there (the MPI standard wants both on the
// same thread).
func initialize() error {
	world.mu.Lock()
	defer world.mu.Unlock()
	switch {
	case world.finalized:
		return ErrFinalized
	case world.inited:
		return nil
	}
	errc := make(chan error, 1)
	main := make(chan func())
	go func() {
		runtime.LockOSThread() // for good: this thread is MPI's main thread
		errc <- startMPI()
		for f := range main {
			f()
		}
	}()
	if err := <-errc; err != nil {
		return err
	}
	world.main = main
	world.inited = true
	local, err := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
	// The node's processors, not this process's: mpirun binds each rank to
	// a core of its own when there are enough (runtime.NumCPU is then 1).
	world.oversub = err == nil && local > int(C.sc_cores())
	return nil
}

func startMPI() error {
	lockMPI()
	defer mpiMu.Unlock()
	var provided, rank, size C.int
	rc := C.sc_init(&provided, &rank, &size)
	if rc == -1 {
		return &Error{Op: "MPI_Init_thread", Code: -1, Msg: "MPI was initialized by someone else in this process"}
	}
	if err := mpiError("MPI_Init_thread", rc); err != nil {
		return err
	}
	if provided < C.MPI_THREAD_SERIALIZED {
		C.sc_finalize()
		return ErrThreadLevel
	}
	leaders := make([]C.int, size)
	if err := mpiError("MPI_Comm_split_type", C.sc_leaders(&leaders[0])); err != nil {
		return err
	}
	world.rank, world.size = int(rank), int(size)
	world.nodes = make([]int, size)
	index := map[C.int]int{}
	for r, l := range leaders {
		n, ok := index[l]
		if !ok {
			n = len(index)
			index[l] = n
		}
		world.nodes[r] = n
	}
	return nil
}

// Finalize ends MPI in this process (MPI_Finalize) once every endpoint
// has been closed and every peer has closed its own (Finalize waits for
// that: MPI_Finalize is collective in Open MPI). Call it once, at the
// end: MPI cannot start again in the same process.
func Finalize() error {
	world.mu.Lock()
	defer world.mu.Unlock()
	if !world.inited || world.finalized {
		return nil
	}
	world.live.Wait()
	world.finalized = true
	errc := make(chan error, 1)
	world.main <- func() {
		mpiMu.Lock()
		defer mpiMu.Unlock()
		errc <- mpiError("MPI_Finalize", C.sc_finalize())
	}
	close(world.main)
	return <-errc
}

// Node returns the shared-memory node of world rank r: ranks with the
// same Node share memory (MPI_Comm_split_type with
// MPI_COMM_TYPE_SHARED). Nodes are numbered from 0 in the order of their
// lowest rank. It returns -1 before the first Connect, and for a rank
// out of range.
func Node(r int) int {
	world.mu.Lock()
	defer world.mu.Unlock()
	if !world.inited || r < 0 || r >= len(world.nodes) {
		return -1
	}
	return world.nodes[r]
}

// dup returns a communicator of its own over MPI_COMM_WORLD
// (MPI_Comm_idup, tested under the lock so that other MPI traffic of
// this process goes on meanwhile). Every rank must call it, in the same
// order.
func dup(ctx context.Context) (C.MPI_Comm, error) {
	// MPI writes the handle when the request completes: both live in C
	// memory until then.
	req := newRequests(1)
	cell := (*C.MPI_Comm)(cmalloc(int(unsafe.Sizeof(C.MPI_Comm(nil)))))
	lockMPI()
	rc := C.sc_idup(cell, req)
	mpiMu.Unlock()
	if err := mpiError("MPI_Comm_idup", rc); err != nil {
		freeRequests(req)
		cfree(unsafe.Pointer(cell))
		return nil, err
	}
	if _, err := await(ctx, req, nil, nil); err != nil {
		return nil, err // the request stays with MPI (it cannot be withdrawn): a communicator lost
	}
	comm := *cell
	cfree(unsafe.Pointer(cell))
	// No rank sends on the new communicator before every rank has it:
	// Open MPI queues messages for a communicator a rank has not made yet,
	// and a rank that closed at once lost its last words to the others
	// that way (4 ranks on 2 cores, about one run in two).
	lockMPI()
	C.sc_errors_return(comm)
	rc = C.sc_ibarrier(comm, req)
	mpiMu.Unlock()
	if err := mpiError("MPI_Ibarrier", rc); err != nil {
		freeRequests(req)
		return nil, err
	}
	if _, err := await(ctx, req, nil, nil); err != nil {
		return nil, err
	}
	freeRequests(req)
	return comm, nil
}
