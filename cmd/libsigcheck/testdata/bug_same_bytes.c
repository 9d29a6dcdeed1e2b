// Bug: equal byte counts with different types. Rank 0 sends four doubles
// (32 bytes) with tag 11, rank 1 receives eight ints (32 bytes). MPI moves
// the bytes and says nothing. One report: the MPI_Recv on rank 1, from
// rank 0, tag 11, element 0. Correct messages go before and after it.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	double d[4];
	int a[8];
	if (rank == 0) {
		fill_int(a, 8, 1);
		MPI_Send(a, 8, MPI_INT, 1, 10, MPI_COMM_WORLD);
		fill_double(d, 4, 2);
		MPI_Send(d, 4, MPI_DOUBLE, 1, 11, MPI_COMM_WORLD);
		MPI_Send(d, 4, MPI_DOUBLE, 1, 12, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv(a, 8, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(a, sizeof a);
		MPI_Recv(a, 8, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(a, sizeof a);
		MPI_Recv(d, 4, MPI_DOUBLE, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(d, sizeof d);
	}
	return end("bug_same_bytes");
}
