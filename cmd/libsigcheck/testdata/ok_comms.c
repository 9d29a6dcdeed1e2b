// Correct: traffic on communicators made with MPI_Comm_dup, MPI_Comm_split,
// MPI_Comm_create and MPI_Cart_create, then freed; ranks and tags on them
// are the communicator's own, and the same tags are used on
// MPI_COMM_WORLD meanwhile.
#include "suite.h"

// ring passes a message around c and a reduction over it.
static void ring(MPI_Comm c, int seed) {
	int me, n;
	MPI_Comm_rank(c, &me);
	MPI_Comm_size(c, &n);
	int a[6], b[6] = {0};
	fill_int(a, 6, seed * 10 + me);
	MPI_Request r;
	MPI_Irecv(b, 6, MPI_INT, (me + n - 1) % n, 1, c, &r);
	MPI_Send(a, 6, MPI_INT, (me + 1) % n, 1, c);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	got(b, sizeof b);
	int sum = 0;
	MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
	gotv(sum);
	double d[3];
	fill_double(d, 3, seed);
	MPI_Bcast(d, 3, MPI_DOUBLE, n - 1, c);
	got(d, sizeof d);
}

int main(int argc, char **argv) {
	begin(&argc, &argv, 4);
	MPI_Comm dup, split, created, cart;
	for (int it = 0; it < 3; it++) {
		MPI_Comm_dup(MPI_COMM_WORLD, &dup);
		ring(dup, it);
		ring(MPI_COMM_WORLD, 100 + it);
		MPI_Comm_free(&dup);
	}

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split); // reversed order
	ring(split, 2);
	MPI_Comm_free(&split);

	MPI_Group world, first3;
	int ranks[3] = {0, 1, 2};
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 3, ranks, &first3);
	MPI_Comm_create(MPI_COMM_WORLD, first3, &created);
	if (created != MPI_COMM_NULL) {
		ring(created, 3);
		MPI_Comm_free(&created);
	}
	MPI_Group_free(&first3);
	MPI_Group_free(&world);

	int dims[2] = {2, nprocs / 2}, periods[2] = {1, 0};
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	if (cart != MPI_COMM_NULL) {
		int src, dst, a[4], b[4] = {0};
		for (int dim = 0; dim < 2; dim++) {
			MPI_Cart_shift(cart, dim, 1, &src, &dst);
			fill_int(a, 4, rank + dim);
			memset(b, 0, sizeof b);
			MPI_Sendrecv(a, 4, MPI_INT, dst, dim, b, 4, MPI_INT, src, dim, cart, MPI_STATUS_IGNORE);
			got(b, sizeof b);
		}
		ring(cart, 4);
		MPI_Comm_free(&cart);
	}
	return end("ok_comms");
}
