// Correct: a datatype freed while a non-blocking send or receive that uses
// it is still pending (MPI 4.1 §5.1.10: the communication completes
// normally), and a new datatype made meanwhile, which may get the freed
// handle.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	char buf[256];
	for (int it = 0; it < 6; it++) {
		MPI_Datatype t;
		MPI_Aint disps[2] = {0, 8};
		MPI_Datatype types[2] = {it % 2 ? MPI_DOUBLE : MPI_INT, it % 2 ? MPI_INT : MPI_DOUBLE};
		t = struct_of(2, disps, types);
		MPI_Request r;
		if (rank == 0) {
			for (int i = 0; i < (int)sizeof buf; i++) buf[i] = (char)(3 * i + it);
			MPI_Isend(buf, 3, t, 1, it, MPI_COMM_WORLD, &r);
		} else if (rank == 1) {
			memset(buf, 0, sizeof buf);
			MPI_Irecv(buf, 4, t, 0, it, MPI_COMM_WORLD, &r);
		}
		MPI_Type_free(&t);
		MPI_Datatype u; // another shape, perhaps at the same handle
		MPI_Type_contiguous(3, MPI_FLOAT, &u);
		u = commit(u);
		if (rank <= 1) {
			MPI_Status st;
			MPI_Wait(&r, &st);
			if (rank == 1) { got(buf, sizeof buf); gotv(count_of(&st, MPI_BYTE)); }
		}
		float f[6];
		if (rank == 0) { fill_float(f, 6, it); MPI_Send(f, 2, u, 1, 100 + it, MPI_COMM_WORLD); }
		else if (rank == 1) { memset(f, 0, sizeof f); MPI_Recv(f, 6, MPI_FLOAT, 0, 100 + it, MPI_COMM_WORLD, MPI_STATUS_IGNORE); got(f, sizeof f); }
		MPI_Type_free(&u);
	}
	return end("ok_type_free_pending");
}
