// Bugs: derived datatypes of every constructor used wrongly. Rank 0 sends
// eleven messages to rank 1, tags 1 to 11, each with a datatype whose
// signature the receive's does not start with; the byte counts agree, so
// MPI says nothing. Each is reported once, at its element (suite_test.go
// lists them):
//
//	tag  constructor     sender                      receiver                      element
//	1    contiguous      5 int, float                2 × contiguous(3 int)         5
//	2    vector          vector of (int, int, float) 9 int                         2
//	3    hvector         3 float, 3 int              hvector(2 × 3 float)          3
//	4    indexed         7 int, 3 unsigned           2 × indexed(2+3 int)          7
//	5    hindexed        hindexed(1+2 double)        2 double, long long           2
//	6    indexed_block   4 short, int                indexed_block(3 × 2 short)    4
//	7    hindexed_block  hindexed_block(2 × 2 float) 2 float, 2 int                2
//	8    struct          4 char, int, double         4 char, int, float, float     5
//	9    resized         5 int, float                3 × resized(2 int)            5
//	10   subarray        4 int, 2 float              subarray(2×3 of 4×5 int)      4
//	11   dup             2 × dup(int, float)         4 int                         1
#include "suite.h"

static char sbuf[1024], rbuf[1024];

static void xfer(int tag, int sc, MPI_Datatype S, int rc, MPI_Datatype R) {
	if (rank == 0) {
		for (int i = 0; i < (int)sizeof sbuf; i++) sbuf[i] = (char)(i * 13 + tag);
		MPI_Send(sbuf, sc, S, 1, tag, MPI_COMM_WORLD);
	} else if (rank == 1) {
		memset(rbuf, 0, sizeof rbuf);
		MPI_Recv(rbuf, rc, R, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(rbuf, sizeof rbuf);
	}
	MPI_Type_free(&S);
	MPI_Type_free(&R);
}

static MPI_Datatype dup(MPI_Datatype t) {
	MPI_Datatype d;
	MPI_Type_dup(t, &d);
	return d;
}

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	MPI_Datatype S, R;

	MPI_Type_contiguous(3, MPI_INT, &R);
	xfer(1, 1, blocks(5, MPI_INT, 1, MPI_FLOAT), 2, commit(R));

	MPI_Aint pdisp[3] = {0, 4, 8};
	MPI_Datatype ptypes[3] = {MPI_INT, MPI_INT, MPI_FLOAT};
	MPI_Datatype particle = struct_of(3, pdisp, ptypes);
	MPI_Type_vector(3, 1, 2, particle, &S);
	xfer(2, 1, commit(S), 9, dup(MPI_INT));

	MPI_Type_create_hvector(2, 3, 64, MPI_FLOAT, &R);
	xfer(3, 1, blocks(3, MPI_FLOAT, 3, MPI_INT), 1, commit(R));

	int ilens[2] = {2, 3}, idis[2] = {0, 4};
	MPI_Type_indexed(2, ilens, idis, MPI_INT, &R);
	xfer(4, 1, blocks(7, MPI_INT, 3, MPI_UNSIGNED), 2, commit(R));

	int hlens[2] = {1, 2};
	MPI_Aint hdis[2] = {0, 16};
	MPI_Type_create_hindexed(2, hlens, hdis, MPI_DOUBLE, &S);
	xfer(5, 1, commit(S), 1, blocks(2, MPI_DOUBLE, 1, MPI_LONG_LONG));

	int bdis[3] = {0, 3, 6};
	MPI_Type_create_indexed_block(3, 2, bdis, MPI_SHORT, &R);
	xfer(6, 1, blocks(4, MPI_SHORT, 1, MPI_INT), 1, commit(R));

	MPI_Aint hbdis[2] = {0, 24};
	MPI_Type_create_hindexed_block(2, 2, hbdis, MPI_FLOAT, &S);
	xfer(7, 1, commit(S), 1, blocks(2, MPI_FLOAT, 2, MPI_INT));

	int slens[3] = {4, 1, 1}, rlens[4] = {4, 1, 1, 1};
	MPI_Aint sdis[3] = {0, 4, 8}, rdis[4] = {0, 4, 8, 12};
	MPI_Datatype stypes[3] = {MPI_CHAR, MPI_INT, MPI_DOUBLE}, rtypes[4] = {MPI_CHAR, MPI_INT, MPI_FLOAT, MPI_FLOAT};
	MPI_Type_create_struct(3, slens, sdis, stypes, &S);
	MPI_Type_create_struct(4, rlens, rdis, rtypes, &R);
	xfer(8, 1, commit(S), 1, commit(R));

	MPI_Datatype two;
	MPI_Type_contiguous(2, MPI_INT, &two);
	MPI_Type_create_resized(two, 0, 12, &R);
	MPI_Type_free(&two);
	xfer(9, 1, blocks(5, MPI_INT, 1, MPI_FLOAT), 3, commit(R));

	int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 1};
	MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &R);
	xfer(10, 1, blocks(4, MPI_INT, 2, MPI_FLOAT), 1, commit(R));

	MPI_Datatype pair = blocks(1, MPI_INT, 1, MPI_FLOAT);
	xfer(11, 2, dup(pair), 4, dup(MPI_INT));
	MPI_Type_free(&pair);
	MPI_Type_free(&particle);
	return end("bug_types");
}
