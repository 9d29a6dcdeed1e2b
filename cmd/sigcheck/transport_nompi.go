//go:build !mpi

package main

import (
	"context"
	"errors"

	"github.com/sigcheck/sigcheck/channel"
)

// errNoMPI is what -transport mpi gets from a build without Open MPI.
var errNoMPI = errors.New("-transport mpi: this sigcheck was built without Open MPI; build it with: go build -tags mpi ./cmd/sigcheck (needs cgo and Open MPI's headers: apt-get install libopenmpi-dev openmpi-bin), then run it under mpirun")

// openMPI, in a build without the mpi tag, says how to get one that has
// it (transport_mpi.go is the real one).
func openMPI(ctx context.Context, inj *channel.Injector) (*channel.Endpoint, func() error, error) {
	return nil, nil, errNoMPI
}
