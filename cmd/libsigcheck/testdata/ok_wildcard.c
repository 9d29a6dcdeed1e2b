// Correct: wildcard receives (MPI_ANY_SOURCE, MPI_ANY_TAG, with
// MPI_STATUS_IGNORE), MPI_Probe and MPI_Iprobe followed by MPI_Get_count
// and MPI_Recv, MPI_Mprobe with MPI_Mrecv, MPI_Improbe with MPI_Imrecv.
// Ranks 1 and 2 each send one message per section to rank 0, of a length
// and tag of their own; a barrier ends each section.
#include "suite.h"

enum { BLOCKING, IRECV, PROBE, IPROBE, MPROBE, IMPROBE, SECTIONS };

int main(int argc, char **argv) {
	begin(&argc, &argv, 3);
	int buf[64];
	MPI_Status st;
	for (int s = 0; s < SECTIONS; s++) {
		if (rank == 1 || rank == 2) {
			int n = 5 * rank + s, a[64];
			fill_int(a, n, s * 10 + rank);
			MPI_Send(a, n, MPI_INT, 0, 100 * s + rank, MPI_COMM_WORLD);
		} else if (rank == 0) {
			for (int k = 0; k < 2; k++) {
				memset(buf, 0, sizeof buf);
				int n = 0, *p = buf;
				MPI_Request r;
				MPI_Message m;
				int flag = 0;
				switch (s) {
				case BLOCKING:
					MPI_Recv(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					n = 64;
					break;
				case IRECV:
					MPI_Irecv(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
					MPI_Wait(&r, MPI_STATUS_IGNORE);
					n = 64;
					break;
				case PROBE:
					MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
					n = count_of(&st, MPI_INT);
					p = malloc(n * sizeof *p);
					MPI_Recv(p, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					break;
				case IPROBE:
					while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 100 * s + 2 - k, MPI_COMM_WORLD, &flag, &st);
					n = count_of(&st, MPI_INT);
					p = malloc(n * sizeof *p);
					MPI_Recv(p, n, MPI_INT, MPI_ANY_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
					break;
				case MPROBE:
					MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
					n = count_of(&st, MPI_INT);
					p = malloc(n * sizeof *p);
					MPI_Mrecv(p, n, MPI_INT, &m, MPI_STATUS_IGNORE);
					break;
				case IMPROBE:
					while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
					n = count_of(&st, MPI_INT);
					p = malloc(n * sizeof *p);
					MPI_Imrecv(p, n, MPI_INT, &m, &r);
					flag = 0;
					while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
					break;
				}
				got(p, n * sizeof *p);
				if (p != buf) free(p);
			}
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	// Two wildcard receives pending at once, completed together.
	if (rank == 0) {
		int b2[2][64];
		MPI_Request rs[2];
		memset(b2, 0, sizeof b2);
		for (int k = 0; k < 2; k++) MPI_Irecv(b2[k], 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rs[k]);
		MPI_Waitall(2, rs, MPI_STATUSES_IGNORE);
		got(b2[0], sizeof b2[0]);
		got(b2[1], sizeof b2[1]);
	} else if (rank <= 2) {
		int a[8];
		fill_int(a, 8, rank);
		MPI_Send(a, 8, MPI_INT, 0, 900 + rank, MPI_COMM_WORLD);
	}
	return end("ok_wildcard");
}
