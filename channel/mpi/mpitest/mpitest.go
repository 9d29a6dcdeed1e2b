//go:build mpi

// Package mpitest runs a test binary as one rank of an Open MPI job, for
// the packages whose tests mpirun starts (one process per rank): their
// TestMain is
//
//	func TestMain(m *testing.M) {
//		mpitest.Main(m, "go test -c -tags mpi -o x.test ./pkg && mpirun -np 2 ./x.test")
//	}
//
// It needs the build tag mpi, as channel/mpi does.
package mpitest

import (
	"fmt"
	"os"
	"testing"

	"github.com/sigcheck/sigcheck/channel/mpi"
)

// Main runs the tests when the process is a rank of a job that mpirun
// started, and finalizes MPI after them (a failure to is a failure of the
// run). Outside mpirun it prints that the tests were skipped and how to
// run them (how), and exits 0, so that go test ./... with the tag still
// passes on a machine without a job.
func Main(m *testing.M, how string) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") == "" {
		fmt.Println("skipped, not under mpirun: " + how)
		os.Exit(0)
	}
	code := m.Run()
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
