//go:build mpi

// Descriptions: the receiver of a mismatched message needs the sender's
// datatype to say where the two differ. A sender sends each derived
// datatype's description once to each world rank it sends that datatype
// to, before the first header that names it, on our duplicate of
// MPI_COMM_WORLD, and every header says how many descriptions its sender
// has sent to its receiver (desc_total). The receiver reads them as
// headers announce them, into a cache of the newest SC_GOT_MAX, so that
// none waits unread in MPI: a program that makes and frees datatypes by
// the million holds a bounded amount. Predefined datatypes need none:
// their ids are the same in every process.
#include <stdlib.h>
#include <string.h>
#include "sc.h"
#include "_cgo_export.h"

#define SC_TAG_DESC 1
#define SC_DESC_MAX (64 * 1024)
#define SC_FIRST_DERIVED (1u << 12)
#define SC_GOT_MAX 256

static struct out { MPI_Request req; char *buf; } *outs;
static size_t noutcap, nout;
static uint32_t *sent_to;   // per world rank: descriptions sent there
static uint32_t *read_from; // per world rank: descriptions read from there

// The newest descriptions read, a FIFO ring.
static struct got { int world; uint32_t id; char *text; int len; } gots[SC_GOT_MAX];
static size_t gotnext, ngot;

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

// scratch holds a description while it is written, so that the buffer
// that travels is only as long as the description. Lock held.
static char scratch[SC_DESC_MAX];

static void post(int w, uint32_t id) {
	int n = scGoDescribe(id, scratch, SC_DESC_MAX);
	if (n < 0) n = 0; // too long to carry: the report says so
	char *buf = malloc(4 + (size_t)n);
	if (!buf) return;
	memcpy(buf, &id, 4);
	memcpy(buf + 4, scratch, (size_t)n);
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

// sc_desc_send sends t's description to world rank w unless it was sent
// there before (a bitmap of destinations per datatype, freed with it).
// Lock held.
void sc_desc_send(int w, sc_type *t) {
	if (w < 0 || w >= sc_world_size || !t || t->id < SC_FIRST_DERIVED || !sent_to) return;
	if (!t->sentmap) {
		t->sentmap = calloc(((size_t)sc_world_size + 7) / 8, 1);
		if (!t->sentmap) return;
	}
	if (t->sentmap[w / 8] & (1u << (w % 8))) return;
	t->sentmap[w / 8] |= (unsigned char)(1u << (w % 8));
	post(w, t->id);
}

// sc_desc_send_again sends the description of id to w even if it went
// there before, which may be evicted from w's cache: for a collective's
// mismatch, whose receiver waits for this very message. Lock held.
void sc_desc_send_again(int w, uint32_t id) {
	if (w < 0 || w >= sc_world_size || id < SC_FIRST_DERIVED || !sent_to) return;
	post(w, id);
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
	struct got *g = &gots[gotnext];
	if (ngot == SC_GOT_MAX) free(g->text - 4);
	else ngot++;
	memcpy(&g->id, buf, 4);
	g->world = w;
	g->text = buf + 4;
	g->len = n - 4;
	gotnext = (gotnext + 1) % SC_GOT_MAX;
	return 0;
}

static struct got *cached(int w, uint32_t id) {
	for (size_t i = 0; i < ngot; i++)
		if (gots[i].world == w && gots[i].id == id) return &gots[i];
	return NULL;
}

// sc_desc_catch_up reads what world rank w announced in a header: total
// descriptions sent here, all of them before that header. Lock held.
void sc_desc_catch_up(int w, uint32_t total) {
	if (w < 0 || w >= sc_world_size || !read_from) return;
	while ((int32_t)(total - read_from[w]) > 0)
		if (read_one(w) != 0) return;
}

// sc_desc_get finds world rank w's description of its datatype id among
// those read (a point-to-point header's were read when it came). With
// wait, for a collective's mismatch, it reads on until it comes. Returns
// the length, or -1 when there is none.
int sc_desc_get(int w, uint32_t id, const char **text, int wait) {
	*text = NULL;
	if (w < 0 || w >= sc_world_size || id < SC_FIRST_DERIVED || !read_from) return -1;
	for (;;) {
		struct got *g = cached(w, id);
		if (g) { *text = g->text; return g->len; }
		if (!wait || read_one(w) != 0) return -1;
	}
}

uint32_t sc_desc_sent_to(int w) {
	return sent_to && w >= 0 && w < sc_world_size ? sent_to[w] : 0;
}

void sc_desc_init(void) {
	sent_to = calloc((size_t)sc_world_size, sizeof *sent_to);
	read_from = calloc((size_t)sc_world_size, sizeof *read_from);
}

// sc_desc_finalize reads every description still unread and waits for
// this process's own sends, so that MPI_Finalize finds nothing pending.
// It is collective over MPI_COMM_WORLD.
int sc_desc_finalize(void) {
	if (!sent_to || !read_from) return 0;
	uint32_t *want = calloc((size_t)sc_world_size, sizeof *want);
	if (!want) return -1;
	PMPI_Alltoall(sent_to, 1, MPI_UINT32_T, want, 1, MPI_UINT32_T, sc_world);
	for (int w = 0; w < sc_world_size; w++) sc_desc_catch_up(w, want[w]);
	for (size_t i = 0; i < nout; i++) {
		PMPI_Wait(&outs[i].req, MPI_STATUS_IGNORE);
		free(outs[i].buf);
	}
	nout = 0;
	free(want);
	return 0;
}
