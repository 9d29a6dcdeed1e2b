// MPI_Allgather of many sizes, datatypes and communicators, each result
// checked against what every rank sent; rank 0 prints how many it ran, a
// hash of everything received and how many blocks were wrong. Run with
// and without SIGCHECK_ENCRYPT=1, the output must be the same. One
// communicator per algorithm asks for it with the MPI_Info hint
// sigcheck_encrypt_alg, so that one run goes through all eight.
#include "suite.h"

static long wrong;

static unsigned char byte_of(int r, int i, int salt) { return (unsigned char)(r * 31 + i * 7 + salt); }

// bytes: count MPI_BYTEs a rank, by copy or in place.
static void bytes(MPI_Comm c, int count, int inplace, int salt) {
	int me, p;
	MPI_Comm_rank(c, &me);
	MPI_Comm_size(c, &p);
	unsigned char *s = malloc((size_t)count + 1), *r = malloc((size_t)count * (size_t)p + 1);
	for (int i = 0; i < count; i++) s[i] = byte_of(me, i, salt);
	memset(r, 0xEE, (size_t)count * (size_t)p);
	if (inplace) {
		memcpy(r + (size_t)me * (size_t)count, s, (size_t)count);
		MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, count, MPI_BYTE, c);
	} else {
		MPI_Allgather(s, count, MPI_BYTE, r, count, MPI_BYTE, c);
	}
	for (int j = 0; j < p; j++)
		for (int i = 0; i < count; i++)
			if (r[(size_t)j * (size_t)count + (size_t)i] != byte_of(j, i, salt)) { wrong++; break; }
	got(r, (size_t)count * (size_t)p);
	free(s);
	free(r);
}

// ints: a vector of every other int sent, received as plain ints (the
// send side packed); a struct with padding both ways (both packed).
static void typed(MPI_Comm c, int n, int salt) {
	int me, p;
	MPI_Comm_rank(c, &me);
	MPI_Comm_size(c, &p);
	MPI_Datatype vec = commit(({ MPI_Datatype t; MPI_Type_vector(n, 1, 2, MPI_INT, &t); t; }));
	int *s = malloc(sizeof(int) * 2 * (size_t)n), *r = malloc(sizeof(int) * (size_t)n * (size_t)p);
	for (int i = 0; i < 2 * n; i++) s[i] = i % 2 ? -1 : me * 100000 + i / 2 + salt;
	MPI_Allgather(s, 1, vec, r, n, MPI_INT, c);
	for (int j = 0; j < p; j++)
		for (int i = 0; i < n; i++)
			if (r[j * n + i] != j * 100000 + i + salt) { wrong++; break; }
	got(r, sizeof(int) * (size_t)n * (size_t)p);
	MPI_Type_free(&vec);
	free(s);
	free(r);

	struct pair { double d; int i; };
	int bl[2] = {1, 1};
	MPI_Aint disp[2] = {offsetof(struct pair, d), offsetof(struct pair, i)};
	MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT}, st;
	MPI_Type_create_struct(2, bl, disp, ty, &st);
	MPI_Datatype pt;
	MPI_Type_create_resized(st, 0, sizeof(struct pair), &pt);
	MPI_Type_commit(&pt);
	struct pair *ps = calloc((size_t)n, sizeof *ps), *pr = calloc((size_t)n * (size_t)p, sizeof *pr);
	for (int i = 0; i < n; i++) ps[i] = (struct pair){me + 0.5 * i, me * 7 + i + salt};
	MPI_Allgather(ps, n, pt, pr, n, pt, c);
	long h = 0;
	for (int j = 0; j < p; j++)
		for (int i = 0; i < n; i++) {
			struct pair want = {j + 0.5 * i, j * 7 + i + salt};
			if (pr[j * n + i].d != want.d || pr[j * n + i].i != want.i) { wrong++; break; }
			h = h * 31 + pr[j * n + i].i + (long)(pr[j * n + i].d * 2);
		}
	gotv(h);
	MPI_Type_free(&pt);
	MPI_Type_free(&st);
	free(ps);
	free(pr);
}

static int runs;

static void all_sizes(MPI_Comm c, int salt) {
	static const int sizes[] = {1, 3, 64, 1000, 9000, 70000};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		bytes(c, sizes[k], 0, salt + (int)k);
		bytes(c, sizes[k], 1, salt + (int)k + 1);
		runs += 2;
	}
	typed(c, 5, salt);
	typed(c, 3000, salt + 1);
	runs += 4;
}

int main(int argc, char **argv) {
	begin(&argc, &argv, 2);
	static const char *algs[] = {"auto", "naive", "o-ring", "o-rd", "o-rd2", "c-ring", "c-rd", "hs1", "hs2"};
	all_sizes(MPI_COMM_WORLD, 1);
	for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
		MPI_Info info;
		MPI_Comm c;
		MPI_Info_create(&info);
		MPI_Info_set(info, "sigcheck_encrypt_alg", algs[a]);
		MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
		MPI_Info_free(&info);
		bytes(c, 1, 0, 2);
		bytes(c, 500, 1, 3);
		bytes(c, 20000, 0, 4);
		typed(c, 40, 5);
		runs += 5;
		MPI_Comm_free(&c);
	}
	// Other communicators: every other rank, in reverse order; the first
	// half (one node under SIGCHECK_NODES=2's block order).
	MPI_Comm odd, half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &odd);
	MPI_Comm_split(MPI_COMM_WORLD, rank < nprocs / 2, rank, &half);
	all_sizes(odd, 7);
	all_sizes(half, 9);
	MPI_Comm_free(&odd);
	MPI_Comm_free(&half);

	long total = 0;
	MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	uint64_t all = 0;
	MPI_Reduce(&acc, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) printf("%d all-gathers on %d ranks: hash %016llx, %ld wrong blocks\n", runs, nprocs, (unsigned long long)all, total);
	MPI_Finalize();
	return 0;
}
