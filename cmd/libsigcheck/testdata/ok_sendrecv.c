// Correct: MPI_Sendrecv around a ring, sending a strided column and
// receiving it as contiguous doubles, with a wildcard source too; and
// MPI_Sendrecv_replace of a struct datatype.
#include "suite.h"

typedef struct { int id; float w; double x; } item;

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
	double m[8][4], col[16];
	MPI_Datatype column, itemt;
	MPI_Type_vector(8, 1, 4, MPI_DOUBLE, &column);
	column = commit(column);
	MPI_Aint disps[3] = {offsetof(item, id), offsetof(item, w), offsetof(item, x)};
	MPI_Datatype types[3] = {MPI_INT, MPI_FLOAT, MPI_DOUBLE};
	itemt = struct_of(3, disps, types);
	MPI_Status st;
	for (int it = 0; it < 4; it++) {
		fill_double(&m[0][0], 32, rank * 10 + it);
		memset(col, 0, sizeof col);
		MPI_Sendrecv(&m[0][it], 1, column, right, it, col, 16, MPI_DOUBLE, left, it, MPI_COMM_WORLD, &st);
		got(col, sizeof col);
		gotv(count_of(&st, MPI_DOUBLE));
		memset(col, 0, sizeof col);
		MPI_Sendrecv(&m[0][it], 1, column, left, 10 + it, col, 8, MPI_DOUBLE, MPI_ANY_SOURCE, 10 + it,
			MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(col, sizeof col);
	}
	item its[3];
	for (int it = 0; it < 3; it++) {
		memset(its, 0, sizeof its);
		for (int i = 0; i < 3; i++) { its[i].id = rank * 10 + i + it; its[i].w = 0.5f * i; its[i].x = 1.5 * it; }
		MPI_Sendrecv_replace(its, 3, itemt, right, 20 + it, left, 20 + it, MPI_COMM_WORLD, &st);
		got(its, sizeof its);
		gotv(count_of(&st, itemt));
	}
	MPI_Type_free(&column);
	MPI_Type_free(&itemt);
	return end("ok_sendrecv");
}
