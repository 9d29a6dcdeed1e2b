//go:build mpi

package main

import (
	"context"
	"errors"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/mpi"
)

// openMPI joins the Open MPI job that mpirun started this process in
// (-transport mpi): MPI is initialized, and the endpoint is this rank's
// (rank and size are MPI_COMM_WORLD's; rank 0 prints). inj, if not nil,
// damages this rank's outgoing frames. done closes the endpoint and
// finalizes MPI: call it once, when the run is over, on every rank (MPI
// cannot start again in this process).
func openMPI(ctx context.Context, inj *channel.Injector) (ep *channel.Endpoint, done func() error, err error) {
	ep, err = mpi.Connect(ctx, channel.WithInjector(inj))
	if err != nil {
		return nil, nil, err
	}
	return ep, func() error { return errors.Join(ep.Close(), mpi.Finalize()) }, nil
}
