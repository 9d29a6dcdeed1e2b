// Correct, on three ranks: calls whose answers depend on timing
// (MPI_Testany, MPI_Testsome, MPI_Iprobe and MPI_Request_get_status
// loops, which source a wildcard receive matches first, MPI_Wtime), and a
// wildcard receive still open while a later receive of the same
// communicator completes. Rank 0 broadcasts what it saw, so that under
// SIGCHECK_REPLICATE the replicas' vote on that broadcast fails unless
// replica 0's answers were every replica's. Rank 0 prints only what does
// not depend on timing.
#include "suite.h"
#include <unistd.h>

int main(int argc, char **argv) {
	begin(&argc, &argv, 3);
	long seen[16];
	memset(seen, 0, sizeof seen);
	int a[4] = {0, 0, 0, 0}, one = 0, go = 1;
	MPI_Request rs[2];
	MPI_Status st;
	if (rank == 0) {
		// Two wildcard receives, completed by a Testany loop.
		for (int k = 0; k < 2; k++) MPI_Irecv(&a[k], 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &rs[k]);
		int done = 0, idx, flag;
		while (done < 2) {
			MPI_Testany(2, rs, &idx, &flag, &st);
			seen[0]++;
			if (flag && idx != MPI_UNDEFINED) {
				seen[1 + done] = st.MPI_SOURCE * 10 + idx;
				done++;
			}
		}
		// MPI_Iprobe of any source, then the receive of what it saw.
		int flag2 = 0;
		while (!flag2) {
			MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &flag2, &st);
			seen[3]++;
		}
		seen[4] = st.MPI_SOURCE;
		MPI_Recv(&a[2], 1, MPI_INT, st.MPI_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(&a[3], 1, MPI_INT, 3 - (int)seen[4], 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		// MPI_Testsome over wildcards, and MPI_Request_get_status.
		int b[2], outc, ids[2];
		for (int k = 0; k < 2; k++) MPI_Irecv(&b[k], 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rs[k]);
		MPI_Request_get_status(rs[0], &flag, MPI_STATUS_IGNORE);
		while (!flag) {
			MPI_Request_get_status(rs[0], &flag, MPI_STATUS_IGNORE);
			seen[5]++;
		}
		for (int left = 2; left > 0; left -= outc == MPI_UNDEFINED ? 0 : outc) {
			MPI_Testsome(2, rs, &outc, ids, MPI_STATUSES_IGNORE);
			seen[6]++;
		}
		gotv(b[0] + b[1]);
		// A wildcard receive that rank 1 answers only after the later
		// receive from rank 2 has completed here.
		int w = 0, r = 0;
		MPI_Request wr, rr;
		MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &wr);
		MPI_Irecv(&r, 1, MPI_INT, 2, 5, MPI_COMM_WORLD, &rr);
		MPI_Wait(&rr, MPI_STATUS_IGNORE);
		MPI_Send(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
		MPI_Wait(&wr, &st);
		seen[7] = st.MPI_SOURCE;
		gotv(w * 100 + r);
		double t0 = MPI_Wtime();
		usleep(1000);
		double t1 = MPI_Wtime();
		memcpy(&seen[8], &t0, sizeof t0);
		memcpy(&seen[9], &t1, sizeof t1);
		char name[MPI_MAX_PROCESSOR_NAME];
		int len = 0;
		MPI_Get_processor_name(name, &len);
		seen[10] = len > 0 ? name[0] : 0;
		gotv(a[0] + a[1] + a[2] + a[3]);
	} else {
		// Rank 1 and 2 send in an order that differs from run to run.
		usleep(rank == 1 ? 2000 : 500);
		one = rank * 7;
		MPI_Send(&one, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
		usleep(rank == 1 ? 300 : 1500);
		MPI_Send(&one, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
		MPI_Send(&one, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
		if (rank == 2) {
			int five = 5;
			MPI_Send(&five, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
		} else {
			MPI_Recv(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			int four = 4;
			MPI_Send(&four, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
		}
	}
	// What rank 0 saw, everywhere: the replicas vote on it.
	MPI_Bcast(seen, 16, MPI_LONG, 0, MPI_COMM_WORLD);
	return end("rep_determinism");
}
