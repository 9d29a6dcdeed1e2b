/* A non-blocking collective completed with Testany and Testsome loops,
 * one rank late: MPI_UNDEFINED would say the request is inactive before
 * it has completed. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int bad = 0;
	for (int it = 0; it < 3; it++) {
		int v = rank == 0 ? 42 + it : 0, idx = -1, flag = 0, out = 0, idxs[1];
		MPI_Request r;
		if (rank == 1) usleep(100000);
		MPI_Ibcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
		if (it % 2 == 0) {
			do MPI_Testany(1, &r, &idx, &flag, MPI_STATUS_IGNORE); while (!flag);
			if (idx != 0) bad++;
		} else {
			do MPI_Testsome(1, &r, &out, idxs, MPI_STATUSES_IGNORE); while (out == 0);
			if (out != 1) bad++;
		}
		if (r != MPI_REQUEST_NULL) { bad++; MPI_Wait(&r, MPI_STATUS_IGNORE); }
		if (v != 42 + it) bad++;
	}
	int all = 0;
	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) printf("bad %d\n", all);
	MPI_Finalize();
	return 0;
}
