// Correct, for checksum mode with SIGCHECK_INJECT: 200 messages from rank
// 0 to rank 1 of contiguous doubles, of a strided vector (whose flipped
// bit the library must put back where the application reads it) and of
// a struct, by MPI_Send and by MPI_Isend/MPI_Irecv pairs completed out of
// order. Then rank 1 sends back what it received, unchanged, so that a
// flipped bit travels on in a message that is itself whole.
#include "suite.h"

typedef struct { int id; float w; double x; } item;

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	double d[64], e[64];
	item its[4];
	MPI_Datatype col, itemt;
	MPI_Type_vector(8, 1, 4, MPI_DOUBLE, &col);
	col = commit(col);
	MPI_Aint disps[3] = {offsetof(item, id), offsetof(item, w), offsetof(item, x)};
	MPI_Datatype types[3] = {MPI_INT, MPI_FLOAT, MPI_DOUBLE};
	itemt = struct_of(3, disps, types);
	for (int it = 0; it < 40; it++) {
		if (rank == 0) {
			MPI_Request rs[2];
			fill_double(d, 64, it);
			for (int i = 0; i < 4; i++) { its[i].id = it + i; its[i].w = 0.5f * i; its[i].x = it * 0.25; }
			MPI_Send(d, 16, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
			MPI_Send(d, 2, col, 1, 2, MPI_COMM_WORLD);
			MPI_Isend(d, 32, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, &rs[0]);
			MPI_Isend(its, 4, itemt, 1, 3, MPI_COMM_WORLD, &rs[1]);
			MPI_Waitall(2, rs, MPI_STATUSES_IGNORE);
			MPI_Recv(e, 64, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Request rs[2];
			memset(e, 0, sizeof e);
			MPI_Recv(e, 16, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Recv(e, 2, col, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Irecv(d, 32, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &rs[0]);
			MPI_Irecv(its, 4, itemt, 0, 3, MPI_COMM_WORLD, &rs[1]);
			MPI_Wait(&rs[1], MPI_STATUS_IGNORE);
			MPI_Wait(&rs[0], MPI_STATUS_IGNORE);
			got(e, sizeof e);
			got(its, sizeof its);
			MPI_Send(e, 64, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
		}
	}
	MPI_Type_free(&col);
	MPI_Type_free(&itemt);
	return end("ok_inject");
}
