// Correct: a message of count 0 sent from a NULL buffer, as MPI allows
// (and as programs do for empty parts), received with a count of three.
// Found by the suite: in checksum mode the library hashes nothing on the
// sender's side when the buffer is NULL and reports the message corrupt.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	int a[3] = {0};
	for (int tag = 0; tag < 2; tag++) {
		MPI_Datatype dt = tag ? MPI_INT : MPI_BYTE;
		if (rank == 0) MPI_Send(NULL, 0, dt, 1, tag, MPI_COMM_WORLD);
		else if (rank == 1) {
			MPI_Status st;
			MPI_Recv(a, 3, dt, 0, tag, MPI_COMM_WORLD, &st);
			gotv(count_of(&st, dt));
		}
	}
	return end("ok_count0_null");
}
