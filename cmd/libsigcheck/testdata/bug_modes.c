// Bugs: mismatched messages sent in the other send modes, each received by
// MPI_Recv as four ints: MPI_Ssend of an int and three floats (tag 1,
// element 1), MPI_Rsend to a preposted MPI_Irecv of two ints and two
// floats (tag 2, element 2), MPI_Bsend with a buffer attached of three
// ints and a float (tag 3, element 3). Three reports, on rank 1.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	int a[4], b[4];
	MPI_Datatype t[4];
	for (int k = 1; k <= 3; k++) t[k] = blocks(k, MPI_INT, 4 - k, MPI_FLOAT);
	if (rank == 0) {
		fill_int(a, 4, 0);
		MPI_Ssend(a, 1, t[1], 1, 1, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Rsend(a, 1, t[2], 1, 2, MPI_COMM_WORLD);
		int sz;
		MPI_Pack_size(1, t[3], MPI_COMM_WORLD, &sz);
		sz += MPI_BSEND_OVERHEAD;
		char *buf = malloc(sz);
		MPI_Buffer_attach(buf, sz);
		MPI_Bsend(a, 1, t[3], 1, 3, MPI_COMM_WORLD);
		MPI_Buffer_detach(&buf, &sz);
		free(buf);
	} else if (rank == 1) {
		MPI_Recv(b, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(b, sizeof b);
		MPI_Request r;
		MPI_Irecv(b, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, &r);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		got(b, sizeof b);
		MPI_Recv(b, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(b, sizeof b);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
	}
	for (int k = 1; k <= 3; k++) MPI_Type_free(&t[k]);
	return end("bug_modes");
}
