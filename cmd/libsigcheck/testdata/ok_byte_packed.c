// Correct: MPI_BYTE and MPI_PACKED, matched by size: typed data received
// as bytes and bytes as typed data, bytes as bytes with a longer receive,
// MPI_Pack'd data received as MPI_PACKED and as the datatype it packs,
// typed data received as MPI_PACKED and unpacked, and a broadcast of
// bytes.
#include "suite.h"

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	int a[16];
	double d[8];
	unsigned char bytes[256];
	char pk[256];
	MPI_Status st;
	MPI_Datatype ints_doubles = blocks(2, MPI_INT, 2, MPI_DOUBLE);
	if (rank == 0) {
		fill_int(a, 6, 1);
		MPI_Send(a, 6, MPI_INT, 1, 1, MPI_COMM_WORLD); // received as bytes
		fill_double(d, 4, 2);
		MPI_Send(d, 4 * sizeof(double), MPI_BYTE, 1, 2, MPI_COMM_WORLD); // received as doubles
		for (int i = 0; i < 10; i++) bytes[i] = (unsigned char)(i * 7);
		MPI_Send(bytes, 10, MPI_BYTE, 1, 3, MPI_COMM_WORLD); // received as 100 bytes
		int pos = 0, n = 3;
		fill_double(d, 3, 3);
		MPI_Pack(&n, 1, MPI_INT, pk, sizeof pk, &pos, MPI_COMM_WORLD);
		MPI_Pack(d, 3, MPI_DOUBLE, pk, sizeof pk, &pos, MPI_COMM_WORLD);
		MPI_Send(pk, pos, MPI_PACKED, 1, 4, MPI_COMM_WORLD); // received as packed
		pos = 0;
		fill_int(a, 2, 4);
		fill_double(d, 2, 4);
		MPI_Pack(a, 2, MPI_INT, pk, sizeof pk, &pos, MPI_COMM_WORLD);
		MPI_Pack(d, 2, MPI_DOUBLE, pk, sizeof pk, &pos, MPI_COMM_WORLD);
		MPI_Send(pk, pos, MPI_PACKED, 1, 5, MPI_COMM_WORLD); // received as 2 int, 2 double
		fill_int(a, 5, 5);
		MPI_Send(a, 5, MPI_INT, 1, 6, MPI_COMM_WORLD); // received as packed
		fill_int(a, 4, 6);
		MPI_Bcast(a, 4 * sizeof(int), MPI_BYTE, 0, MPI_COMM_WORLD);
	} else {
		if (rank == 1) {
			memset(bytes, 0, sizeof bytes);
			MPI_Recv(bytes, 64, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
			got(bytes, 64);
			gotv(count_of(&st, MPI_BYTE));
			memset(d, 0, sizeof d);
			MPI_Recv(d, 4, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &st);
			got(d, sizeof d);
			memset(bytes, 0, sizeof bytes);
			MPI_Recv(bytes, 100, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st);
			got(bytes, 100);
			gotv(count_of(&st, MPI_BYTE));
			MPI_Probe(0, 4, MPI_COMM_WORLD, &st);
			int size = count_of(&st, MPI_PACKED), pos = 0, n = 0;
			MPI_Recv(pk, sizeof pk, MPI_PACKED, 0, 4, MPI_COMM_WORLD, &st);
			MPI_Unpack(pk, size, &pos, &n, 1, MPI_INT, MPI_COMM_WORLD);
			MPI_Unpack(pk, size, &pos, d, n, MPI_DOUBLE, MPI_COMM_WORLD);
			gotv(n);
			got(d, n * sizeof *d);
			struct { int i[2]; double d[2]; } s;
			memset(&s, 0, sizeof s);
			MPI_Recv(&s, 1, ints_doubles, 0, 5, MPI_COMM_WORLD, &st);
			got(&s, sizeof s);
			MPI_Recv(pk, sizeof pk, MPI_PACKED, 0, 6, MPI_COMM_WORLD, &st);
			size = count_of(&st, MPI_PACKED);
			pos = 0;
			memset(a, 0, sizeof a);
			MPI_Unpack(pk, size, &pos, a, 5, MPI_INT, MPI_COMM_WORLD);
			got(a, sizeof a);
		}
		memset(a, 0, sizeof a);
		MPI_Bcast(a, 4 * sizeof(int), MPI_BYTE, 0, MPI_COMM_WORLD);
		got(a, sizeof a);
	}
	MPI_Type_free(&ints_doubles);
	return end("ok_byte_packed");
}
