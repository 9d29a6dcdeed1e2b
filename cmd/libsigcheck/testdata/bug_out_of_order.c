// Bug: the small one of two messages that complete out of order. Rank 0
// sends a large message (4 MiB of doubles) and then a small one, both with
// tag 5, as non-blocking sends; rank 1 receives both with MPI_Irecv and
// waits for the small one first. In the first round both are right; in
// the second the small one is two ints and a float, received as three
// ints. One report: from rank 0, tag 5, element 2 (had the library paired
// the headers with the wrong messages, the element would be 0).
#include "suite.h"

#define BIG (4 << 20) / 8

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	double *big = malloc(BIG * sizeof *big);
	int small[3];
	MPI_Datatype bad = blocks(2, MPI_INT, 1, MPI_FLOAT);
	for (int round = 0; round < 2; round++) {
		MPI_Request rs[2];
		if (rank == 0) {
			fill_double(big, BIG, round);
			fill_int(small, 3, round);
			MPI_Isend(big, BIG, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, &rs[0]);
			if (round == 0) MPI_Isend(small, 3, MPI_INT, 1, 5, MPI_COMM_WORLD, &rs[1]);
			else MPI_Isend(small, 1, bad, 1, 5, MPI_COMM_WORLD, &rs[1]);
			MPI_Waitall(2, rs, MPI_STATUSES_IGNORE);
		} else if (rank == 1) {
			MPI_Irecv(big, BIG, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &rs[0]);
			MPI_Irecv(small, 3, MPI_INT, 0, 5, MPI_COMM_WORLD, &rs[1]);
			MPI_Wait(&rs[1], MPI_STATUS_IGNORE);
			MPI_Wait(&rs[0], MPI_STATUS_IGNORE);
			got(small, sizeof small);
			got(big, BIG * sizeof *big);
		}
	}
	MPI_Type_free(&bad);
	free(big);
	return end("bug_out_of_order");
}
