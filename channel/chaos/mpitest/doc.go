// Package mpitest runs the fault campaign of channel/chaos over Open MPI:
// one process per rank, under mpirun, every process drawing the same
// schedules (chaos.DrawMPI) for a job of its size and running its own
// rank of each (chaos.RunProcess); the faults are made by a wrapper of
// each rank's transport, and the reports meet on a communicator the
// faults do not touch. It has tests only, and only with the build tag
// mpi:
//
//	go test -c -tags mpi -o chaos-mpi.test ./channel/chaos/mpitest
//	mpirun -np 3 ./chaos-mpi.test -chaos.n 300
//
// CI runs it briefly on 2, 3 and 4 processes; a long run is
// -chaos.n 100000 -chaos.budget 0 -test.timeout 0. Rank 0 reports each
// bad schedule with its seed (-chaos.seed replays it, on the same number
// of processes); a hang is reported by the rank that hung, with its
// channel goroutines' stacks, and ends the job.
package mpitest
