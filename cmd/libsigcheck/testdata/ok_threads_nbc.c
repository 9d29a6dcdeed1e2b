/* MPI_THREAD_MULTIPLE: two non-blocking broadcasts on two communicators,
 * in two threads, rooted at different ranks, started in opposite orders:
 * a check waited for under the library's lock deadlocked. (From a review
 * of the library.) */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static int rank; static MPI_Comm A, B;
static void bc(MPI_Comm c, int root) {
	int v = rank == root ? 100 + root : -1; MPI_Request r;
	MPI_Ibcast(&v, 1, MPI_INT, root, c, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
	if (v != 100 + root) printf("wrong\n");
}
static void *t1(void *a) { (void)a; if (rank == 0) bc(A, 0); else bc(B, 1); return NULL; }
static void *t2(void *a) { (void)a; usleep(300000); if (rank == 0) bc(B, 1); else bc(A, 0); return NULL; }
int main(int argc, char **argv) {
	int p; MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &p);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_dup(MPI_COMM_WORLD, &A); MPI_Comm_dup(MPI_COMM_WORLD, &B);
	pthread_t x, y; pthread_create(&x, NULL, t1, NULL); pthread_create(&y, NULL, t2, NULL);
	pthread_join(x, NULL); pthread_join(y, NULL);
	if (rank == 0) printf("done\n");
	MPI_Comm_free(&A); MPI_Comm_free(&B);
	MPI_Finalize();
	return 0;
}
