/* osu_bw's method in a few lines, for comparing sigcheck run bw against
 * MPI itself on the same machine: rank 0 posts a window of MPI_Isend of
 * SIZE bytes, rank 1 a window of MPI_Irecv and a zero-byte ack after each
 * window; warm-up windows, then timed ones; MB/s = 10^6 bytes/s. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) { if (!rank) fprintf(stderr, "bw: 2 ranks\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    long min = argc > 1 ? atol(argv[1]) : 1, max = argc > 2 ? atol(argv[2]) : 4 << 20;
    enum { WINDOW = 64 };
    char *buf = malloc(max * WINDOW);
    memset(buf, 'a', max * WINDOW);
    MPI_Request req[WINDOW];
    if (!rank) printf("# Size      Bandwidth (MB/s)\n");
    for (long n = min; n <= max; n *= 2) {
        int w = n > (16 << 20) / WINDOW ? ((16 << 20) / n > 0 ? (int)((16 << 20) / n) : 1) : WINDOW;
        int warm = n <= 8192 ? 10 : 2, iters = n <= 8192 ? 100 : 20;
        double t0 = 0;
        for (int k = 0; k < warm + iters; k++) {
            if (k == warm) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
            if (!rank) {
                for (int i = 0; i < w; i++) MPI_Isend(buf + i * n, (int)n, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[i]);
                MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
                MPI_Recv(NULL, 0, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int i = 0; i < w; i++) MPI_Irecv(buf + i * n, (int)n, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[i]);
                MPI_Waitall(w, req, MPI_STATUSES_IGNORE);
                MPI_Send(NULL, 0, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (!rank) printf("%-10ld%18.2f\n", n, (double)n * w * iters / t / 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
