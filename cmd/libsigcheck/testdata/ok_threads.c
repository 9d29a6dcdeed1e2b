/* MPI_THREAD_MULTIPLE: four threads per rank, each sending or receiving
 * its own tag, MPI_INT on even threads and MPI_DOUBLE on odd ones. MPI
 * hands a completed request's handle straight to another thread's
 * next receive, so the library must complete its entries by pointer.
 * (From a review of the library.) */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#define NT 4
#define N 3000
static int rank;
static void *run(void *arg) {
	int t = (int)(long)arg;
	int ib[8]; double db[8];
	for (int i = 0; i < N; i++) {
		if (rank == 0) {
			for (int k = 0; k < 8; k++) { ib[k] = i + k; db[k] = i + k; }
			if (t % 2 == 0) MPI_Send(ib, 8, MPI_INT, 1, t, MPI_COMM_WORLD);
			else MPI_Send(db, 8, MPI_DOUBLE, 1, t, MPI_COMM_WORLD);
		} else {
			if (t % 2 == 0) { MPI_Recv(ib, 8, MPI_INT, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); if (ib[7] != i + 7) { printf("bad int\n"); exit(1); } }
			else { MPI_Recv(db, 8, MPI_DOUBLE, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE); if (db[7] != i + 7) { printf("bad dbl\n"); exit(1); } }
		}
	}
	return NULL;
}
int main(int argc, char **argv) {
	int prov;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
	if (prov != MPI_THREAD_MULTIPLE) { printf("no multiple\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	pthread_t th[NT];
	for (long t = 0; t < NT; t++) pthread_create(&th[t], NULL, run, (void *)t);
	for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) printf("done\n");
	MPI_Finalize();
	return 0;
}
