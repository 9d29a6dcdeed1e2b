// Correct: the non-blocking collectives (MPI_Ibcast, MPI_Ireduce,
// MPI_Iallreduce, MPI_Iscan, MPI_Igather, MPI_Igatherv, MPI_Iscatter,
// MPI_Iscatterv, MPI_Iallgather, MPI_Iallgatherv, MPI_Ialltoall,
// MPI_Ialltoallv), completed by MPI_Wait, by MPI_Test loops, by
// MPI_Waitall and MPI_Testall over several at once, with MPI_IN_PLACE
// where MPI allows it, and with point-to-point messages in between.
#include "suite.h"

#define MAXP 8

static void test_loop(MPI_Request *r) {
	int flag = 0;
	while (!flag) MPI_Test(r, &flag, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
	begin(&argc, &argv, 3);
	int p = nprocs;
	int a[64], b[64 * MAXP], c[64], counts[MAXP], displs[MAXP];
	double d[64], e[64];
	MPI_Request r, rs[4];
	MPI_Datatype pair;
	MPI_Type_contiguous(2, MPI_INT, &pair);
	pair = commit(pair);
	for (int i = 0, off = 0; i < p; i++) { counts[i] = i + 1; displs[i] = off; off += i + 1; }

	for (int round = 0; round < 2; round++) {
		// Completed by MPI_Wait (round 0) or an MPI_Test loop (round 1).
		#define DONE(R) do { if (round == 0) MPI_Wait(R, MPI_STATUS_IGNORE); else test_loop(R); } while (0)
		fill_double(d, 6, round);
		MPI_Ibcast(d, 6, MPI_DOUBLE, round % p, MPI_COMM_WORLD, &r);
		DONE(&r);
		got(d, 6 * sizeof *d);

		fill_int(a, 4, rank + round);
		memset(b, 0, sizeof b);
		MPI_Ireduce(a, b, 4, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD, &r);
		DONE(&r);
		if (rank == 1) got(b, 4 * sizeof *b);

		fill_int(a, 4, rank + round);
		MPI_Iallreduce(MPI_IN_PLACE, a, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r);
		DONE(&r);
		got(a, 4 * sizeof *a);

		fill_int(a, 3, rank);
		MPI_Iscan(a, b, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
		DONE(&r);
		got(b, 3 * sizeof *b);

		fill_int(a, 2, rank);
		memset(b, 0, sizeof b);
		MPI_Igather(a, 1, pair, b, 2, MPI_INT, 0, MPI_COMM_WORLD, &r);
		DONE(&r);
		if (rank == 0) got(b, 2 * p * sizeof *b);

		fill_double(d, rank + 1, rank);
		memset(e, 0, sizeof e);
		MPI_Igatherv(d, rank + 1, MPI_DOUBLE, e, counts, displs, MPI_DOUBLE, p - 1, MPI_COMM_WORLD, &r);
		DONE(&r);
		if (rank == p - 1) got(e, sizeof e);

		fill_int(b, 2 * p, round);
		memset(a, 0, sizeof a);
		if (rank == 0) MPI_Iscatter(b, 2, MPI_INT, MPI_IN_PLACE, 1, pair, 0, MPI_COMM_WORLD, &r);
		else MPI_Iscatter(NULL, 0, MPI_DATATYPE_NULL, a, 1, pair, 0, MPI_COMM_WORLD, &r);
		DONE(&r);
		got(a, 2 * sizeof *a);

		fill_double(e, 64, round);
		memset(d, 0, sizeof d);
		MPI_Iscatterv(e, counts, displs, MPI_DOUBLE, d, rank + 1, MPI_DOUBLE, 1, MPI_COMM_WORLD, &r);
		DONE(&r);
		got(d, sizeof d);

		// Several at once, with point-to-point traffic between them.
		fill_int(a, 2, rank + 10 * round);
		memset(b, 0, sizeof b);
		MPI_Iallgather(a, 2, MPI_INT, b, 1, pair, MPI_COMM_WORLD, &rs[0]);
		memset(e, 0, sizeof e);
		fill_double(e + displs[rank], rank + 1, rank);
		MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, e, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &rs[1]);
		fill_int(c, 3 * p, rank);
		int c2[3 * MAXP];
		memset(c2, 0, sizeof c2);
		MPI_Ialltoall(c, 3, MPI_INT, c2, 3, MPI_INT, MPI_COMM_WORLD, &rs[2]);
		int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], x[64], y[64];
		for (int j = 0, off = 0; j < p; j++) { sc[j] = j + 1; sd[j] = off; off += j + 1; }
		for (int i = 0; i < p; i++) { rc[i] = rank + 1; rd[i] = i * (rank + 1); }
		fill_int(x, 64, rank);
		memset(y, 0, sizeof y);
		MPI_Ialltoallv(x, sc, sd, MPI_INT, y, rc, rd, MPI_INT, MPI_COMM_WORLD, &rs[3]);
		int msg[4], in[4] = {0};
		fill_int(msg, 4, rank);
		MPI_Sendrecv(msg, 4, MPI_INT, (rank + 1) % p, 7, in, 4, MPI_INT, (rank + p - 1) % p, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		got(in, sizeof in);
		if (round == 0) MPI_Waitall(4, rs, MPI_STATUSES_IGNORE);
		else {
			int flag = 0;
			while (!flag) MPI_Testall(4, rs, &flag, MPI_STATUSES_IGNORE);
		}
		got(b, 2 * p * sizeof *b);
		got(e, sizeof e);
		got(c2, 3 * p * sizeof *c2);
		got(y, p * (rank + 1) * sizeof *y);
	}
	MPI_Type_free(&pair);
	return end("ok_icoll");
}
