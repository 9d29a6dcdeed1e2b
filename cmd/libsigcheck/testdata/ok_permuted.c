/* Datatypes whose size equals their extent but whose bytes, in type map
 * order, are not the buffer's: members listed out of order, a reversed
 * indexed_block, overlapping blocks resized. Sent and received both ways. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int bl[2] = {1, 1}; MPI_Aint d[2] = {4, 0}; MPI_Datatype ty[2] = {MPI_INT, MPI_INT}, swap, rev, over, over1;
	MPI_Type_create_struct(2, bl, d, ty, &swap);
	int disp[4] = {3, 2, 1, 0};
	MPI_Type_create_indexed_block(4, 1, disp, MPI_INT, &rev);
	int od[2] = {0, 0};
	MPI_Type_create_indexed_block(2, 1, od, MPI_INT, &over1);
	MPI_Type_create_resized(over1, 0, 8, &over);
	MPI_Type_commit(&swap); MPI_Type_commit(&rev); MPI_Type_commit(&over);
	int a[8] = {10, 20, 30, 40, 50, 60, 70, 80}, b[8] = {0};
	long sum = 0;
	for (int it = 0; it < 20; it++) {
		if (rank == 0) {
			MPI_Send(a, 1, swap, 1, 0, MPI_COMM_WORLD);
			MPI_Send(a, 2, rev, 1, 1, MPI_COMM_WORLD);
			MPI_Send(a, 2, over, 1, 2, MPI_COMM_WORLD);
			MPI_Send(a, 4, MPI_INT, 1, 3, MPI_COMM_WORLD);
		} else if (rank == 1) {
			MPI_Recv(b, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			sum = sum * 7 + b[0] * 3 + b[1];
			MPI_Recv(b, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (int i = 0; i < 8; i++) sum = sum * 3 + b[i];
			MPI_Recv(b, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (int i = 0; i < 4; i++) sum = sum * 5 + b[i];
			MPI_Recv(b, 1, rev, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			for (int i = 0; i < 4; i++) sum = sum * 11 + b[i];
			sum %= 1000000007;
		}
	}
	if (rank == 1) printf("%ld %d %d %d %d\n", sum, b[0], b[1], b[2], b[3]);
	MPI_Type_free(&swap); MPI_Type_free(&rev); MPI_Type_free(&over); MPI_Type_free(&over1);
	MPI_Finalize();
	return 0;
}
