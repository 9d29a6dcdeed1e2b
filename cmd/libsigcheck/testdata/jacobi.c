// A Jacobi stencil, the application of the replication tests (and of
// RedMPI's §VII): the Laplace equation on an N×N grid, hot top edge, rows
// dealt out in blocks; every step each rank exchanges its edge rows with
// its neighbours (MPI_Isend, MPI_Irecv, MPI_Waitall, or MPI_Sendrecv with
// "sendrecv"), and every CHECK steps the residual is summed over the ranks
// (MPI_Allreduce). Rank 0 prints the final residual and a hash of the
// whole grid, exactly (%a and hex), so that two runs' answers compare bit
// for bit; with "time", also the seconds the steps took (MPI_Wtime, which
// under replication is replica 0's clock).
//
//	jacobi [N [STEPS [CHECK [isend|sendrecv [time]]]]]
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(const void *p, size_t n, uint64_t h) {
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int n = argc > 1 ? atoi(argv[1]) : 128, steps = argc > 2 ? atoi(argv[2]) : 200, check = argc > 3 ? atoi(argv[3]) : 20;
	int sendrecv = argc > 4 && strcmp(argv[4], "sendrecv") == 0, timing = argc > 5 && strcmp(argv[5], "time") == 0;
	if (n < size || n < 3 || steps < 1) {
		if (rank == 0) fprintf(stderr, "jacobi: want N ≥ ranks, N ≥ 3, STEPS ≥ 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int lo = rank * n / size, hi = (rank + 1) * n / size, rows = hi - lo;
	// rows + 2 rows: a ghost row above and below.
	double *u = calloc((size_t)(rows + 2) * n, sizeof *u), *v = calloc((size_t)(rows + 2) * n, sizeof *v);
	if (!u || !v) MPI_Abort(MPI_COMM_WORLD, 3);
	for (int i = 0; i < rows + 2; i++)
		for (int j = 0; j < n; j++)
			if (lo + i - 1 == 0) u[i * n + j] = v[i * n + j] = 1.0;
	int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	double residual = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int s = 1; s <= steps; s++) {
		if (sendrecv) {
			MPI_Sendrecv(&u[1 * n], n, MPI_DOUBLE, up, 1, &u[(rows + 1) * n], n, MPI_DOUBLE, down, 1, MPI_COMM_WORLD,
				MPI_STATUS_IGNORE);
			MPI_Sendrecv(&u[rows * n], n, MPI_DOUBLE, down, 2, &u[0], n, MPI_DOUBLE, up, 2, MPI_COMM_WORLD,
				MPI_STATUS_IGNORE);
		} else {
			MPI_Request rs[4];
			MPI_Irecv(&u[0], n, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &rs[0]);
			MPI_Irecv(&u[(rows + 1) * n], n, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &rs[1]);
			MPI_Isend(&u[1 * n], n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &rs[2]);
			MPI_Isend(&u[rows * n], n, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &rs[3]);
			MPI_Waitall(4, rs, MPI_STATUSES_IGNORE);
		}
		double local = 0;
		for (int i = 1; i <= rows; i++) {
			int g = lo + i - 1;
			for (int j = 0; j < n; j++) {
				if (g == 0 || g == n - 1 || j == 0 || j == n - 1) {
					v[i * n + j] = u[i * n + j];
					continue;
				}
				double x = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
				double d = x - u[i * n + j];
				local += d * d;
				v[i * n + j] = x;
			}
		}
		double *t = u;
		u = v;
		v = t;
		if (check > 0 && (s % check == 0 || s == steps)) MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	double t1 = MPI_Wtime();
	uint64_t h = fnv(&u[n], (size_t)rows * n * sizeof *u, 1469598103934665603ull);
	uint64_t *all = rank == 0 ? malloc(sizeof *all * (size_t)size) : NULL;
	MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		uint64_t g = fnv(all, sizeof *all * (size_t)size, 1469598103934665603ull);
		printf("jacobi %d×%d, %d steps on %d ranks: residual %a, grid %016llx\n", n, n, steps, size, residual,
			(unsigned long long)g);
		if (timing) printf("time %.6f s\n", t1 - t0);
	}
	free(all);
	free(u);
	free(v);
	MPI_Finalize();
	return 0;
}
