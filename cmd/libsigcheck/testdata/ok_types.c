// Correct: derived datatypes of every constructor (contiguous, vector,
// hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
// resized, subarray, dup, and nested ones), each sent from rank 0 to rank
// 1 and received with a datatype of another shape but the same type
// signature, or a longer one.
#include "suite.h"

typedef struct { int id; float w; double x; } item;

static char sbuf[4096], rbuf[4096];

// xfer sends sc × S from sbuf, filled with a pattern, and receives it as
// rc × R into rbuf, which it hashes.
static void xfer(int tag, int sc, MPI_Datatype S, int rc, MPI_Datatype R) {
	if (rank == 0) {
		for (int i = 0; i < (int)sizeof sbuf; i++) sbuf[i] = (char)(i * 31 + tag);
		MPI_Send(sbuf, sc, S, 1, tag, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Status st;
		memset(rbuf, 0, sizeof rbuf);
		MPI_Recv(rbuf, rc, R, 0, tag, MPI_COMM_WORLD, &st);
		got(rbuf, sizeof rbuf);
		int n = -1;
		MPI_Get_elements(&st, R, &n);
		gotv(tag * 1000 + n);
	}
	if (S != R) MPI_Type_free(&S);
	MPI_Type_free(&R);
}

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	MPI_Datatype S, R;
	MPI_Aint idisp[3] = {offsetof(item, id), offsetof(item, w), offsetof(item, x)};
	MPI_Datatype itypes[3] = {MPI_INT, MPI_FLOAT, MPI_DOUBLE};
	MPI_Datatype itemt = struct_of(3, idisp, itypes);

	MPI_Type_contiguous(4, MPI_INT, &S);
	MPI_Type_contiguous(16, MPI_INT, &R);
	xfer(1, 3, commit(S), 1, commit(R)); // 12 ints into 16

	MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &S);
	MPI_Type_vector(2, 4, 6, MPI_DOUBLE, &R);
	xfer(2, 1, commit(S), 1, commit(R));

	MPI_Type_create_hvector(3, 1, sizeof(item), MPI_FLOAT, &S);
	MPI_Type_contiguous(3, MPI_FLOAT, &R);
	xfer(3, 1, commit(S), 1, commit(R));

	int ilens[3] = {1, 3, 2}, idis[3] = {0, 2, 7};
	MPI_Type_indexed(3, ilens, idis, MPI_INT, &S);
	MPI_Type_vector(3, 4, 5, MPI_INT, &R);
	xfer(4, 2, commit(S), 1, commit(R)); // 12 ints

	int hlens[2] = {2, 1};
	MPI_Aint hdis[2] = {0, 40};
	MPI_Type_create_hindexed(2, hlens, hdis, MPI_DOUBLE, &S);
	MPI_Type_dup(MPI_DOUBLE, &R);
	xfer(5, 1, commit(S), 5, commit(R)); // 3 doubles into 5

	int bdis[3] = {0, 4, 8};
	MPI_Type_create_indexed_block(3, 2, bdis, MPI_SHORT, &S);
	MPI_Type_contiguous(6, MPI_SHORT, &R);
	xfer(6, 1, commit(S), 1, commit(R));

	MPI_Aint hbdis[2] = {0, 32};
	MPI_Type_create_hindexed_block(2, 3, hbdis, MPI_FLOAT, &S);
	MPI_Type_contiguous(6, MPI_FLOAT, &R);
	xfer(7, 2, commit(S), 2, commit(R));

	// The same signature laid out otherwise: members in another order in
	// memory, listed in the same order.
	MPI_Aint rdisp[3] = {16, 0, 8};
	MPI_Type_dup(itemt, &S);
	R = struct_of(3, rdisp, itypes);
	xfer(8, 2, S, 2, R);

	MPI_Type_create_resized(MPI_INT, 0, 8, &S);
	MPI_Type_contiguous(5, MPI_INT, &R);
	xfer(9, 5, commit(S), 1, commit(R));

	int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 1};
	MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &S);
	MPI_Type_contiguous(6, MPI_DOUBLE, &R);
	xfer(10, 1, commit(S), 1, commit(R));

	MPI_Type_dup(itemt, &S);
	MPI_Type_dup(itemt, &R);
	xfer(11, 2, S, 3, R); // 2 items into 3

	MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &S);
	MPI_Type_vector(2, 3, 7, MPI_INT, &R);
	xfer(12, 1, commit(S), 1, commit(R));

	// Nested: a vector of resized items, received as items.
	MPI_Datatype ritem;
	MPI_Type_create_resized(itemt, 0, 2 * sizeof(item), &ritem);
	MPI_Type_vector(2, 2, 3, ritem, &S);
	MPI_Type_dup(itemt, &R);
	xfer(13, 1, commit(S), 4, R);
	MPI_Type_free(&ritem);

	// An hvector of indexed blocks of a contiguous pair, received as ints.
	MPI_Datatype pair, idx;
	MPI_Type_contiguous(2, MPI_INT, &pair);
	int plens[2] = {1, 2}, pdis[2] = {0, 3};
	MPI_Type_indexed(2, plens, pdis, pair, &idx);
	MPI_Type_create_hvector(2, 1, 64, idx, &S);
	MPI_Type_contiguous(12, MPI_INT, &R);
	xfer(14, 1, commit(S), 1, commit(R));
	MPI_Type_free(&pair);
	MPI_Type_free(&idx);

	MPI_Type_free(&itemt);
	return end("ok_types");
}
