// Bugs on communicators the program made: ranks and tags are the
// communicator's. On a duplicate of MPI_COMM_WORLD, rank 0 sends rank 2
// an int and three floats with tag 7, received as four ints (element 1);
// on the odd half of MPI_Comm_split with reversed keys (world 3 is its
// rank 0, world 1 its rank 1), world 3 sends world 1 two ints and two
// floats with tag 7, received as ints (element 2). The same tag carries
// right messages on MPI_COMM_WORLD meanwhile. Two reports: rank 2 of the
// duplicate from rank 0; rank 1 of the split from rank 0.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 4);
	MPI_Comm dup, split;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_name(dup, "bug_comm dup");
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);
	int a[4], b[4] = {0};
	MPI_Datatype t1 = blocks(1, MPI_INT, 3, MPI_FLOAT), t2 = blocks(2, MPI_INT, 2, MPI_FLOAT);
	fill_int(a, 4, rank);
	if (rank == 0) {
		MPI_Send(a, 1, t1, 2, 7, dup);
		MPI_Send(a, 4, MPI_INT, 2, 7, MPI_COMM_WORLD);
	} else if (rank == 2) {
		MPI_Recv(b, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(b, sizeof b);
		MPI_Recv(b, 4, MPI_INT, 0, 7, dup, MPI_STATUS_IGNORE);
		got(b, sizeof b);
	} else if (rank == 3) {
		MPI_Send(a, 4, MPI_INT, 1, 7, MPI_COMM_WORLD);
		MPI_Send(a, 1, t2, 1, 7, split); // to split rank 1, world 1
	} else if (rank == 1) {
		MPI_Recv(b, 4, MPI_INT, 0, 7, split, MPI_STATUS_IGNORE); // from split rank 0, world 3
		got(b, sizeof b);
		MPI_Recv(b, 4, MPI_INT, 3, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(b, sizeof b);
	}
	MPI_Type_free(&t1);
	MPI_Type_free(&t2);
	MPI_Comm_free(&dup);
	MPI_Comm_free(&split);
	return end("bug_comm");
}
