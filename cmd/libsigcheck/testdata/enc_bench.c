// MPI_Allgather latency by size, as OSU's osu_allgather measures it (the
// mean time of a call on each rank, averaged over the ranks), twice over:
// PMPI_Allgather, which this program calls itself and libsigcheck does
// not wrap (unencrypted MPI), and MPI_Allgather, which under
// SIGCHECK_ENCRYPT=1 is the encrypted all-gather. The two take turns in
// blocks of calls, REPS blocks each per size, so that a machine whose
// load changes slows both alike; each size prints "size plain enc", the
// medians of the blocks in microseconds. scripts/libsigcheck-encrypt-bench.sh
// runs it.
//
// The all-gathers run on a communicator made by MPI_Comm_idup, which
// libsigcheck gives no shadow: their datatypes go unchecked, so the
// figures are the encryption's alone. With the argument "world" they run
// on MPI_COMM_WORLD, where the library also checks every call's types.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 7

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

// block times iters calls and returns the mean over ranks of each rank's
// mean, in microseconds, at rank 0.
static double block(int enc, const char *s, char *r, int size, int iters, MPI_Comm c) {
	int p;
	MPI_Comm_size(c, &p);
	PMPI_Barrier(c);
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (enc) MPI_Allgather(s, size, MPI_BYTE, r, size, MPI_BYTE, c);
		else PMPI_Allgather(s, size, MPI_BYTE, r, size, MPI_BYTE, c);
	}
	double us = (MPI_Wtime() - t0) / iters * 1e6, sum = 0;
	PMPI_Reduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, c);
	return sum / p;
}

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
	if (max < 1 || max > 1 << 26) max = 1 << 20;
	char *s = malloc((size_t)max), *r = malloc((size_t)max * (size_t)p);
	memset(s, rank + 1, (size_t)max);
	memset(r, 0, (size_t)max * (size_t)p);
	for (long size = 1; size <= max; size *= 2) {
		int iters = size <= 4096 ? 200 : size <= 65536 ? 40 : 8;
		for (int i = 0; i < iters / 4 + 2; i++) {
			PMPI_Allgather(s, (int)size, MPI_BYTE, r, (int)size, MPI_BYTE, c);
			MPI_Allgather(s, (int)size, MPI_BYTE, r, (int)size, MPI_BYTE, c);
		}
		double t[2][REPS];
		for (int k = 0; k < REPS; k++) {
			int first = k % 2; // which goes first alternates too
			t[first][k] = block(first, s, r, (int)size, iters, c);
			t[!first][k] = block(!first, s, r, (int)size, iters, c);
		}
		for (int j = 0; j < p; j++)
			if (r[(size_t)j * (size_t)size] != (char)(j + 1)) {
				fprintf(stderr, "rank %d: wrong data from rank %d at %ld bytes\n", rank, j, size);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		qsort(t[0], REPS, sizeof(double), cmp);
		qsort(t[1], REPS, sizeof(double), cmp);
		if (rank == 0) printf("%ld %.2f %.2f\n", size, t[0][REPS / 2], t[1][REPS / 2]);
	}
	free(s);
	free(r);
	MPI_Finalize();
	return 0;
}
