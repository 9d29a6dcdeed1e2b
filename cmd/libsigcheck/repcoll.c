//go:build mpi

// Replication: collectives, and the communicators the application makes.
//
// A collective runs in each replica's world as the application called it
// (MPI's own algorithms, as RedMPI's Open MPI module kept them); what it
// left at this rank (the output buffer, or the blocks a v-collective
// wrote) is then hashed, and the replicas of the rank vote on their
// hashes in one all-gather among themselves. A minority replica takes the
// majority's result, block by block, from the lowest replica that has
// it, before the call returns; no majority ends the job. A collective
// that leaves nothing at a rank (a reduction's non-root) has nothing to
// vote on there: its inputs are voted on where they arrive. The injector
// flips a bit of a copy of the input, where there is one apart from the
// output.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "repint.h"
#include "_cgo_export.h"

#define TAG_COLLFIX 4

void rep_out_free(rep_out *o) {
	for (int i = 0; i < o->nblk; i++) rep_type_release(o->dt[i]);
	free(o->buf);
	free(o->count);
	free(o->dt);
	free(o->inj);
	memset(o, 0, sizeof *o);
}

static void out_alloc(rep_out *o, int n) {
	o->buf = calloc((size_t)(n > 0 ? n : 1), sizeof *o->buf);
	o->count = calloc((size_t)(n > 0 ? n : 1), sizeof *o->count);
	o->dt = calloc((size_t)(n > 0 ? n : 1), sizeof *o->dt);
	if (!o->buf || !o->count || !o->dt) rep_fail();
}

static void out_add(rep_out *o, void *buf, int count, MPI_Datatype dt) {
	o->buf[o->nblk] = buf;
	o->count[o->nblk] = count;
	o->dt[o->nblk] = dt;
	o->nblk++;
	rep_type_hold(dt);
}

static void out_one(rep_out *o, void *buf, int count, MPI_Datatype dt) {
	out_alloc(o, 1);
	out_add(o, buf, count, dt);
}

// out_v: the blocks counts[i] × dt at buf + displs[i] extents.
static void out_v(rep_out *o, void *buf, const int counts[], const int displs[], MPI_Datatype dt, int p) {
	MPI_Aint lb = 0, ext = 0;
	PMPI_Type_get_extent(dt, &lb, &ext);
	out_alloc(o, p);
	for (int i = 0; i < p; i++) out_add(o, (char *)buf + (MPI_Aint)displs[i] * ext, counts[i], dt);
}

typedef struct {
	uint64_t len;
	uint64_t h[2];
} cclaim;

static int csame(const cclaim *a, const cclaim *b) {
	return a->len == b->len && a->h[0] == b->h[0] && a->h[1] == b->h[1] && a->len != UINT64_MAX;
}

static cclaim claim_of(const rep_out *o) {
	cclaim c = {0, {0, 0}};
	if (o->nblk == 1) {
		c.len = rep_data_bytes(o->count[0], o->dt[0]);
		if (rep_hash_data(o->buf[0], o->count[0], o->dt[0], c.len, c.h) != 0) c.len = UINT64_MAX;
		return c;
	}
	cclaim *blocks = malloc(sizeof *blocks * (size_t)o->nblk);
	if (!blocks) rep_fail();
	for (int i = 0; i < o->nblk; i++) {
		blocks[i].len = rep_data_bytes(o->count[i], o->dt[i]);
		if (rep_hash_data(o->buf[i], o->count[i], o->dt[i], blocks[i].len, blocks[i].h) != 0) blocks[i].len = UINT64_MAX;
		c.len += blocks[i].len;
	}
	scGoHash128(blocks, sizeof *blocks * (size_t)o->nblk, c.h);
	free(blocks);
	return c;
}

