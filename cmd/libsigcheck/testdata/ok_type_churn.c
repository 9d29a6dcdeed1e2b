/* Datatypes made, used once and freed, tens of thousands of times: what
 * the library keeps per datatype must go with it, on both sides. Each rank
 * prints how much its resident memory grew over the second half. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static long rss_kb(void) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
	if (f) fclose(f);
	return kb;
}
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 40000;
	int a[4] = {1, 2, 3, 4}, b[4];
	long half = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		if (i == n / 2) half = rss_kb();
		MPI_Datatype t;
		MPI_Type_contiguous(2, MPI_INT, &t);
		MPI_Type_commit(&t);
		if (rank == 0) MPI_Send(a, 2, t, 1, 0, MPI_COMM_WORLD);
		else { MPI_Recv(b, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); sum += b[0] + b[3]; }
		MPI_Type_free(&t);
	}
	long grew = rss_kb() - half;
	long grows[2];
	MPI_Gather(&grew, 1, MPI_LONG, grows, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	if (rank == 0) printf("%ld %ld\n", grows[0], grows[1]);
	MPI_Finalize();
	return 0;
}
