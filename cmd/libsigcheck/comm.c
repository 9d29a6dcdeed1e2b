//go:build mpi

// Shadow communicators: every communicator the application makes gets a
// duplicate of ours, made in the same collective call, on which headers
// and collective checks travel without ever meeting the application's
// messages. It is made with MPI_Comm_split (one color, ranks in order),
// not MPI_Comm_dup, which would copy the application's attributes and run
// its copy and delete callbacks once more for every communicator.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc.h"

static sc_comm **tab;
static size_t tabcap, tablen;
static int next_id;

static size_t slot_of(void *h, size_t cap) {
	uint64_t x = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 20) & (cap - 1);
}

static sc_comm *lookup(MPI_Comm c, size_t *at) {
	if (!tabcap) { *at = 0; return NULL; }
	size_t j = slot_of(c, tabcap);
	while (tab[j]) {
		if (tab[j]->comm == c) { *at = j; return tab[j]; }
		j = (j + 1) & (tabcap - 1);
	}
	*at = j;
	return NULL;
}

static void grow(void) {
	size_t ncap = tabcap ? tabcap * 2 : 64;
	sc_comm **n = calloc(ncap, sizeof *n);
	if (!n) return;
	for (size_t i = 0; i < tabcap; i++) {
		sc_comm *e = tab[i];
		if (!e) continue;
		size_t j = slot_of(e->comm, ncap);
		while (n[j]) j = (j + 1) & (ncap - 1);
		n[j] = e;
	}
	free(tab);
	tab = n;
	tabcap = ncap;
}

// sc_shadow_of makes a communicator with c's groups and ranks and none of
// its attributes (it works on intercommunicators too).
int sc_shadow_of(MPI_Comm c, MPI_Comm *out) {
	int rank = 0;
	PMPI_Comm_rank(c, &rank);
	return PMPI_Comm_split(c, 0, rank, out);
}

sc_comm *sc_comm_get(MPI_Comm c) {
	size_t at;
	return lookup(c, &at);
}

int sc_world_of(sc_comm *c, int rank) {
	if (!c || rank < 0 || rank >= c->size || !c->world) return -1;
	return c->world[rank];
}

// sc_comm_add makes c's shadow. Every member of c calls it in the same
// collective call (the one that made c), so the duplicate is collective
// as MPI requires.
void sc_comm_add(MPI_Comm c) {
	if (c == MPI_COMM_NULL) return;
	sc_comm *e = calloc(1, sizeof *e);
	if (!e) return;
	e->comm = c;
	PMPI_Comm_test_inter(c, &e->inter);
	if (sc_shadow_of(c, &e->shadow) != MPI_SUCCESS) { free(e); return; }
	MPI_Group g, wg;
	if (e->inter) {
		PMPI_Comm_remote_size(c, &e->size);
		PMPI_Comm_remote_group(c, &g);
	} else {
		PMPI_Comm_size(c, &e->size);
		PMPI_Comm_group(c, &g);
	}
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	e->world = malloc(sizeof(int) * (size_t)e->size);
	int *ranks = malloc(sizeof(int) * (size_t)e->size);
	if (e->world && ranks) {
		for (int i = 0; i < e->size; i++) ranks[i] = i;
		PMPI_Group_translate_ranks(g, e->size, ranks, wg, e->world);
		for (int i = 0; i < e->size; i++)
			if (e->world[i] == MPI_UNDEFINED) e->world[i] = -1;
	}
	free(ranks);
	PMPI_Group_free(&g);
	PMPI_Group_free(&wg);
	SC_LOCK();
	e->id = next_id++;
	if ((tablen + 1) * 2 > tabcap) grow();
	size_t at;
	if (lookup(c, &at)) { SC_UNLOCK(); PMPI_Comm_free(&e->shadow); free(e->world); free(e); return; }
	tab[at] = e;
	tablen++;
	SC_UNLOCK();
}

// sc_comm_drop frees c's shadow; called before MPI frees c.
void sc_comm_drop(MPI_Comm c) {
	SC_LOCK();
	size_t at;
	sc_comm *e = lookup(c, &at);
	if (!e) { SC_UNLOCK(); return; }
	tab[at] = NULL;
	tablen--;
	size_t j = (at + 1) & (tabcap - 1);
	while (tab[j]) {
		sc_comm *m = tab[j];
		tab[j] = NULL;
		size_t k = slot_of(m->comm, tabcap);
		while (tab[k]) k = (k + 1) & (tabcap - 1);
		tab[k] = m;
		j = (j + 1) & (tabcap - 1);
	}
	SC_UNLOCK();
	PMPI_Comm_free(&e->shadow);
	free(e->world);
	free(e);
}

