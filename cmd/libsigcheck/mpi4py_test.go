package main

// The mpi4py cases: the library preloaded into Python programs
// (which initialise MPI with MPI_THREAD_MULTIPLE, so the library's
// multi-threaded paths run). The int/float program is reported; a correct
// program using the same calls, and more of mpi4py's, reports nothing.

import "testing"

func TestMPI4PyIntFloat(t *testing.T) {
	t.Parallel()
	runBug(t, bugCase{"mpi4py_int_float.py", 2, []want{p2p(1, "MPI_Recv", 0, 7, 0)}})
}

func TestMPI4PyCorrect(t *testing.T) {
	t.Parallel()
	// mpi4py's pickled calls make MPI calls of its own choosing (matched
	// probes, several broadcasts per bcast), so the counts are a floor:
	// the six messages to rank 1 and the one back, a Sendrecv on each
	// rank, and five collectives on each.
	runOK(t, okCase{"mpi4py_ok.py", 2, 8, 10}, false)
}
