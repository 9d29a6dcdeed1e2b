#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double a[100]; MPI_Request r; MPI_Status st;
	for (int it = 0; it < 100; it++) {
		if (rank == 0) { for (int i = 0; i < 100; i++) a[i] = i; MPI_Send(a, 100, MPI_DOUBLE, 1, it, MPI_COMM_WORLD); MPI_Recv(a, 100, MPI_DOUBLE, 1, it, MPI_COMM_WORLD, &st);}
		else { MPI_Irecv(a, 200, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r); MPI_Wait(&r, &st); MPI_Send(a, 100, MPI_DOUBLE, 0, it, MPI_COMM_WORLD); }
	}
	double s = rank, t;
	MPI_Allreduce(&s, &t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Bcast(a, 100, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (rank == 0) printf("ok %g %g\n", t, a[99]);
	MPI_Finalize();
	return 0;
}
