// Bug: a persistent receive that gets one mismatched message. Rank 1
// receives eight ints with one MPI_Recv_init request, started five times;
// rank 0 sends four ints with its MPI_Send_init request, except on the
// fourth round, when it starts another persistent send of two ints and a
// float. One report: from rank 0, tag 5, element 2.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	int a[8], b[8];
	MPI_Request r, bad;
	if (rank == 0) {
		MPI_Datatype t = blocks(2, MPI_INT, 1, MPI_FLOAT);
		MPI_Send_init(a, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
		MPI_Send_init(a, 1, t, 1, 5, MPI_COMM_WORLD, &bad);
		for (int it = 0; it < 5; it++) {
			fill_int(a, 8, it);
			MPI_Request *q = it == 3 ? &bad : &r;
			if (it % 2) MPI_Start(q);
			else MPI_Startall(1, q);
			MPI_Wait(q, MPI_STATUS_IGNORE);
		}
		MPI_Request_free(&r);
		MPI_Request_free(&bad);
		MPI_Type_free(&t);
	} else if (rank == 1) {
		MPI_Recv_init(b, 8, MPI_INT, 0, 5, MPI_COMM_WORLD, &r);
		for (int it = 0; it < 5; it++) {
			memset(b, 0, sizeof b);
			MPI_Start(&r);
			if (it % 2) MPI_Wait(&r, MPI_STATUS_IGNORE);
			else { int flag = 0; while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE); }
			got(b, sizeof b);
		}
		MPI_Request_free(&r);
	}
	return end("bug_persistent");
}
