// Correct: messages from one source with one tag that complete out of
// order. Rank 0 sends a large message (4 MiB of doubles) and then a small
// one (three ints), both with tag 5, as non-blocking sends; rank 1 posts
// two receives and completes the small one first, in several ways. The
// library must pair each header with its own message.
#include "suite.h"

#define BIG (4 << 20) / 8

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	double *big = malloc(BIG * sizeof *big);
	int small[3];
	const int rounds = 5;
	for (int round = 0; round < rounds; round++) {
		if (rank == 0) {
			MPI_Request rs[2];
			fill_double(big, BIG, round);
			fill_int(small, 3, round);
			MPI_Isend(big, BIG, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, &rs[0]);
			MPI_Isend(small, 3, MPI_INT, 1, 5, MPI_COMM_WORLD, &rs[1]);
			MPI_Waitall(2, rs, MPI_STATUSES_IGNORE);
		} else if (rank == 1) {
			MPI_Request rs[2];
			MPI_Status st;
			int flag = 0, idx;
			memset(small, 0, sizeof small);
			MPI_Irecv(big, BIG, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &rs[0]);
			if (round == 4) {
				// The small one by a blocking receive while the large is pending.
				MPI_Recv(small, 3, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
				MPI_Wait(&rs[0], &st);
			} else {
				MPI_Irecv(small, 3, MPI_INT, 0, 5, MPI_COMM_WORLD, &rs[1]);
				switch (round) {
				case 0: // MPI_Wait, the later receive first
					MPI_Wait(&rs[1], &st);
					MPI_Wait(&rs[0], &st);
					break;
				case 1: { // MPI_Waitall over the two in reverse order
					MPI_Request rev[2] = {rs[1], rs[0]};
					MPI_Waitall(2, rev, MPI_STATUSES_IGNORE);
					break;
				}
				case 2: // MPI_Test loop on the small one, then MPI_Waitany
					while (!flag) MPI_Test(&rs[1], &flag, &st);
					MPI_Waitany(2, rs, &idx, &st);
					break;
				case 3: { // MPI_Waitsome until both are done
					int out, ids[2], done = 0;
					while (done < 2) {
						MPI_Waitsome(2, rs, &out, ids, MPI_STATUSES_IGNORE);
						done += out;
					}
					break;
				}
				}
			}
			got(small, sizeof small);
			got(big, BIG * sizeof *big);
		}
	}
	free(big);
	return end("ok_out_of_order");
}
