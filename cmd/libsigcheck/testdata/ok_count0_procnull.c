// Correct: messages of count 0 (an empty signature is a prefix of every
// other), and MPI_PROC_NULL as destination and source of every kind of
// call. (A count-0 message from a NULL buffer is ok_count0_null.c.)
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 3);
	int a[16];
	double d[8];
	MPI_Status st;
	MPI_Request rs[4];
	MPI_Datatype vec;
	MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &vec);
	vec = commit(vec);

	// Count 0, against other datatypes and counts.
	if (rank == 0) {
		MPI_Send(a, 0, MPI_INT, 1, 1, MPI_COMM_WORLD);
		MPI_Send(d, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
		MPI_Isend(d, 0, vec, 1, 3, MPI_COMM_WORLD, &rs[0]);
		MPI_Wait(&rs[0], MPI_STATUS_IGNORE);
		MPI_Send(a, 0, MPI_INT, 1, 4, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv(d, 4, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &st);
		gotv(count_of(&st, MPI_DOUBLE));
		MPI_Recv(a, 3, MPI_INT, 0, 2, MPI_COMM_WORLD, &st);
		gotv(count_of(&st, MPI_INT));
		MPI_Irecv(a, 0, MPI_INT, 0, 3, MPI_COMM_WORLD, &rs[0]);
		MPI_Wait(&rs[0], &st);
		gotv(count_of(&st, MPI_INT));
		MPI_Recv(d, 1, vec, 0, 4, MPI_COMM_WORLD, &st);
		gotv(count_of(&st, vec));
	}
	MPI_Bcast(a, 0, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Allreduce(a, d, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

	// MPI_PROC_NULL: a shift along a line whose ends talk to no one.
	int right = rank + 1 < nprocs ? rank + 1 : MPI_PROC_NULL;
	int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	fill_int(a, 4, rank);
	int b[4] = {-1, -1, -1, -1};
	MPI_Sendrecv(a, 4, MPI_INT, right, 5, b, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &st);
	got(b, sizeof b);
	gotv(st.MPI_SOURCE == MPI_PROC_NULL ? -1 : st.MPI_SOURCE);
	gotv(count_of(&st, MPI_INT));
	fill_int(a, 4, rank + 10);
	MPI_Sendrecv_replace(a, 4, MPI_INT, left, 6, right, 6, MPI_COMM_WORLD, &st);
	got(a, 4 * sizeof *a);
	fill_double(d, 2, rank);
	MPI_Irecv(b, 4, MPI_INT, left, 7, MPI_COMM_WORLD, &rs[0]);
	MPI_Irecv(d + 4, 2, MPI_DOUBLE, MPI_PROC_NULL, 8, MPI_COMM_WORLD, &rs[1]);
	MPI_Isend(a, 4, MPI_INT, right, 7, MPI_COMM_WORLD, &rs[2]);
	MPI_Isend(d, 2, MPI_DOUBLE, MPI_PROC_NULL, 8, MPI_COMM_WORLD, &rs[3]);
	MPI_Waitall(4, rs, MPI_STATUSES_IGNORE);
	got(b, sizeof b);

	MPI_Send(a, 4, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD);
	MPI_Ssend(a, 4, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD);
	MPI_Recv(b, 4, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD, &st);
	gotv(st.MPI_SOURCE == MPI_PROC_NULL);
	gotv(st.MPI_TAG == MPI_ANY_TAG);
	gotv(count_of(&st, MPI_INT));
	MPI_Probe(MPI_PROC_NULL, 9, MPI_COMM_WORLD, &st);
	gotv(st.MPI_SOURCE == MPI_PROC_NULL);
	MPI_Message m;
	MPI_Mprobe(MPI_PROC_NULL, 9, MPI_COMM_WORLD, &m, &st);
	gotv(m == MPI_MESSAGE_NO_PROC);
	MPI_Mrecv(b, 4, MPI_INT, &m, &st);
	gotv(count_of(&st, MPI_INT));
	MPI_Send_init(a, 4, MPI_INT, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &rs[0]);
	MPI_Recv_init(b, 4, MPI_INT, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &rs[1]);
	for (int it = 0; it < 3; it++) {
		MPI_Startall(2, rs);
		MPI_Waitall(2, rs, MPI_STATUSES_IGNORE);
	}
	MPI_Request_free(&rs[0]);
	MPI_Request_free(&rs[1]);
	// A real message after all that, on the same tags.
	fill_int(a, 4, rank + 20);
	MPI_Sendrecv(a, 4, MPI_INT, right, 9, b, 4, MPI_INT, left, 9, MPI_COMM_WORLD, &st);
	got(b, sizeof b);
	MPI_Type_free(&vec);
	return end("ok_count0_procnull");
}
