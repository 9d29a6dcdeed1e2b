// Correct: derived datatypes made, used and freed again and again, so that
// MPI hands out the handles of freed datatypes to new ones of other
// shapes; and communicators duplicated and freed likewise.
#include "suite.h"

static MPI_Datatype make(int kind) {
	MPI_Datatype t;
	MPI_Aint disps[3];
	MPI_Datatype types[3];
	switch (kind) {
	case 0: // int, double
		disps[0] = 0; disps[1] = 8; types[0] = MPI_INT; types[1] = MPI_DOUBLE;
		return struct_of(2, disps, types);
	case 1: // double, int, int (a double and one int is ok_struct_padding.c)
		disps[0] = 0; disps[1] = 8; disps[2] = 12; types[0] = MPI_DOUBLE; types[1] = MPI_INT; types[2] = MPI_INT;
		return struct_of(3, disps, types);
	case 2: // three floats, strided
		MPI_Type_vector(3, 1, 2, MPI_FLOAT, &t);
		return commit(t);
	default: // four shorts
		MPI_Type_contiguous(4, MPI_SHORT, &t);
		return commit(t);
	}
}

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	char buf[512];
	for (int it = 0; it < 16; it++) {
		int kind = (it * 3 + it / 4) % 4;
		MPI_Datatype t = make(kind);
		// A second one, freed before the first is used: its handle is the
		// next to be reused.
		MPI_Datatype other = make((kind + 1) % 4);
		MPI_Type_free(&other);
		MPI_Comm c;
		MPI_Comm_dup(MPI_COMM_WORLD, &c);
		if (rank == 0) {
			for (int i = 0; i < (int)sizeof buf; i++) buf[i] = (char)(i + it);
			MPI_Send(buf, 4, t, 1, it, c);
		} else if (rank == 1) {
			MPI_Status st;
			memset(buf, 0, sizeof buf);
			MPI_Recv(buf, 5, t, 0, it, c, &st);
			got(buf, sizeof buf);
			gotv(count_of(&st, t));
		}
		MPI_Type_free(&t);
		MPI_Comm_free(&c);
	}
	return end("ok_handles");
}
