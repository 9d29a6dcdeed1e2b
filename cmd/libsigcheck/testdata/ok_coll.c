// Correct: the blocking collectives (MPI_Bcast, MPI_Reduce,
// MPI_Allreduce, MPI_Scan, MPI_Gather, MPI_Gatherv, MPI_Scatter,
// MPI_Scatterv, MPI_Allgather, MPI_Allgatherv, MPI_Alltoall,
// MPI_Alltoallv), with MPI_IN_PLACE where MPI allows it, and with derived
// datatypes on one side that have the signature of the other's.
#include "suite.h"

#define MAXP 8

int main(int argc, char **argv) {
	begin(&argc, &argv, 3);
	int p = nprocs, root = 1 % p;
	int a[64], b[64 * MAXP], counts[MAXP], displs[MAXP], rcounts[MAXP], rdispls[MAXP];
	double d[64], e[64];
	MPI_Datatype three; // three ints: the signature of 3 × MPI_INT
	MPI_Type_contiguous(3, MPI_INT, &three);
	three = commit(three);
	MPI_Datatype everyother; // four doubles, strided
	MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &everyother);
	everyother = commit(everyother);

	// Bcast: the root sends a vector, the others receive contiguous doubles.
	memset(d, 0, sizeof d);
	if (rank == root) { fill_double(d, 8, 1); MPI_Bcast(d, 1, everyother, root, MPI_COMM_WORLD); }
	else MPI_Bcast(d, 4, MPI_DOUBLE, root, MPI_COMM_WORLD);
	got(d, sizeof d);

	// Reduce, into a buffer and in place at the root.
	fill_int(a, 5, rank);
	memset(b, 0, sizeof b);
	MPI_Reduce(a, b, 5, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) got(b, 5 * sizeof *b);
	fill_int(b, 5, rank);
	if (rank == root) MPI_Reduce(MPI_IN_PLACE, b, 5, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
	else MPI_Reduce(b, NULL, 5, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
	if (rank == root) got(b, 5 * sizeof *b);

	// Allreduce and Scan, out of place and in place.
	fill_int(a, 4, rank);
	MPI_Allreduce(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	got(b, 4 * sizeof *b);
	MPI_Allreduce(MPI_IN_PLACE, a, 4, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
	got(a, 4 * sizeof *a);
	fill_int(a, 3, rank);
	MPI_Scan(a, b, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	got(b, 3 * sizeof *b);
	MPI_Scan(MPI_IN_PLACE, a, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	got(a, 3 * sizeof *a);

	// Gather: each sends one "three", the root receives 3 ints per rank.
	fill_int(a, 3, rank);
	memset(b, 0, sizeof b);
	MPI_Gather(a, 1, three, b, 3, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0) got(b, 3 * p * sizeof *b);
	memset(b, 0, sizeof b);
	fill_int(b + 3 * rank, 3, rank + 5);
	if (rank == root) MPI_Gather(MPI_IN_PLACE, 3, MPI_INT, b, 3, MPI_INT, root, MPI_COMM_WORLD);
	else MPI_Gather(b + 3 * rank, 3, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
	if (rank == root) got(b, 3 * p * sizeof *b);

	// Gatherv: rank i sends i+1 doubles.
	for (int i = 0, off = 0; i < p; i++) { counts[i] = i + 1; displs[i] = off; off += i + 2; }
	fill_double(d, rank + 1, rank);
	memset(e, 0, sizeof e);
	MPI_Gatherv(d, rank + 1, MPI_DOUBLE, e, counts, displs, MPI_DOUBLE, root, MPI_COMM_WORLD);
	if (rank == root) got(e, sizeof e);
	memset(e, 0, sizeof e);
	fill_double(e + displs[rank], rank + 1, rank + 7);
	if (rank == 0) MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, e, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	else MPI_Gatherv(e + displs[rank], rank + 1, MPI_DOUBLE, NULL, NULL, NULL, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (rank == 0) got(e, sizeof e);

	// Scatter and Scatterv, with the root's own part in place.
	fill_int(b, 4 * p, 9);
	memset(a, 0, sizeof a);
	MPI_Scatter(b, 4, MPI_INT, a, 4, MPI_INT, 0, MPI_COMM_WORLD);
	got(a, 4 * sizeof *a);
	if (rank == root) MPI_Scatter(b, 1, three, MPI_IN_PLACE, 3, MPI_INT, root, MPI_COMM_WORLD);
	else { memset(a, 0, sizeof a); MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, a, 3, MPI_INT, root, MPI_COMM_WORLD); got(a, 3 * sizeof *a); }
	fill_double(e, 64, 3);
	memset(d, 0, sizeof d);
	MPI_Scatterv(e, counts, displs, MPI_DOUBLE, d, rank + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	got(d, (rank + 1) * sizeof *d);
	if (rank == root) MPI_Scatterv(e, counts, displs, MPI_DOUBLE, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
	else { memset(d, 0, sizeof d); MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, d, rank + 1, MPI_DOUBLE, root, MPI_COMM_WORLD); got(d, sizeof d); }

	// Allgather and Allgatherv, out of place and in place.
	fill_int(a, 2, rank);
	memset(b, 0, sizeof b);
	MPI_Allgather(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD);
	got(b, 2 * p * sizeof *b);
	memset(b, 0, sizeof b);
	fill_int(b + 3 * rank, 3, rank + 1);
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 1, three, MPI_COMM_WORLD);
	got(b, 3 * p * sizeof *b);
	fill_double(d, rank + 1, rank);
	memset(e, 0, sizeof e);
	MPI_Allgatherv(d, rank + 1, MPI_DOUBLE, e, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
	got(e, sizeof e);
	memset(e, 0, sizeof e);
	fill_double(e + displs[rank], rank + 1, rank + 2);
	MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, e, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
	got(e, sizeof e);

	// Alltoall and Alltoallv, out of place and in place; rank i sends j+1
	// ints to rank j.
	fill_int(a, 2 * p, rank);
	memset(b, 0, sizeof b);
	MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD);
	got(b, 2 * p * sizeof *b);
	fill_int(b, 3 * p, rank + 4);
	MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 1, three, MPI_COMM_WORLD);
	got(b, 3 * p * sizeof *b);
	int sd[MAXP], sc[MAXP];
	for (int j = 0, off = 0; j < p; j++) { sc[j] = j + 1; sd[j] = off; off += j + 1; }
	for (int i = 0, off = 0; i < p; i++) { rcounts[i] = rank + 1; rdispls[i] = off; off += rank + 1; }
	fill_int(a, 64, rank);
	memset(b, 0, sizeof b);
	MPI_Alltoallv(a, sc, sd, MPI_INT, b, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
	got(b, p * (rank + 1) * sizeof *b);
	for (int i = 0; i < p; i++) { rcounts[i] = 2; rdispls[i] = 3 * i; }
	fill_int(b, 3 * p, rank + 8);
	MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
	got(b, 3 * p * sizeof *b);

	MPI_Type_free(&three);
	MPI_Type_free(&everyother);
	return end("ok_coll");
}
