// Package mpitest runs channel/replicate's properties over Open MPI: one
// process per native rank, under mpirun. It has tests only, and only
// with the build tag mpi:
//
//	go test -c -tags mpi -o replicate-mpi.test ./channel/replicate/mpitest
//	mpirun -np 6 ./replicate-mpi.test
//
// The number of processes must be a multiple of 2 and 3 (6, 12…): the
// tests run r = 2 and r = 3 over all of them.
package mpitest
