// Bug: struct members swapped. Both ranks lay out the same C struct, but
// rank 1 lists its members in another order than rank 0 when it builds
// the datatype: rank 0's signature is int, float, double; rank 1's is
// int, double, float. One report: the receive on rank 1, from rank 0,
// tag 3, element 1 (the float against a double).
#include "suite.h"

typedef struct { int id; float w; double x; } item;

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	item its[4];
	MPI_Datatype t;
	if (rank == 0) {
		MPI_Aint disps[3] = {offsetof(item, id), offsetof(item, w), offsetof(item, x)};
		MPI_Datatype types[3] = {MPI_INT, MPI_FLOAT, MPI_DOUBLE};
		t = struct_of(3, disps, types);
		for (int i = 0; i < 4; i++) { its[i].id = i; its[i].w = 0.5f * i; its[i].x = 2.0 * i; }
		MPI_Send(its, 4, t, 1, 3, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Aint disps[3] = {offsetof(item, id), offsetof(item, x), offsetof(item, w)};
		MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT};
		t = struct_of(3, disps, types);
		memset(its, 0, sizeof its);
		MPI_Recv(its, 4, t, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(its, sizeof its);
	}
	if (rank <= 1) MPI_Type_free(&t);
	return end("bug_struct_swapped");
}
