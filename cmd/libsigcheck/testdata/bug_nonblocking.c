// Bugs: non-blocking receives of mismatched messages, completed by each
// completion call in turn. In group g (0 to 7) rank 0 sends three
// messages with tags 10g, 10g+1 and 10g+2; the middle one is g+1 ints and
// a float, received as ints. Rank 1 completes group g's three receives
// with MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome, an MPI_Test loop,
// MPI_Testall, MPI_Testany or MPI_Testsome loops. Eight reports: from
// rank 0, tag 10g+1, element g+1.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	for (int g = 0; g < 8; g++) {
		if (rank == 0) {
			int a[3][12];
			MPI_Request rs[3];
			MPI_Datatype bad = blocks(g + 1, MPI_INT, 1, MPI_FLOAT);
			for (int t = 0; t < 3; t++) fill_int(a[t], 12, g * 10 + t);
			MPI_Isend(a[0], 5, MPI_INT, 1, 10 * g, MPI_COMM_WORLD, &rs[0]);
			MPI_Isend(a[1], 1, bad, 1, 10 * g + 1, MPI_COMM_WORLD, &rs[1]);
			MPI_Isend(a[2], 7, MPI_INT, 1, 10 * g + 2, MPI_COMM_WORLD, &rs[2]);
			MPI_Waitall(3, rs, MPI_STATUSES_IGNORE);
			MPI_Type_free(&bad);
		} else if (rank == 1) {
			int b[3][12];
			MPI_Request rs[3];
			memset(b, 0, sizeof b);
			for (int t = 0; t < 3; t++) MPI_Irecv(b[t], 12, MPI_INT, 0, 10 * g + t, MPI_COMM_WORLD, &rs[t]);
			int done = 0, flag = 0, idx, out, ids[3];
			switch (g) {
			case 0: for (int t = 0; t < 3; t++) MPI_Wait(&rs[t], MPI_STATUS_IGNORE); break;
			case 1: MPI_Waitall(3, rs, MPI_STATUSES_IGNORE); break;
			case 2: while (done < 3) { MPI_Waitany(3, rs, &idx, MPI_STATUS_IGNORE); done++; } break;
			case 3: while (done < 3) { MPI_Waitsome(3, rs, &out, ids, MPI_STATUSES_IGNORE); done += out; } break;
			case 4:
				for (int t = 0; t < 3; t++) { flag = 0; while (!flag) MPI_Test(&rs[t], &flag, MPI_STATUS_IGNORE); }
				break;
			case 5: while (!flag) MPI_Testall(3, rs, &flag, MPI_STATUSES_IGNORE); break;
			case 6:
				while (done < 3) {
					MPI_Testany(3, rs, &idx, &flag, MPI_STATUS_IGNORE);
					if (flag && idx != MPI_UNDEFINED) done++;
				}
				break;
			case 7:
				while (done < 3) {
					MPI_Testsome(3, rs, &out, ids, MPI_STATUSES_IGNORE);
					if (out != MPI_UNDEFINED) done += out;
				}
				break;
			}
			got(b, sizeof b);
		}
	}
	return end("bug_nonblocking");
}
