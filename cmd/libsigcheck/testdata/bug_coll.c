// Bugs: collectives whose ranks disagree, on three ranks. The rank that
// receives a transfer reports it, against the rank that sends it:
//
//	MPI_Allreduce   rank 1 passes MPI_FLOAT, the others MPI_INT:
//	                rank 0 (which checks every rank's against its own)
//	                against 1, element 0
//	MPI_Bcast       root 0 sends 4 ints, rank 2's count is 6: rank 2
//	                against 0, element 4
//	MPI_Alltoallv   rank 0 sends rank 2 two ints, rank 2 expects three
//	                from rank 0: rank 2 against 0, element 2
//	MPI_Gather      rank 1 sends 3 floats, root 0 expects 3 ints from
//	                each: rank 0 against 1, element 0
//	MPI_Scatterv    root 0 sends rank 1 two doubles, rank 1 expects
//	                three: rank 1 against 0, element 2
//	MPI_Reduce      root 1; rank 2 passes MPI_UNSIGNED: rank 1 against
//	                2, element 0
//	MPI_Allgather   rank 2 sends two long longs, every rank receives two
//	                doubles from each: ranks 0, 1 and 2 against 2,
//	                element 0
//	MPI_Iallreduce  completed by an MPI_Test loop; rank 2 passes
//	                MPI_UNSIGNED: rank 0 against 2, element 0
//	MPI_Ibcast      completed by MPI_Wait; root 0 sends two doubles,
//	                rank 1 receives a double and a long long: rank 1
//	                against 0, element 1
//
// Eleven reports in all. The byte counts agree where the signatures do
// not, and counts differ only where MPI receives fewer bytes than it may,
// so MPI itself says nothing.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 3);
	int a[16], b[64];
	double d[16], e[16];
	MPI_Request r;

	fill_int(a, 4, rank);
	MPI_Allreduce(a, b, 4, rank == 1 ? MPI_FLOAT : MPI_INT, MPI_SUM, MPI_COMM_WORLD);

	fill_int(a, 6, 7);
	MPI_Bcast(a, rank == 2 ? 6 : 4, MPI_INT, 0, MPI_COMM_WORLD);
	got(a, 4 * sizeof *a);

	int sc[3], sd[3], rc[3], rd[3];
	for (int j = 0; j < 3; j++) {
		sc[j] = 2; sd[j] = 3 * j;
		rc[j] = rank == 2 && j == 0 ? 3 : 2; rd[j] = 3 * j;
	}
	fill_int(a, 9, rank);
	memset(b, 0, sizeof b);
	MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD);
	got(b, 9 * sizeof *b);

	float f[3] = {1, 2, 3};
	fill_int(a, 3, rank);
	if (rank == 1) MPI_Gather(f, 3, MPI_FLOAT, b, 3, MPI_INT, 0, MPI_COMM_WORLD);
	else MPI_Gather(a, 3, MPI_INT, b, 3, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0) got(b, 9 * sizeof *b);

	int cnt[3] = {1, 2, 3}, dis[3] = {0, 1, 3};
	fill_double(d, 6, 1);
	memset(e, 0, sizeof e);
	MPI_Scatterv(d, cnt, dis, MPI_DOUBLE, e, rank + 1 + (rank == 1), MPI_DOUBLE, 0, MPI_COMM_WORLD);
	got(e, sizeof e);

	fill_int(a, 2, rank);
	MPI_Reduce(a, b, 2, rank == 2 ? MPI_UNSIGNED : MPI_INT, MPI_MAX, 1, MPI_COMM_WORLD);

	long long ll[2] = {5, 6};
	fill_double(d, 2, rank);
	memset(e, 0, sizeof e);
	if (rank == 2) MPI_Allgather(ll, 2, MPI_LONG_LONG, e, 2, MPI_DOUBLE, MPI_COMM_WORLD);
	else MPI_Allgather(d, 2, MPI_DOUBLE, e, 2, MPI_DOUBLE, MPI_COMM_WORLD);
	got(e, 4 * sizeof *e);

	fill_int(a, 3, rank);
	MPI_Iallreduce(a, b, 3, rank == 2 ? MPI_UNSIGNED : MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r);
	int flag = 0;
	while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);

	MPI_Datatype dl = blocks(1, MPI_DOUBLE, 1, MPI_LONG_LONG);
	fill_double(d, 2, 3);
	if (rank == 1) MPI_Ibcast(d, 1, dl, 0, MPI_COMM_WORLD, &r);
	else MPI_Ibcast(d, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	MPI_Type_free(&dl);
	return end("bug_coll");
}
