// Correct: the blocking send modes, MPI_Send, MPI_Ssend, MPI_Rsend to a
// preposted receive and MPI_Bsend with a buffer attached, each received
// by MPI_Recv with a count longer than the message.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	int a[64], b[64];
	double d[32];
	MPI_Status st;
	if (rank == 0) {
		for (int it = 0; it < 5; it++) {
			fill_int(a, 10 + it, it);
			MPI_Send(a, 10 + it, MPI_INT, 1, it, MPI_COMM_WORLD);
		}
		fill_double(d, 16, 1);
		MPI_Ssend(d, 16, MPI_DOUBLE, 1, 10, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD); // rank 1 has posted the receive for MPI_Rsend
		fill_int(a, 8, 2);
		MPI_Rsend(a, 8, MPI_INT, 1, 11, MPI_COMM_WORLD);
		int sz;
		MPI_Pack_size(32, MPI_INT, MPI_COMM_WORLD, &sz);
		sz = 2 * (sz + MPI_BSEND_OVERHEAD);
		char *buf = malloc(sz);
		MPI_Buffer_attach(buf, sz);
		fill_int(a, 32, 3);
		MPI_Bsend(a, 32, MPI_INT, 1, 12, MPI_COMM_WORLD);
		fill_int(a, 32, 4); // Bsend copied the first: the buffer is ours again
		MPI_Bsend(a, 20, MPI_INT, 1, 12, MPI_COMM_WORLD);
		MPI_Buffer_detach(&buf, &sz);
		free(buf);
		memset(d, 0, sizeof d);
		MPI_Recv(d, 32, MPI_DOUBLE, 1, 13, MPI_COMM_WORLD, &st);
		got(d, sizeof d);
		gotv(count_of(&st, MPI_DOUBLE));
	} else if (rank == 1) {
		for (int it = 0; it < 5; it++) {
			memset(b, 0, sizeof b);
			MPI_Recv(b, 64, MPI_INT, 0, it, MPI_COMM_WORLD, &st);
			got(b, sizeof b);
			gotv(count_of(&st, MPI_INT));
		}
		MPI_Recv(d, 32, MPI_DOUBLE, 0, 10, MPI_COMM_WORLD, &st);
		got(d, 16 * sizeof *d);
		MPI_Request r;
		MPI_Irecv(b, 16, MPI_INT, 0, 11, MPI_COMM_WORLD, &r);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&r, &st);
		got(b, 8 * sizeof *b);
		for (int i = 0; i < 2; i++) {
			memset(b, 0, sizeof b);
			MPI_Recv(b, 40, MPI_INT, 0, 12, MPI_COMM_WORLD, &st);
			got(b, sizeof b);
			gotv(count_of(&st, MPI_INT));
		}
		fill_double(d, 10, 5);
		MPI_Ssend(d, 10, MPI_DOUBLE, 0, 13, MPI_COMM_WORLD);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
	}
	return end("ok_blocking");
}
