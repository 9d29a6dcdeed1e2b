// Package mpitest runs a test binary as one rank of an Open MPI job
// (Main). Its code needs the build tag mpi; without it the package is
// empty.
package mpitest
