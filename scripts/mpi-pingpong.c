// mpi-pingpong: the C Open MPI baseline of scripts/mpi-bench.sh, what
// sigcheck's MPI transport is measured against: osu_latency's ping-pong
// (one-way µs, half the round trip), osu_bw's windows of non-blocking
// sends (MB/s, 10^6 bytes a second) and osu_mbw_mr's message rate for one
// pair (the same windows, many more of them: millions of messages a
// second), between ranks 0 and 1, one line a size in the format of
// cmd/sigcheck/osu's rows.
//
//	mpicc -O2 -o mpi-pingpong scripts/mpi-pingpong.c
//	mpirun -np 2 ./mpi-pingpong latency 1 64 65536
//	mpirun -np 2 ./mpi-pingpong bw 65536 1048576
//	mpirun -np 2 ./mpi-pingpong rate 1
//
// With MPI_PINGPONG_THREAD=serialized in the ranks' environment (mpirun
// -x), MPI is initialized at MPI_THREAD_SERIALIZED, the level a Go
// program needs (its goroutines move between threads), and the rows say
// c-ser: Open MPI then takes its locks on every call.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WINDOW = 64 };

static int iters_for(long size, int bw, int rate) {
	if (rate) {
		return 2000;
	}
	if (bw) {
		return size <= 8192 ? 100 : size >= (4L << 20) ? 10 : 20;
	}
	return size <= 8192 ? 10000 : size >= (1L << 20) ? 100 : 1000;
}

int main(int argc, char **argv) {
	const char *thread = getenv("MPI_PINGPONG_THREAD");
	const char *impl = "c";
	if (thread != NULL && strcmp(thread, "serialized") == 0) {
		int provided;
		MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
		impl = "c-ser";
	} else {
		MPI_Init(&argc, &argv);
	}
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 3 || size < 2 || (strcmp(argv[1], "latency") && strcmp(argv[1], "bw") && strcmp(argv[1], "rate"))) {
		if (rank == 0) {
			fprintf(stderr, "usage: mpirun -np 2 %s latency|bw|rate SIZE...\n", argv[0]);
		}
		MPI_Finalize();
		return 2;
	}
	int rate = strcmp(argv[1], "rate") == 0;
	int bw = rate || strcmp(argv[1], "bw") == 0;
	for (int a = 2; a < argc; a++) {
		long n = atol(argv[a]);
		int window = bw ? (n * WINDOW > (16L << 20) ? (int)((16L << 20) / n) : WINDOW) : 1;
		if (window < 2 && bw) {
			window = 2;
		}
		char *buf = malloc(n * window + 1);
		memset(buf, rank + 1, n * window + 1);
		MPI_Request req[WINDOW];
		int iters = iters_for(n, bw, rate), warm = iters / 10;
		double t0 = 0;
		for (int i = 0; i < warm + iters; i++) {
			if (i == warm) {
				MPI_Barrier(MPI_COMM_WORLD);
				t0 = MPI_Wtime();
			}
			if (rank > 1) {
				continue;
			}
			if (!bw) {
				if (rank == 0) {
					MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
					MPI_Recv(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					MPI_Send(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
				}
				continue;
			}
			for (int w = 0; w < window; w++) {
				if (rank == 0) {
					MPI_Isend(buf + w * n, n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[w]);
				} else {
					MPI_Irecv(buf + w * n, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[w]);
				}
			}
			MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
			if (rank == 0) {
				MPI_Recv(buf, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Send(buf, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
			}
		}
		double t = MPI_Wtime() - t0;
		if (rank == 0) {
			if (rate) {
				printf("%-9s %-4s %-8s %10ld %12.3f %-4s\n", "rate", impl, "none", n, (double)window * iters / t / 1e6, "Mmsg/s");
			} else if (bw) {
				printf("%-9s %-4s %-8s %10ld %12.2f %-4s\n", "bw", impl, "none", n, (double)n * window * iters / t / 1e6, "MB/s");
			} else {
				printf("%-9s %-4s %-8s %10ld %12.2f %-4s\n", "latency", impl, "none", n, t / iters / 2 * 1e6, "us");
			}
			fflush(stdout);
		}
		free(buf);
	}
	MPI_Finalize();
	return 0;
}
