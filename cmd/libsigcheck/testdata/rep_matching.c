/* Correct program, 2 ranks, whose answers depend on how MPI matched:
   1. a wildcard receive whose (long) message is still in transfer when a
      later exact receive of the same source and tag completes: by MPI's
      non-overtaking rule the wildcard holds the first message;
   2. a probe of one source (any tag) while a wildcard receive and an
      exact one are pending: it sees the message those did not take;
   3. a receive cancelled at once: whatever MPI decides, the program
      receives each message once.
   Its output is the same in every run, with or without replication. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int n = argc > 1 ? atoi(argv[1]) : 4 << 20;
	char *a = malloc((size_t)n), *b = malloc((size_t)n);
	for (int it = 0; it < 3; it++) {
		if (rank == 1) {
			memset(a, 'A', (size_t)n);
			memset(b, 'B', 16);
			MPI_Request rq[2];
			MPI_Isend(a, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &rq[0]);
			MPI_Isend(b, 16, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &rq[1]);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		} else if (rank == 0) {
			MPI_Request ra, rb;
			MPI_Status sa, sb;
			int ca, cb;
			/* the last time with MPI_ANY_TAG: it could match any message */
			MPI_Irecv(a, n, MPI_CHAR, MPI_ANY_SOURCE, it == 2 ? MPI_ANY_TAG : 1, MPI_COMM_WORLD, &ra);
			MPI_Irecv(b, 16, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &rb);
			MPI_Wait(&rb, &sb);
			MPI_Wait(&ra, &sa);
			MPI_Get_count(&sa, MPI_CHAR, &ca);
			MPI_Get_count(&sb, MPI_CHAR, &cb);
			printf("in transfer %d: wildcard got %d of %c, exact %d of %c\n", it, ca, a[0], cb, b[0]);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	/* 2: probes of one source behind a wildcard */
	for (int kind = 0; kind < 3; kind++) {
		if (rank == 1) {
			int v1 = 11, v2 = 22, v3 = 33, go;
			MPI_Send(&v2, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
			MPI_Send(&v3, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
			MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(&v1, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
		} else if (rank == 0) {
			int x = -1, y = -1, z = -1, f = 0, go = 1;
			MPI_Request rq[2];
			MPI_Status st;
			MPI_Message m;
			MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &rq[0]);
			MPI_Irecv(&y, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &rq[1]);
			if (kind == 0) {
				MPI_Probe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
				MPI_Recv(&z, 1, MPI_INT, 1, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (kind == 1) {
				while (!f) MPI_Iprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &f, &st);
				MPI_Recv(&z, 1, MPI_INT, 1, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Mprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
				MPI_Mrecv(&z, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
			}
			MPI_Send(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
			printf("probe %d: tag %d; got %d %d %d\n", kind, st.MPI_TAG, x, y, z);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	/* 3: cancel, with the message arriving about then: MPI's progress in
	   MPI_Iprobe matches it or not, so each cancel can go either way */
	long total = 0;
	for (int it = 0; it < 300; it++) {
		int v = -1, c;
		MPI_Request r;
		MPI_Status st;
		if (rank == 0) MPI_Irecv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1) {
			MPI_Send(&it, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
		} else if (rank == 0) {
			int f;
			for (volatile int k = 0; k < (it % 64) * 50; k++)
				;
			MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
			MPI_Cancel(&r);
			MPI_Wait(&r, &st);
			MPI_Test_cancelled(&st, &c);
			if (c) {
				/* an answer replica 0 gives: replicas whose cancels went
				   differently part here */
				(void)MPI_Wtime();
				MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
			total += v;
		}
	}
	if (rank == 0) printf("cancel: total %ld\n", total);
	free(a);
	free(b);
	MPI_Finalize();
	return 0;
}
