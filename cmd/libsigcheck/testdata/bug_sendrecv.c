// Bugs: MPI_Sendrecv and MPI_Sendrecv_replace receiving mismatched
// messages. Rank 1 sends rank 0 two ints and two floats, which rank 0's
// MPI_Sendrecv receives as ints (tag 1, element 2); then three ints and a
// float, which rank 0's MPI_Sendrecv_replace receives as ints (tag 2,
// element 3). What rank 1 receives is right. Two reports, on rank 0.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	int a[8], b[8];
	if (rank == 0) {
		fill_int(a, 8, 0);
		memset(b, 0, sizeof b);
		MPI_Sendrecv(a, 4, MPI_INT, 1, 1, b, 8, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(b, sizeof b);
		fill_int(a, 8, 2);
		MPI_Sendrecv_replace(a, 4, MPI_INT, 1, 2, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(a, sizeof a);
	} else if (rank == 1) {
		MPI_Datatype t1 = blocks(2, MPI_INT, 2, MPI_FLOAT), t2 = blocks(3, MPI_INT, 1, MPI_FLOAT);
		fill_int(a, 8, 1);
		MPI_Sendrecv(a, 1, t1, 0, 1, b, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(b, sizeof b);
		MPI_Sendrecv(a, 1, t2, 0, 2, b, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(b, sizeof b);
		MPI_Type_free(&t1);
		MPI_Type_free(&t2);
	}
	return end("bug_sendrecv");
}
