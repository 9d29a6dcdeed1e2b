// Shared by the suite's C programs (suite_test.go): start-up, a hash of
// what each rank received, and the one line rank 0 prints at the end, so
// that comparing standard output with and without the library means
// something. Every program exits 0 by itself.
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

// acc sums a hash of every message a rank looked at: a sum, so that the
// order in which wildcard receives are matched does not change it.
static uint64_t acc;

static inline void begin(int *argc, char ***argv, int need) {
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (nprocs < need) {
		if (rank == 0) fprintf(stderr, "this program needs %d ranks\n", need);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
}

static inline void got(const void *p, size_t n) {
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
	acc += h;
}

static inline void gotv(long long v) { got(&v, sizeof v); }

// count_of is the number of dt elements a status says arrived.
static inline int count_of(MPI_Status *st, MPI_Datatype dt) {
	int n = -1;
	MPI_Get_count(st, dt, &n);
	return n;
}

static inline void fill_int(int *a, int n, int seed) {
	for (int i = 0; i < n; i++) a[i] = seed * 1000 + i;
}

static inline void fill_double(double *a, int n, int seed) {
	for (int i = 0; i < n; i++) a[i] = seed + 0.5 * i;
}

static inline void fill_float(float *a, int n, int seed) {
	for (int i = 0; i < n; i++) a[i] = (float)seed + 0.25f * (float)i;
}

static inline MPI_Datatype commit(MPI_Datatype t) {
	MPI_Type_commit(&t);
	return t;
}

// struct_of makes a struct datatype of n blocks of one element each.
static inline MPI_Datatype struct_of(int n, const MPI_Aint *disps, const MPI_Datatype *types) {
	int lens[16];
	for (int i = 0; i < n; i++) lens[i] = 1;
	MPI_Datatype t;
	MPI_Type_create_struct(n, lens, disps, types, &t);
	return commit(t);
}

// blocks makes a struct datatype of two runs: n1 of t1 at 0, then n2 of
// t2 right after them.
static inline MPI_Datatype blocks(int n1, MPI_Datatype t1, int n2, MPI_Datatype t2) {
	int size1;
	MPI_Type_size(t1, &size1);
	int lens[2] = {n1, n2};
	MPI_Aint disps[2] = {0, (MPI_Aint)n1 * size1};
	MPI_Datatype types[2] = {t1, t2}, t;
	MPI_Type_create_struct(2, lens, disps, types, &t);
	return commit(t);
}

static inline int end(const char *name) {
	unsigned long long total = 0, mine = acc;
	MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) printf("%s %016llx\n", name, total);
	MPI_Finalize();
	return 0;
}