static void coll_finding(int kind, const rep_out *o, const char *call, const cclaim *all, int r) {
	char claims[512], detail[768], cname[MPI_MAX_OBJECT_NAME + 32];
	size_t off = 0;
	claims[0] = 0;
	for (int i = 0; i < r && off < sizeof claims; i++)
		off += (size_t)snprintf(claims + off, sizeof claims - off, "%sreplica %d: %016llx%016llx over %llu bytes",
			i ? "; " : "", i, (unsigned long long)all[i].h[1], (unsigned long long)all[i].h[0],
			(unsigned long long)all[i].len);
	switch (kind) {
	case 1:
		snprintf(detail, sizeof detail, "this replica's result was voted out (%s) and replaced by the majority's", claims);
		break;
	case 2:
		snprintf(detail, sizeof detail, "the replicas' results differ (%s); with 2 replicas neither can be trusted", claims);
		break;
	default:
		snprintf(detail, sizeof detail, "the replicas' results differ (%s), and no result has two replicas behind it: "
			"the job ends", claims);
	}
	rep_comm *c = rep_comm_get(o->vc);
	rep_comm_name(c, cname, sizeof cname);
	scGoRepFinding(kind, (char *)call, cname, c ? c->me : -1, -1, -1, detail);
}

void rep_coll_vote(rep_out *o, const char *call) {
	if (o->nblk == 0) return;
	int r = sc_rep_conf.r, k = sc_rep_replica;
	cclaim mine = claim_of(o), all[3];
	MPI_Request q;
	char what[128];
	snprintf(what, sizeof what, "the other replicas' results of %s", call);
	PMPI_Iallgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, rep_vote, &q);
	rep_wait_req(&q, MPI_STATUS_IGNORE, what);
	sc_rep_count.coll_compared++;
	int agree = 1;
	for (int i = 1; i < r; i++) agree &= csame(&all[0], &all[i]);
	if (agree) return;
	sc_rep_count.coll_found++;
	if (r == 2) {
		sc_rep_count.uncorrectable++;
		coll_finding(2, o, call, all, r);
		if (!sc_rep_conf.report) rep_fail();
		return;
	}
	int w = -1, wn = 0, tie = 0;
	for (int i = 0; i < r; i++) {
		int m = 0;
		for (int j = 0; j < r; j++) m += csame(&all[i], &all[j]);
		if (m > wn) { w = i; wn = m; tie = 0; }
		else if (m == wn && w >= 0 && !csame(&all[i], &all[w])) tie = 1;
	}
	if (wn < 2 || tie) {
		sc_rep_count.uncorrectable++;
		coll_finding(3, o, call, all, r);
		rep_fail();
	}
	// w is the lowest replica with the winning result: it sends.
	if (csame(&mine, &all[w])) {
		if (k != w) return;
		for (int i = 0; i < r; i++) {
			if (csame(&all[i], &all[w])) continue;
			for (int b = 0; b < o->nblk; b++) {
				PMPI_Isend(o->buf[b], o->count[b], o->dt[b], i, TAG_COLLFIX, rep_vote, &q);
				rep_wait_req(&q, MPI_STATUS_IGNORE, "a replica to take the majority's result");
			}
		}
		return;
	}
	for (int b = 0; b < o->nblk; b++) {
		PMPI_Irecv(o->buf[b], o->count[b], o->dt[b], w, TAG_COLLFIX, rep_vote, &q);
		rep_wait_req(&q, MPI_STATUS_IGNORE, "the majority's result");
	}
	cclaim fixed = claim_of(o);
	if (!csame(&fixed, &all[w])) {
		sc_rep_count.uncorrectable++;
		coll_finding(3, o, call, all, r);
		rep_fail();
	}
	sc_rep_count.coll_corrected++;
	coll_finding(1, o, call, all, r);
}

