#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) { int a[10]; for (int i = 0; i < 10; i++) a[i] = i; MPI_Send(a, 10, MPI_INT, 1, 7, MPI_COMM_WORLD); }
	else if (rank == 1) { float f[10]; MPI_Recv(f, 10, MPI_FLOAT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); printf("%g %g %g\n", f[0], f[1], f[2]); }
	MPI_Finalize();
	return 0;
}
