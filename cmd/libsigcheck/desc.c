//go:build mpi

// Descriptions: the receiver of a mismatched message needs the sender's
// datatype to say where the two differ. A sender sends each derived
// datatype's description once to each world rank it sends that datatype
// to, before the first header that names it, on our duplicate of
// MPI_COMM_WORLD; the receiver reads them only when it has a mismatch to
// report. Predefined datatypes need none: their ids are the same in every
// process. MPI_Finalize drains what was never read, so that no send is
// left pending.
#include <stdlib.h>
#include <string.h>
#include "sc.h"
#include "_cgo_export.h"

#define SC_TAG_DESC 1
#define SC_DESC_MAX (64 * 1024)
#define SC_FIRST_DERIVED (1u << 12)

typedef struct { int world; uint32_t id; } sent_key;

// What this process sent: a set of (world rank, id), and the pending sends.
static sent_key *sent;
static size_t sentcap, sentlen;
static struct out { MPI_Request req; char *buf; } *outs;
static size_t noutcap, nout;
static int *sent_to; // per world rank: descriptions sent there
static int *read_from; // per world rank: descriptions read from there

// What this process read: descriptions by (world rank, id).
static struct got { int world; uint32_t id; char *text; int len; } *gots;
static size_t ngot, ngotcap;

static size_t slot_of(int w, uint32_t id, size_t cap) {
	uint64_t x = ((uint64_t)(uint32_t)w << 32 | id) * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 20) & (cap - 1);
}

static int sent_has_or_add(int w, uint32_t id) {
	if ((sentlen + 1) * 2 > sentcap) {
		size_t ncap = sentcap ? sentcap * 2 : 256;
		sent_key *n = malloc(ncap * sizeof *n);
		if (!n) return 1;
		for (size_t i = 0; i < ncap; i++) n[i].id = 0;
		for (size_t i = 0; i < sentcap; i++) {
			if (!sent[i].id) continue;
			size_t j = slot_of(sent[i].world, sent[i].id, ncap);
			while (n[j].id) j = (j + 1) & (ncap - 1);
			n[j] = sent[i];
		}
		free(sent);
		sent = n;
		sentcap = ncap;
	}
	size_t j = slot_of(w, id, sentcap);
	while (sent[j].id) {
		if (sent[j].world == w && sent[j].id == id) return 1;
		j = (j + 1) & (sentcap - 1);
	}
	sent[j].world = w;
	sent[j].id = id;
	sentlen++;
	return 0;
}

// Completed sends are reaped as new ones go out, so the list stays short.
static void reap(void) {
	size_t k = 0;
	for (size_t i = 0; i < nout; i++) {
		int done = 0;
		PMPI_Test(&outs[i].req, &done, MPI_STATUS_IGNORE);
		if (done) free(outs[i].buf);
		else outs[k++] = outs[i];
	}
	nout = k;
}

// sc_desc_send sends t's description to world rank w unless it was sent
// there before. Call with the lock held.
void sc_desc_send(int w, uint32_t id) {
	if (w < 0 || w >= sc_world_size || id < SC_FIRST_DERIVED || !sent_to) return;
	if (sent_has_or_add(w, id)) return;
	char *buf = malloc(4 + SC_DESC_MAX);
	if (!buf) return;
	memcpy(buf, &id, 4);
	int n = scGoDescribe(id, buf + 4, SC_DESC_MAX);
	if (n < 0) n = 0; // too long to carry: the report says so
	reap();
	if (nout == noutcap) {
		size_t ncap = noutcap ? noutcap * 2 : 16;
		struct out *o = realloc(outs, ncap * sizeof *o);
		if (!o) { free(buf); return; }
		outs = o;
		noutcap = ncap;
	}
	if (PMPI_Isend(buf, 4 + n, MPI_BYTE, w, SC_TAG_DESC, sc_world, &outs[nout].req) != MPI_SUCCESS) {
		free(buf);
		return;
	}
	outs[nout++].buf = buf;
	sent_to[w]++;
}

static int read_one(int w) {
	MPI_Status st;
	int n;
	if (PMPI_Probe(w, SC_TAG_DESC, sc_world, &st) != MPI_SUCCESS) return -1;
	PMPI_Get_count(&st, MPI_BYTE, &n);
	char *buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf) return -1;
	PMPI_Recv(buf, n, MPI_BYTE, w, SC_TAG_DESC, sc_world, MPI_STATUS_IGNORE);
	read_from[w]++;
	if (n < 4) { free(buf); return 0; }
	if (ngot == ngotcap) {
		size_t ncap = ngotcap ? ngotcap * 2 : 16;
		struct got *g = realloc(gots, ncap * sizeof *g);
		if (!g) { free(buf); return -1; }
		gots = g;
		ngotcap = ncap;
	}
	uint32_t id;
	memcpy(&id, buf, 4);
	gots[ngot].world = w;
	gots[ngot].id = id;
	gots[ngot].text = buf + 4;
	gots[ngot].len = n - 4;
	ngot++;
	return 0;
}

// sc_desc_get finds world rank w's description of its datatype id, reading
// what w sent until it comes. w sent it before the header that named it,
// so it is there or on its way. Returns the length, or -1.
int sc_desc_get(int w, uint32_t id, const char **text) {
	*text = NULL;
	if (w < 0 || id < SC_FIRST_DERIVED || !read_from || w >= sc_world_size) return -1;
	for (;;) {
		for (size_t i = 0; i < ngot; i++)
			if (gots[i].world == w && gots[i].id == id) { *text = gots[i].text; return gots[i].len; }
		if (read_one(w) != 0) return -1;
	}
}

void sc_desc_init(void) {
	sent_to = calloc((size_t)sc_world_size, sizeof(int));
	read_from = calloc((size_t)sc_world_size, sizeof(int));
}

// sc_desc_finalize reads every description still unread and waits for
// this process's own sends, so that MPI_Finalize finds nothing pending.
// It is collective over MPI_COMM_WORLD.
int sc_desc_finalize(void) {
	if (!sent_to || !read_from) return 0;
	int *want = calloc((size_t)sc_world_size, sizeof(int));
	if (!want) return -1;
	PMPI_Alltoall(sent_to, 1, MPI_INT, want, 1, MPI_INT, sc_world);
	for (int w = 0; w < sc_world_size; w++)
		while (read_from[w] < want[w])
			if (read_one(w) != 0) break;
	for (size_t i = 0; i < nout; i++) {
		PMPI_Wait(&outs[i].req, MPI_STATUS_IGNORE);
		free(outs[i].buf);
	}
	nout = 0;
	free(want);
	return 0;
}
