//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#cgo nocallback sc_test
#cgo nocallback sc_isend_go
#cgo nocallback sc_isend
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// out is where the C calls of a message's path report what they found,
// and take the header of the frame to send (sc_out): one for the
// process, read and written only under mpiMu. outH is its address as
// those calls take it.
var (
	out  = (*C.sc_out)(C.calloc(1, C.sizeof_sc_out))
	outH = handle(unsafe.Pointer(out))
)

// handle is C memory as the calls of a message's path take it (shim.h).
func handle(p unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(p)) }

// outHeader is out's header, for a frame's header to be written into.
func outHeader() []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&out.hdr[0])), len(out.hdr)) }

// test tests req (MPI_Test) and reports whether it is done, and then its
// message's source, length and error. Under mpiMu.
func test(req request) (done bool, src, count int, errc C.int) {
	out.done = 0
	C.sc_test(handle(unsafe.Pointer(req)), outH)
	return out.done != 0, int(out.src), int(out.count), out.err
}

// request is an MPI request handle in C memory, where MPI may write it
// after the call that started it has returned.
type request = *C.MPI_Request

func newRequests(n int) request {
	r := (*C.MPI_Request)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(C.MPI_Request(nil)))))
	for i := range n {
		*reqAt(r, i) = C.sc_null_request()
	}
	return r
}

func freeRequests(r request) { C.free(unsafe.Pointer(r)) }

func reqAt(r request, i int) request {
	return (*C.MPI_Request)(unsafe.Add(unsafe.Pointer(r), uintptr(i)*unsafe.Sizeof(C.MPI_Request(nil))))
}

func isNull(r request) bool { return *r == C.sc_null_request() }

// mpiError turns an MPI error code into an *Error for op.
func mpiError(op string, code C.int) error {
	if code == C.MPI_SUCCESS {
		return nil
	}
	buf := (*C.char)(C.malloc(C.size_t(C.sc_max_error_string() + 1)))
	defer C.free(unsafe.Pointer(buf))
	C.sc_error_string(code, buf)
	return &Error{Op: op, Code: int(code), Msg: C.GoString(buf)}
}

func cbytes(p unsafe.Pointer, n int) []byte { return unsafe.Slice((*byte)(p), n) }

func cmalloc(n int) unsafe.Pointer {
	p := C.malloc(C.size_t(max(n, 1)))
	if p == nil {
		panic(fmt.Sprintf("channel/mpi: out of C memory (%d bytes)", n))
	}
	return p
}

func cfree(p unsafe.Pointer) { C.free(p) }
