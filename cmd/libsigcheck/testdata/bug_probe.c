// Bugs: probed messages received with the wrong type. Rank 0 sends four
// 16-byte messages that are not four ints; rank 1 probes each, asks
// MPI_Get_count for ints (4: the sizes agree) and receives four ints:
//
//	tag 1  MPI_Probe, MPI_Recv         int, 3 float   element 1
//	tag 2  MPI_Iprobe, MPI_Recv        2 int, 2 float element 2
//	tag 3  MPI_Mprobe, MPI_Mrecv       3 int, float   element 3
//	tag 4  MPI_Improbe, MPI_Imrecv     4 float        element 0
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	if (rank == 0) {
		int a[4];
		fill_int(a, 4, 1);
		for (int tag = 1; tag <= 4; tag++) {
			MPI_Datatype t = blocks(tag % 4, MPI_INT, 4 - tag % 4, MPI_FLOAT);
			MPI_Send(a, 1, t, 1, tag, MPI_COMM_WORLD);
			MPI_Type_free(&t);
		}
	} else if (rank == 1) {
		for (int tag = 1; tag <= 4; tag++) {
			MPI_Status st;
			MPI_Message m;
			MPI_Request r;
			int flag = 0, n;
			int b[8] = {0};
			switch (tag) {
			case 1:
				MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
				n = count_of(&st, MPI_INT);
				MPI_Recv(b, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				break;
			case 2:
				while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &flag, &st);
				n = count_of(&st, MPI_INT);
				MPI_Recv(b, n, MPI_INT, st.MPI_SOURCE, 2, MPI_COMM_WORLD, &st);
				break;
			case 3:
				MPI_Mprobe(0, 3, MPI_COMM_WORLD, &m, &st);
				n = count_of(&st, MPI_INT);
				MPI_Mrecv(b, n, MPI_INT, &m, MPI_STATUS_IGNORE);
				break;
			case 4:
				while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
				n = count_of(&st, MPI_INT);
				MPI_Imrecv(b, n, MPI_INT, &m, &r);
				MPI_Wait(&r, MPI_STATUS_IGNORE);
				break;
			}
			gotv(n);
			got(b, sizeof b);
		}
	}
	return end("bug_probe");
}
