//go:build mpi

// Replication: the communicators the application makes. Each is made in
// its replica's world (through the checking layer, which shadows it),
// then its twin over the replicas (rep.c's rep_comm_derive), in the same
// collective call in every replica.
#include <stdlib.h>
#include "repint.h"

#define DERIVED(PARENT, CALL)                                 \
	REP_ENTER();                                              \
	MPI_Comm _p = sc_rep_vc(PARENT);                          \
	int rc = CALL;                                            \
	if (rc == MPI_SUCCESS) rep_comm_derive(_p, *n);           \
	REP_LEAVE();                                              \
	return rc;

int rep_Comm_dup(MPI_Comm c, MPI_Comm *n) { DERIVED(c, MPI_Comm_dup(_p, n)) }

int rep_Comm_dup_with_info(MPI_Comm c, MPI_Info info, MPI_Comm *n) { DERIVED(c, MPI_Comm_dup_with_info(_p, info, n)) }

int rep_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *n) { DERIVED(c, MPI_Comm_split(_p, color, key, n)) }

int rep_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *n) {
	DERIVED(c, MPI_Comm_split_type(_p, type, key, info, n))
}

int rep_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *n) { DERIVED(c, MPI_Comm_create(_p, g, n)) }

int rep_Intercomm_merge(MPI_Comm c, int high, MPI_Comm *n) { DERIVED(c, MPI_Intercomm_merge(_p, high, n)) }

int rep_Cart_create(MPI_Comm c, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *n) {
	DERIVED(c, MPI_Cart_create(_p, nd, dims, periods, reorder, n))
}

int rep_Cart_sub(MPI_Comm c, const int remain[], MPI_Comm *n) { DERIVED(c, MPI_Cart_sub(_p, remain, n)) }

int rep_Graph_create(MPI_Comm c, int nn, const int index[], const int edges[], int reorder, MPI_Comm *n) {
	DERIVED(c, MPI_Graph_create(_p, nn, index, edges, reorder, n))
}

int rep_Dist_graph_create_adjacent(MPI_Comm c, int indeg, const int srcs[], const int sw[], int outdeg,
		const int dsts[], const int dw[], MPI_Info info, int reorder, MPI_Comm *n) {
	DERIVED(c, MPI_Dist_graph_create_adjacent(_p, indeg, srcs, sw, outdeg, dsts, dw, info, reorder, n))
}

int rep_Dist_graph_create(MPI_Comm c, int nn, const int srcs[], const int deg[], const int dsts[], const int w[],
		MPI_Info info, int reorder, MPI_Comm *n) {
	DERIVED(c, MPI_Dist_graph_create(_p, nn, srcs, deg, dsts, w, info, reorder, n))
}

// MPI_Comm_create_group is collective over the group only, not over the
// communicator: the twin is made the same way, over the group's replicas.
int rep_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm *n) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(c);
	int rc = MPI_Comm_create_group(vc, g, tag, n);
	rep_comm *p = rep_comm_get(vc);
	if (rc == MPI_SUCCESS && *n != MPI_COMM_NULL && p && p->x != MPI_COMM_NULL && !p->inter) {
		int size = 0, r = sc_rep_conf.r;
		MPI_Group gn, gp, gx, gt;
		PMPI_Comm_size(*n, &size);
		PMPI_Comm_group(*n, &gn);
		PMPI_Comm_group(vc, &gp);
		PMPI_Comm_group(p->x, &gx);
		int *ranks = malloc(sizeof(int) * (size_t)size), *xr = malloc(sizeof(int) * (size_t)size * (size_t)r);
		if (!ranks || !xr) rep_fail();
		for (int i = 0; i < size; i++) ranks[i] = i;
		PMPI_Group_translate_ranks(gn, size, ranks, gp, xr);
		for (int k = r - 1; k >= 0; k--)
			for (int i = 0; i < size; i++) xr[k * size + i] = k * p->size + xr[i];
		MPI_Comm x = MPI_COMM_NULL;
		PMPI_Group_incl(gx, size * r, xr, &gt);
		PMPI_Comm_create_group(p->x, gt, tag, &x);
		PMPI_Group_free(&gt);
		PMPI_Group_free(&gx);
		PMPI_Group_free(&gp);
		PMPI_Group_free(&gn);
		free(ranks);
		free(xr);
		rep_comm_drop(*n);
		rep_comm *e = rep_comm_get(*n);
		if (e && x != MPI_COMM_NULL) {
			e->x = x;
			e->seq = calloc((size_t)e->size, sizeof *e->seq);
			if (!e->seq) rep_fail();
		}
	}
	REP_LEAVE();
	return rc;
}

// An intercommunicator's messages are not compared (its twin would span
// two groups' replicas); replica 0 still resolves its wildcards.
int rep_Intercomm_create(MPI_Comm local, int lleader, MPI_Comm peer, int rleader, int tag, MPI_Comm *n) {
	REP_ENTER();
	int rc = MPI_Intercomm_create(sc_rep_vc(local), lleader, sc_rep_vc(peer), rleader, tag, n);
	REP_LEAVE();
	return rc;
}

int rep_Comm_free(MPI_Comm *c) {
	REP_ENTER();
	if (*c != MPI_COMM_WORLD) rep_comm_drop(*c);
	int rc = MPI_Comm_free(c);
	REP_LEAVE();
	return rc;
}

int rep_Comm_disconnect(MPI_Comm *c) {
	REP_ENTER();
	if (*c != MPI_COMM_WORLD) rep_comm_drop(*c);
	int rc = MPI_Comm_disconnect(c);
	REP_LEAVE();
	return rc;
}