// The wrappers. Each names its output blocks; an intercommunicator's
// collectives (whose results are the other group's) are not voted on.
#define BEGIN(NAME)                                                   \
	REP_ENTER();                                                      \
	MPI_Comm vc = sc_rep_vc(comm);                                    \
	rep_out o;                                                        \
	memset(&o, 0, sizeof o);                                          \
	o.name = NAME;                                                    \
	o.vc = vc;                                                        \
	int me = 0, p = 0, inter = 0;                                     \
	PMPI_Comm_test_inter(vc, &inter);                                 \
	rep_comm *_c = rep_comm_get(vc);                                  \
	if (_c && _c->differs) inter = 1; /* not the same collective in every replica */ \
	PMPI_Comm_rank(vc, &me);                                          \
	PMPI_Comm_size(vc, &p);                                           \
	(void)me; (void)p;

#define INJECT(S, N, DT, FROM)                                                   \
	const void *FROM = S;                                                        \
	if (!inter && S != MPI_IN_PLACE && (N) > 0) {                                \
		void *_copy;                                                             \
		if (rep_inject_copy(S, N, DT, &_copy, &FROM)) o.inj = _copy;             \
	}

#define BLOCKING(EXPR)                                                           \
	int rc = EXPR;                                                               \
	if (inter) sc_rep_count.uncompared[SC_REP_U_COLL]++;                         \
	else if (rc == MPI_SUCCESS) rep_coll_vote(&o, o.name);                       \
	rep_out_free(&o);                                                            \
	REP_LEAVE();                                                                 \
	return rc;

#define NONBLOCKING(EXPR, REQ)                                                   \
	int rc = EXPR;                                                               \
	if (rc == MPI_SUCCESS && !inter) {                                           \
		rep_req *_e = rep_req_new(*(REQ), REP_COLL);                             \
		if (!_e) rep_fail();                                                     \
		_e->out = o;                                                             \
	} else {                                                                     \
		if (inter) sc_rep_count.uncompared[SC_REP_U_COLL]++;                     \
		rep_out_free(&o);                                                        \
	}                                                                            \
	REP_LEAVE();                                                                 \
	return rc;

int rep_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
	BEGIN("MPI_Bcast")
	const void *from = buf;
	if (me == root) { INJECT(buf, count, dt, f) from = f; }
	if (!inter) out_one(&o, buf, count, dt);
	BLOCKING(MPI_Bcast(me == root ? (void *)from : buf, count, dt, root, vc))
}

int rep_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *r) {
	BEGIN("MPI_Ibcast")
	const void *from = buf;
	if (me == root) { INJECT(buf, count, dt, f) from = f; }
	if (!inter) out_one(&o, buf, count, dt);
	NONBLOCKING(MPI_Ibcast(me == root ? (void *)from : buf, count, dt, root, vc, r), r)
}

int rep_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
	BEGIN("MPI_Reduce")
	INJECT(s, count, dt, from)
	if (!inter && me == root) out_one(&o, r, count, dt);
	BLOCKING(MPI_Reduce(from, r, count, dt, op, root, vc))
}

int rep_Ireduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Request *q) {
	BEGIN("MPI_Ireduce")
	INJECT(s, count, dt, from)
	if (!inter && me == root) out_one(&o, r, count, dt);
	NONBLOCKING(MPI_Ireduce(from, r, count, dt, op, root, vc, q), q)
}

int rep_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	BEGIN("MPI_Allreduce")
	INJECT(s, count, dt, from)
	if (!inter) out_one(&o, r, count, dt);
	BLOCKING(MPI_Allreduce(from, r, count, dt, op, vc))
}

int rep_Iallreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q) {
	BEGIN("MPI_Iallreduce")
	INJECT(s, count, dt, from)
	if (!inter) out_one(&o, r, count, dt);
	NONBLOCKING(MPI_Iallreduce(from, r, count, dt, op, vc, q), q)
}

int rep_Scan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	BEGIN("MPI_Scan")
	INJECT(s, count, dt, from)
	if (!inter) out_one(&o, r, count, dt);
	BLOCKING(MPI_Scan(from, r, count, dt, op, vc))
}

