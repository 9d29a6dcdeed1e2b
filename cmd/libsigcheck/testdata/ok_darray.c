/* A datatype the library cannot decode (MPI_Type_create_darray): its
 * messages pass through unchecked, and are counted, never crashed on. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
	int gsizes[1] = {8}, distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {2};
	MPI_Datatype d;
	MPI_Type_create_darray(2, 0, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &d);
	MPI_Type_commit(&d);
	int a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[4] = {0};
	if (rank == 0) MPI_Send(a, 1, d, 1, 0, MPI_COMM_WORLD);
	else if (rank == 1) {
		MPI_Recv(b, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		printf("%d %d %d %d\n", b[0], b[1], b[2], b[3]);
	}
	MPI_Type_free(&d);
	MPI_Finalize();
	return 0;
}
