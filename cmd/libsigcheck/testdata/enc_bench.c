// MPI_Allgather latency by size, as OSU's osu_allgather measures it: for
// each size from 1 byte to MAX (1 MiB), some warm-up calls, then the
// mean time of a call on each rank, averaged over the ranks. Prints
// "size microseconds" lines. scripts/libsigcheck-encrypt-bench.sh runs
// it with and without SIGCHECK_ENCRYPT=1.
//
// The all-gathers run on a communicator made by MPI_Comm_idup, which
// libsigcheck gives no shadow: their datatypes go unchecked, so the
// figures are the encryption's alone. With the argument "world" they run
// on MPI_COMM_WORLD, where the library also checks every call's types.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, p;
	MPI_Comm c = MPI_COMM_WORLD;
	if (argc < 2 || strcmp(argv[1], "world") != 0) {
		MPI_Request r;
		MPI_Comm_idup(MPI_COMM_WORLD, &c, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	}
	MPI_Comm_rank(c, &rank);
	MPI_Comm_size(c, &p);
	long max = 1 << 20;
	if (argc > 2) max = atol(argv[2]);
	char *s = malloc((size_t)max), *r = malloc((size_t)max * (size_t)p);
	memset(s, rank + 1, (size_t)max);
	memset(r, 0, (size_t)max * (size_t)p);
	for (long size = 1; size <= max; size *= 2) {
		int iters = size <= 4096 ? 500 : size <= 65536 ? 100 : 20;
		for (int i = 0; i < iters / 10 + 2; i++) MPI_Allgather(s, (int)size, MPI_BYTE, r, (int)size, MPI_BYTE, c);
		MPI_Barrier(c);
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++) MPI_Allgather(s, (int)size, MPI_BYTE, r, (int)size, MPI_BYTE, c);
		double us = (MPI_Wtime() - t0) / iters * 1e6, sum = 0;
		MPI_Reduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, c);
		for (int j = 0; j < p; j++)
			if (r[(size_t)j * (size_t)size] != (char)(j + 1)) {
				fprintf(stderr, "rank %d: wrong data from rank %d at %ld bytes\n", rank, j, size);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		if (rank == 0) printf("%ld %.2f\n", size, sum / p);
	}
	free(s);
	free(r);
	MPI_Finalize();
	return 0;
}
