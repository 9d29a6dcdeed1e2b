// Bugs: wildcard receives (MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_STATUS_IGNORE)
// of mismatched messages. Rank 0 receives one message from each of ranks
// 1 and 2 by MPI_Recv, then, after a barrier, one from each by two
// MPI_Irecv completed with MPI_Waitall, all as ints. Rank 2's first
// message (tag 102) is an int and a float: element 1; rank 1's second
// (tag 201) is three ints and a float: element 3. Two reports, on rank 0.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 3);
	int a[8];
	if (rank == 1 || rank == 2) {
		fill_int(a, 8, rank);
		MPI_Datatype first = rank == 2 ? blocks(1, MPI_INT, 1, MPI_FLOAT) : blocks(2, MPI_INT, 0, MPI_FLOAT);
		MPI_Send(a, 1, first, 0, 100 + rank, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD); // the first two are received before the second two are sent
		MPI_Datatype second = rank == 1 ? blocks(3, MPI_INT, 1, MPI_FLOAT) : blocks(4, MPI_INT, 0, MPI_FLOAT);
		MPI_Send(a, 1, second, 0, 200 + rank, MPI_COMM_WORLD);
		MPI_Type_free(&first);
		MPI_Type_free(&second);
	} else if (rank == 0) {
		int b[2][8];
		memset(b, 0, sizeof b);
		MPI_Recv(b[0], 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(b[1], 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(b[0], sizeof b[0]);
		got(b[1], sizeof b[1]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Request rs[2];
		memset(b, 0, sizeof b);
		MPI_Irecv(b[0], 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rs[0]);
		MPI_Irecv(b[1], 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rs[1]);
		MPI_Waitall(2, rs, MPI_STATUSES_IGNORE);
		got(b[0], sizeof b[0]);
		got(b[1], sizeof b[1]);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
	}
	return end("bug_wildcard");
}