// sc_comm_name names c in reports: its MPI name if it has one, else its
// number in the order the library shadowed it.
void sc_comm_name(sc_comm *c, char *buf, int size) {
	char name[MPI_MAX_OBJECT_NAME];
	int len = 0;
	name[0] = 0;
	if (c) PMPI_Comm_get_name(c->comm, name, &len);
	if (len > 0) snprintf(buf, (size_t)size, "%s", name);
	else if (c) snprintf(buf, (size_t)size, "communicator #%d", c->id);
	else snprintf(buf, (size_t)size, "an unknown communicator");
}

// Wrappers of the calls that make and free communicators.

int MPI_Comm_dup(MPI_Comm c, MPI_Comm *n) {
	SC_REP(rep_Comm_dup(c, n));
	int rc = PMPI_Comm_dup(c, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm c, MPI_Info info, MPI_Comm *n) {
	SC_REP(rep_Comm_dup_with_info(c, info, n));
	int rc = PMPI_Comm_dup_with_info(c, info, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *n) {
	SC_REP(rep_Comm_split(c, color, key, n));
	int rc = PMPI_Comm_split(c, color, key, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *n) {
	SC_REP(rep_Comm_split_type(c, type, key, info, n));
	int rc = PMPI_Comm_split_type(c, type, key, info, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *n) {
	SC_REP(rep_Comm_create(c, g, n));
	int rc = PMPI_Comm_create(c, g, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm *n) {
	SC_REP(rep_Comm_create_group(c, g, tag, n));
	int rc = PMPI_Comm_create_group(c, g, tag, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Intercomm_create(MPI_Comm local, int lleader, MPI_Comm peer, int rleader, int tag, MPI_Comm *n) {
	SC_REP(rep_Intercomm_create(local, lleader, peer, rleader, tag, n));
	int rc = PMPI_Intercomm_create(local, lleader, peer, rleader, tag, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Intercomm_merge(MPI_Comm c, int high, MPI_Comm *n) {
	SC_REP(rep_Intercomm_merge(c, high, n));
	int rc = PMPI_Intercomm_merge(c, high, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Cart_create(MPI_Comm c, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *n) {
	SC_REP(rep_Cart_create(c, nd, dims, periods, reorder, n));
	int rc = PMPI_Cart_create(c, nd, dims, periods, reorder, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Cart_sub(MPI_Comm c, const int remain[], MPI_Comm *n) {
	SC_REP(rep_Cart_sub(c, remain, n));
	int rc = PMPI_Cart_sub(c, remain, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Graph_create(MPI_Comm c, int nn, const int index[], const int edges[], int reorder, MPI_Comm *n) {
	SC_REP(rep_Graph_create(c, nn, index, edges, reorder, n));
	int rc = PMPI_Graph_create(c, nn, index, edges, reorder, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm c, int indeg, const int srcs[], const int sw[], int outdeg,
		const int dsts[], const int dw[], MPI_Info info, int reorder, MPI_Comm *n) {
	SC_REP(rep_Dist_graph_create_adjacent(c, indeg, srcs, sw, outdeg, dsts, dw, info, reorder, n));
	int rc = PMPI_Dist_graph_create_adjacent(c, indeg, srcs, sw, outdeg, dsts, dw, info, reorder, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Dist_graph_create(MPI_Comm c, int nn, const int srcs[], const int deg[], const int dsts[],
		const int w[], MPI_Info info, int reorder, MPI_Comm *n) {
	SC_REP(rep_Dist_graph_create(c, nn, srcs, deg, dsts, w, info, reorder, n));
	int rc = PMPI_Dist_graph_create(c, nn, srcs, deg, dsts, w, info, reorder, n);
	if (rc == MPI_SUCCESS && sc_active) sc_comm_add(*n);
	return rc;
}

int MPI_Comm_free(MPI_Comm *c) {
	SC_REP(rep_Comm_free(c));
	if (sc_active && c) sc_comm_drop(*c);
	return PMPI_Comm_free(c);
}

int MPI_Comm_disconnect(MPI_Comm *c) {
	SC_REP(rep_Comm_disconnect(c));
	if (sc_active && c) sc_comm_drop(*c);
	return PMPI_Comm_disconnect(c);
}

void sc_comms_init(void) {
	sc_comm_add(MPI_COMM_WORLD);
	sc_comm_add(MPI_COMM_SELF);
}
