/* Repair of non-contiguous data: a vector of doubles with gaps, sent and
 * received into a larger receive (a struct type whose last instance is
 * only partly filled), many times, with a checksum of what arrived. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Datatype vec, pair;
	MPI_Type_vector(50, 3, 5, MPI_DOUBLE, &vec); /* 150 doubles over 250 */
	MPI_Type_commit(&vec);
	int bl[2] = {1, 1}; MPI_Aint dp[2] = {0, 16}; MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_DOUBLE};
	MPI_Type_create_struct(2, bl, dp, ts, &pair); /* two doubles with a gap */
	MPI_Type_commit(&pair);
	double a[250], b[400];
	double total = 0;
	for (int it = 0; it < 200; it++) {
		if (rank == 0) {
			for (int i = 0; i < 250; i++) a[i] = it * 1000 + i;
			MPI_Send(a, 1, vec, 1, it, MPI_COMM_WORLD);
		} else {
			memset(b, 0, sizeof b);
			MPI_Recv(b, 80, pair, 0, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* 150 of 160 doubles */
			for (int i = 0; i < 400; i++) total += b[i] * (i + 1);
		}
	}
	if (rank == 1) printf("total %.1f\n", total);
	MPI_Type_free(&vec);
	MPI_Type_free(&pair);
	MPI_Finalize();
	return 0;
}
