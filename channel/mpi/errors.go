//go:build mpi

package mpi

import (
	"errors"
	"fmt"
)

var (
	// ErrMPI is what every error that Open MPI returned is (errors.Is):
	// an *Error says which call and why.
	ErrMPI = errors.New("channel/mpi: MPI error")
	// ErrFinalized: MPI was finalized in this process, and cannot start
	// again (the MPI standard allows one MPI_Init per process).
	ErrFinalized = errors.New("channel/mpi: MPI already finalized in this process")
	// ErrThreadLevel: this Open MPI cannot give MPI_THREAD_SERIALIZED,
	// which the transport needs (see the package doc).
	ErrThreadLevel = errors.New("channel/mpi: Open MPI does not provide MPI_THREAD_SERIALIZED")
	// ErrPeerClosed is the cause in the *channel.PeerError of a rank whose
	// endpoint was closed.
	ErrPeerClosed = errors.New("channel/mpi: the rank closed its endpoint")
)

// Error is an error returned by an MPI call: which one (Op), Open MPI's
// error code and its message (MPI_Error_string).
type Error struct {
	Op   string
	Code int
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("channel/mpi: %s: %s (MPI error %d)", e.Op, e.Msg, e.Code)
}

// Is makes every *Error an ErrMPI.
func (e *Error) Is(target error) bool { return target == ErrMPI }