int rep_Iscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q) {
	BEGIN("MPI_Iscan")
	INJECT(s, count, dt, from)
	if (!inter) out_one(&o, r, count, dt);
	NONBLOCKING(MPI_Iscan(from, r, count, dt, op, vc, q), q)
}

// Exscan leaves rank 0's buffer undefined: nothing to vote on there.
int rep_Exscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	BEGIN("MPI_Exscan")
	INJECT(s, count, dt, from)
	if (!inter && me != 0) out_one(&o, r, count, dt);
	BLOCKING(MPI_Exscan(from, r, count, dt, op, vc))
}

int rep_Iexscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q) {
	BEGIN("MPI_Iexscan")
	INJECT(s, count, dt, from)
	if (!inter && me != 0) out_one(&o, r, count, dt);
	NONBLOCKING(MPI_Iexscan(from, r, count, dt, op, vc, q), q)
}

int rep_Reduce_scatter_block(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	BEGIN("MPI_Reduce_scatter_block")
	INJECT(s, count * p, dt, from)
	if (!inter) out_one(&o, r, count, dt);
	BLOCKING(MPI_Reduce_scatter_block(from, r, count, dt, op, vc))
}

int rep_Reduce_scatter(const void *s, void *r, const int counts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	BEGIN("MPI_Reduce_scatter")
	long total = 0;
	for (int i = 0; !inter && i < p; i++) total += counts[i];
	INJECT(s, total <= 0x7fffffff ? (int)total : 0, dt, from)
	if (!inter) out_one(&o, r, counts[me], dt);
	BLOCKING(MPI_Reduce_scatter(from, r, counts, dt, op, vc))
}

int rep_Gather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt, int root, MPI_Comm comm) {
	BEGIN("MPI_Gather")
	INJECT(s, sc, sdt, from)
	if (!inter && me == root) out_one(&o, r, rc_ * p, rdt);
	BLOCKING(MPI_Gather(from, sc, sdt, r, rc_, rdt, root, vc))
}

int rep_Igather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt, int root, MPI_Comm comm,
		MPI_Request *q) {
	BEGIN("MPI_Igather")
	INJECT(s, sc, sdt, from)
	if (!inter && me == root) out_one(&o, r, rc_ * p, rdt);
	NONBLOCKING(MPI_Igather(from, sc, sdt, r, rc_, rdt, root, vc, q), q)
}

int rep_Gatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt,
		int root, MPI_Comm comm) {
	BEGIN("MPI_Gatherv")
	INJECT(s, sc, sdt, from)
	if (!inter && me == root) out_v(&o, r, rcs, displs, rdt, p);
	BLOCKING(MPI_Gatherv(from, sc, sdt, r, rcs, displs, rdt, root, vc))
}

int rep_Igatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt,
		int root, MPI_Comm comm, MPI_Request *q) {
	BEGIN("MPI_Igatherv")
	INJECT(s, sc, sdt, from)
	if (!inter && me == root) out_v(&o, r, rcs, displs, rdt, p);
	NONBLOCKING(MPI_Igatherv(from, sc, sdt, r, rcs, displs, rdt, root, vc, q), q)
}

int rep_Scatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt, int root, MPI_Comm comm) {
	BEGIN("MPI_Scatter")
	const void *from = s;
	if (me == root) { INJECT(s, sc * p, sdt, f) from = f; }
	if (!inter && !(me == root && r == MPI_IN_PLACE)) out_one(&o, r, rc_, rdt);
	BLOCKING(MPI_Scatter(from, sc, sdt, r, rc_, rdt, root, vc))
}

int rep_Iscatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt, int root, MPI_Comm comm,
		MPI_Request *q) {
	BEGIN("MPI_Iscatter")
	const void *from = s;
	if (me == root) { INJECT(s, sc * p, sdt, f) from = f; }
	if (!inter && !(me == root && r == MPI_IN_PLACE)) out_one(&o, r, rc_, rdt);
	NONBLOCKING(MPI_Iscatter(from, sc, sdt, r, rc_, rdt, root, vc, q), q)
}

