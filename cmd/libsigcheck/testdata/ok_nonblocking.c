// Correct: non-blocking sends and receives completed by every completion
// call: MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Test in a
// loop, MPI_Testall, MPI_Testany and MPI_Testsome loops. Rank 0 receives
// from ranks 1 and 2 (and sends to them), several messages per round.
#include "suite.h"

#define N 6 // receives per round on rank 0: three from each peer

static int buf[N][40];

static void post(MPI_Request *rs) {
	for (int i = 0; i < N; i++) {
		memset(buf[i], 0, sizeof buf[i]);
		MPI_Irecv(buf[i], 40, MPI_INT, 1 + i % 2, i / 2, MPI_COMM_WORLD, &rs[i]);
	}
}

static void take(void) {
	for (int i = 0; i < N; i++) got(buf[i], sizeof buf[i]);
}

static void send_round(int round) {
	MPI_Request rs[3];
	int a[3][30];
	for (int t = 0; t < 3; t++) {
		fill_int(a[t], 30, round * 100 + rank * 10 + t);
		int n = 10 + 5 * t + round;
		if (t == 1) MPI_Issend(a[t], n, MPI_INT, 0, t, MPI_COMM_WORLD, &rs[t]);
		else MPI_Isend(a[t], n, MPI_INT, 0, t, MPI_COMM_WORLD, &rs[t]);
	}
	switch (round % 3) {
	case 0: MPI_Waitall(3, rs, MPI_STATUSES_IGNORE); break;
	case 1: for (int t = 0; t < 3; t++) MPI_Wait(&rs[t], MPI_STATUS_IGNORE); break;
	case 2: {
		int flag = 0;
		while (!flag) MPI_Testall(3, rs, &flag, MPI_STATUSES_IGNORE);
	}
	}
}

int main(int argc, char **argv) {
	begin(&argc, &argv, 3);
	MPI_Request rs[N];
	MPI_Status sts[N];
	const int rounds = 8;
	for (int round = 0; round < rounds; round++) {
		if (rank == 1 || rank == 2) { send_round(round); continue; }
		if (rank != 0) continue;
		post(rs);
		int done = 0, flag, idx, out, ids[N];
		switch (round) {
		case 0: // MPI_Wait, one by one, last first
			for (int i = N - 1; i >= 0; i--) { MPI_Wait(&rs[i], &sts[i]); gotv(count_of(&sts[i], MPI_INT)); }
			break;
		case 1: // MPI_Waitall with statuses
			MPI_Waitall(N, rs, sts);
			for (int i = 0; i < N; i++) gotv(sts[i].MPI_SOURCE * 100 + sts[i].MPI_TAG);
			break;
		case 2: // MPI_Waitany
			while (done < N) {
				MPI_Waitany(N, rs, &idx, &sts[0]);
				gotv(idx * 1000 + count_of(&sts[0], MPI_INT));
				done++;
			}
			break;
		case 3: // MPI_Waitsome
			while (done < N) {
				MPI_Waitsome(N, rs, &out, ids, sts);
				for (int k = 0; k < out; k++) gotv(ids[k] * 1000 + count_of(&sts[k], MPI_INT));
				done += out;
			}
			break;
		case 4: // MPI_Test loops, in posting order
			for (int i = 0; i < N; i++) {
				flag = 0;
				while (!flag) MPI_Test(&rs[i], &flag, MPI_STATUS_IGNORE);
			}
			break;
		case 5: // MPI_Testall loop
			flag = 0;
			while (!flag) MPI_Testall(N, rs, &flag, sts);
			for (int i = 0; i < N; i++) gotv(count_of(&sts[i], MPI_INT));
			break;
		case 6: // MPI_Testany loop
			while (done < N) {
				MPI_Testany(N, rs, &idx, &flag, MPI_STATUS_IGNORE);
				if (flag && idx != MPI_UNDEFINED) { gotv(idx); done++; }
			}
			break;
		case 7: // MPI_Testsome loop
			while (done < N) {
				MPI_Testsome(N, rs, &out, ids, MPI_STATUSES_IGNORE);
				if (out != MPI_UNDEFINED) {
					for (int k = 0; k < out; k++) gotv(ids[k]);
					done += out;
				}
			}
			break;
		}
		take();
	}
	// And the other way: rank 0 sends, the others receive with a Test loop.
	if (rank == 0) {
		double d[2][8];
		MPI_Request s[2];
		for (int p = 1; p <= 2; p++) {
			fill_double(d[p - 1], 8, p);
			MPI_Isend(d[p - 1], 8, MPI_DOUBLE, p, 50, MPI_COMM_WORLD, &s[p - 1]);
		}
		MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
	} else if (rank <= 2) {
		double d[16] = {0};
		MPI_Request r;
		int flag = 0;
		MPI_Irecv(d, 16, MPI_DOUBLE, 0, 50, MPI_COMM_WORLD, &r);
		while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
		got(d, sizeof d);
	}
	return end("ok_nonblocking");
}
