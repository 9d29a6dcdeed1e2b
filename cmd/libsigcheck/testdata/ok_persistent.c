// Correct: persistent requests, MPI_Send_init and MPI_Recv_init started
// with MPI_Start and MPI_Startall over several iterations, completed with
// MPI_Wait, MPI_Waitall and MPI_Test, then freed with MPI_Request_free;
// and a started receive freed while still active, whose message comes.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	int a[24], b[48];
	double d[12], e[12];
	MPI_Datatype col; // every other double of 12: the signature of 6 doubles
	MPI_Type_vector(6, 1, 2, MPI_DOUBLE, &col);
	col = commit(col);
	MPI_Request rs[3];
	const int iters = 6;
	if (rank == 0) {
		MPI_Send_init(a, 24, MPI_INT, 1, 1, MPI_COMM_WORLD, &rs[0]);
		MPI_Send_init(d, 1, col, 1, 2, MPI_COMM_WORLD, &rs[1]);
		MPI_Recv_init(e, 12, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, &rs[2]);
		for (int it = 0; it < iters; it++) {
			fill_int(a, 24, it);
			fill_double(d, 12, it);
			if (it % 2 == 0) {
				MPI_Startall(3, rs);
				MPI_Waitall(3, rs, MPI_STATUSES_IGNORE);
			} else {
				for (int i = 0; i < 3; i++) MPI_Start(&rs[i]);
				int flag = 0;
				while (!flag) MPI_Test(&rs[2], &flag, MPI_STATUS_IGNORE);
				MPI_Wait(&rs[0], MPI_STATUS_IGNORE);
				MPI_Wait(&rs[1], MPI_STATUS_IGNORE);
			}
			got(e, sizeof e);
		}
		for (int i = 0; i < 3; i++) MPI_Request_free(&rs[i]);
		// Two more messages on tag 1: the first goes to a receive that rank
		// 1 freed while active.
		fill_int(a, 24, 77);
		MPI_Send(a, 24, MPI_INT, 1, 1, MPI_COMM_WORLD);
		fill_int(a, 24, 78);
		MPI_Send(a, 20, MPI_INT, 1, 1, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv_init(b, 48, MPI_INT, 0, 1, MPI_COMM_WORLD, &rs[0]);
		MPI_Recv_init(e, 6, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &rs[1]);
		MPI_Send_init(d, 12, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &rs[2]);
		for (int it = 0; it < iters; it++) {
			fill_double(d, 12, 100 + it);
			memset(b, 0, sizeof b);
			memset(e, 0, sizeof e);
			MPI_Status sts[3];
			MPI_Startall(3, rs);
			if (it % 3 == 0) {
				MPI_Waitall(3, rs, sts);
			} else {
				for (int i = 2; i >= 0; i--) MPI_Wait(&rs[i], &sts[i]);
			}
			got(b, sizeof b);
			got(e, sizeof e);
			gotv(count_of(&sts[0], MPI_INT));
		}
		MPI_Request_free(&rs[1]);
		MPI_Request_free(&rs[2]);
		// Started once more, then freed while active: it takes the next
		// message on tag 1, and the MPI_Recv the one after.
		static int c[48];
		MPI_Start(&rs[0]);
		MPI_Request_free(&rs[0]);
		MPI_Status st;
		memset(c, 0, sizeof c);
		MPI_Recv(c, 48, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
		got(c, sizeof c);
		gotv(count_of(&st, MPI_INT));
	}
	MPI_Type_free(&col);
	return end("ok_persistent");
}
