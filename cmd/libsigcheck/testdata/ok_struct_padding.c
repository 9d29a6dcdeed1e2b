// Correct: a struct of a double and an int, whose extent MPI pads to 16
// bytes for alignment (MPI 4.1 §5.1.6), sent four at a time. Found by the
// suite: in checksum mode the library takes the datatype for one run of
// 12 bytes, hashes the first 48 bytes of each buffer instead of the data,
// and reports the message corrupt.
#include "suite.h"

typedef struct { double x; int n; } rec;

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	rec rs[4];
	MPI_Aint disps[2] = {offsetof(rec, x), offsetof(rec, n)};
	MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
	MPI_Datatype t = struct_of(2, disps, types);
	memset(rs, 0xff, sizeof rs); // the padding differs between the ranks
	if (rank == 0) {
		for (int i = 0; i < 4; i++) { rs[i].x = 1.5 * i; rs[i].n = i; }
		MPI_Send(rs, 4, t, 1, 1, MPI_COMM_WORLD);
	} else if (rank == 1) {
		memset(rs, 0, sizeof rs);
		MPI_Recv(rs, 4, t, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (int i = 0; i < 4; i++) { gotv((long long)(rs[i].x * 10)); gotv(rs[i].n); }
	}
	MPI_Type_free(&t);
	return end("ok_struct_padding");
}