int rep_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt,
		int root, MPI_Comm comm) {
	BEGIN("MPI_Scatterv")
	if (!inter && !(me == root && r == MPI_IN_PLACE)) out_one(&o, r, rc_, rdt);
	BLOCKING(MPI_Scatterv(s, scs, displs, sdt, r, rc_, rdt, root, vc))
}

int rep_Iscatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r, int rc_,
		MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *q) {
	BEGIN("MPI_Iscatterv")
	if (!inter && !(me == root && r == MPI_IN_PLACE)) out_one(&o, r, rc_, rdt);
	NONBLOCKING(MPI_Iscatterv(s, scs, displs, sdt, r, rc_, rdt, root, vc, q), q)
}

int rep_Allgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt, MPI_Comm comm) {
	BEGIN("MPI_Allgather")
	INJECT(s, sc, sdt, from)
	if (!inter) out_one(&o, r, rc_ * p, rdt);
	BLOCKING(MPI_Allgather(from, sc, sdt, r, rc_, rdt, vc))
}

int rep_Iallgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt, MPI_Comm comm,
		MPI_Request *q) {
	BEGIN("MPI_Iallgather")
	INJECT(s, sc, sdt, from)
	if (!inter) out_one(&o, r, rc_ * p, rdt);
	NONBLOCKING(MPI_Iallgather(from, sc, sdt, r, rc_, rdt, vc, q), q)
}

int rep_Allgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[],
		MPI_Datatype rdt, MPI_Comm comm) {
	BEGIN("MPI_Allgatherv")
	INJECT(s, sc, sdt, from)
	if (!inter) out_v(&o, r, rcs, displs, rdt, p);
	BLOCKING(MPI_Allgatherv(from, sc, sdt, r, rcs, displs, rdt, vc))
}

int rep_Iallgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[],
		MPI_Datatype rdt, MPI_Comm comm, MPI_Request *q) {
	BEGIN("MPI_Iallgatherv")
	INJECT(s, sc, sdt, from)
	if (!inter) out_v(&o, r, rcs, displs, rdt, p);
	NONBLOCKING(MPI_Iallgatherv(from, sc, sdt, r, rcs, displs, rdt, vc, q), q)
}

int rep_Alltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt, MPI_Comm comm) {
	BEGIN("MPI_Alltoall")
	INJECT(s, sc * p, sdt, from)
	if (!inter) out_one(&o, r, rc_ * p, rdt);
	BLOCKING(MPI_Alltoall(from, sc, sdt, r, rc_, rdt, vc))
}

int rep_Ialltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc_, MPI_Datatype rdt, MPI_Comm comm,
		MPI_Request *q) {
	BEGIN("MPI_Ialltoall")
	INJECT(s, sc * p, sdt, from)
	if (!inter) out_one(&o, r, rc_ * p, rdt);
	NONBLOCKING(MPI_Ialltoall(from, sc, sdt, r, rc_, rdt, vc, q), q)
}

int rep_Alltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype sdt, void *r, const int rcs[],
		const int rd[], MPI_Datatype rdt, MPI_Comm comm) {
	BEGIN("MPI_Alltoallv")
	if (!inter) out_v(&o, r, rcs, rd, rdt, p);
	BLOCKING(MPI_Alltoallv(s, scs, sd, sdt, r, rcs, rd, rdt, vc))
}

int rep_Ialltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype sdt, void *r, const int rcs[],
		const int rd[], MPI_Datatype rdt, MPI_Comm comm, MPI_Request *q) {
	BEGIN("MPI_Ialltoallv")
	if (!inter) out_v(&o, r, rcs, rd, rdt, p);
	NONBLOCKING(MPI_Ialltoallv(s, scs, sd, sdt, r, rcs, rd, rdt, vc, q), q)
}
