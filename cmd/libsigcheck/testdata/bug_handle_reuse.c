// Bug after a datatype handle is reused: both ranks make a struct of an
// int and a double, use it rightly (tag 1) and free it; then rank 0 makes
// three floats and rank 1 two floats and an int, which MPI may give the
// freed handle, and rank 0 sends with tag 2. One report: from rank 0,
// tag 2, element 2 (a library that kept the freed handle's datatype would
// see an int and a double on both sides).
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	char buf[64];
	MPI_Aint disps[2] = {0, 8};
	MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
	MPI_Datatype t = struct_of(2, disps, types);
	for (int i = 0; i < (int)sizeof buf; i++) buf[i] = (char)i;
	if (rank == 0) MPI_Send(buf, 2, t, 1, 1, MPI_COMM_WORLD);
	else if (rank == 1) { MPI_Recv(buf, 2, t, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); got(buf, sizeof buf); }
	MPI_Type_free(&t);
	if (rank == 0) {
		MPI_Type_contiguous(3, MPI_FLOAT, &t);
		t = commit(t);
		MPI_Send(buf, 1, t, 1, 2, MPI_COMM_WORLD);
	} else {
		t = blocks(2, MPI_FLOAT, 1, MPI_INT);
		if (rank == 1) { MPI_Recv(buf, 1, t, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); got(buf, sizeof buf); }
	}
	MPI_Type_free(&t);
	return end("bug_handle_reuse");
}
