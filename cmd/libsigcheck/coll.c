//go:build mpi

// Collectives: the ranks' type signatures must agree, pair by pair, as
// MPE's collchk checks them. Each collective is seen as the transfers it
// makes, rank i to rank j, each with a send side (what i passes) and a
// receive side (what j passes for i). Before the collective, every rank
// sends every other, on the shadow communicator, one record: the stamp of
// what it sends to it and of what it expects from it. Each rank then
// checks what it receives against what it expects and reports there; the
// sender of a mismatched transfer sees the same pair, and sends its
// datatype's description so that the report can say where they differ.
//
// Non-blocking collectives start the exchange as MPI_Ialltoall beside the
// operation, and check when it completes; MPI_Test does not report the
// operation complete before its check is.
#include <stdlib.h>
#include <string.h>
#include "sc.h"
#include "req.h"
#include "_cgo_export.h"

void sc_comm_name(sc_comm *c, char *buf, int size);

typedef struct { sc_hdr send, recv; } record; // send: what I send you; recv: what I expect from you


// A collective in progress: the records this rank sends, by peer.
typedef struct {
	sc_comm *c;
	int p, me, call;
	const char *name;
	record *out;
	int undecodable;
} coll;

static int setup(coll *k, MPI_Comm comm, int call, const char *name) {
	if (!sc_active) return 0;
	k->c = sc_comm_get(comm);
	k->call = call;
	k->name = name;
	k->undecodable = 0;
	if (!k->c) { sc_count.unchecked[call][SC_WHY_COMM]++; return 0; }
	if (k->c->inter) { sc_count.unchecked[call][SC_WHY_INTER]++; return 0; }
	PMPI_Comm_size(comm, &k->p);
	PMPI_Comm_rank(comm, &k->me);
	k->out = calloc((size_t)k->p, sizeof(record));
	return k->out != NULL;
}

static void put(coll *k, sc_hdr *h, int count, MPI_Datatype dt) {
	sc_type *t = sc_type_get(dt);
	if (sc_stamp(t, count < 0 ? 0 : (uint64_t)count, h) != 0) k->undecodable = 1;
}

// sends says that this rank sends count × dt to rank j; expects, that it
// expects count × dt from rank j.
static void sends(coll *k, int j, int count, MPI_Datatype dt) { put(k, &k->out[j].send, count, dt); }
static void expects(coll *k, int j, int count, MPI_Datatype dt) { put(k, &k->out[j].recv, count, dt); }

static int equal(const sc_hdr *a, const sc_hdr *b) {
	if (a->class != SC_TYPED || b->class != SC_TYPED) return a->bytes == b->bytes;
	return a->elems == b->elems && a->sig == b->sig;
}

static int present(const sc_hdr *h) { return h->magic == SC_HDR_MAGIC && !(h->flags & SC_HDR_UNCHECKED); }

// compare checks the records received against this rank's, reports, and
// frees what setup made.
static void compare(coll *k, record *in) {
	int bad = 0;
	// First the descriptions this rank owes: transfers it sends that the
	// receiver will find wrong.
	for (int j = 0; j < k->p; j++)
		if (present(&k->out[j].send) && present(&in[j].recv) && !equal(&k->out[j].send, &in[j].recv))
			sc_desc_send_again(sc_world_of(k->c, j), k->out[j].send.typeid);
	for (int i = 0; i < k->p; i++) {
		sc_hdr *theirs = &in[i].send, *mine = &k->out[i].recv;
		if (!present(theirs) || !present(mine) || equal(theirs, mine)) continue;
		bad = 1;
		sc_count.mismatches++;
		const char *text = NULL;
		int len = sc_desc_get(sc_world_of(k->c, i), theirs->typeid, &text, 1);
		char cname[MPI_MAX_OBJECT_NAME + 32];
		sc_comm_name(k->c, cname, sizeof cname);
		scGoMismatch((char *)k->name, cname, k->me, i, sc_world_of(k->c, i), -1, theirs, (char *)text, len < 0 ? 0 : len,
			mine->typeid, mine->count, 1);
	}
	if (k->undecodable) sc_count.unchecked[k->call][SC_WHY_TYPE]++;
	else sc_count.checked[k->call]++;
	free(k->out);
	k->out = NULL;
	if (bad && sc_abort) sc_fail();
}

// check exchanges the records and compares them, before the collective.
static void check(coll *k) {
	record *in = calloc((size_t)k->p, sizeof(record));
	if (!in) { free(k->out); return; }
	// Not under the lock: other threads' calls go on meanwhile.
	SC_UNLOCK();
	PMPI_Alltoall(k->out, sizeof(record), MPI_BYTE, in, sizeof(record), MPI_BYTE, k->c->shadow);
	SC_LOCK();
	compare(k, in);
	free(in);
}

// start_check begins the exchange for a non-blocking collective; the
// request entry made for *r after the operation starts holds it.
static MPI_Request start_check(coll *k, record **in) {
	MPI_Request cr = MPI_REQUEST_NULL;
	*in = calloc((size_t)k->p, sizeof(record));
	if (!*in) return cr;
	PMPI_Ialltoall(k->out, sizeof(record), MPI_BYTE, *in, sizeof(record), MPI_BYTE, k->c->shadow, &cr);
	return cr;
}

static void follow(coll *k, MPI_Request r, MPI_Request cr, record *in) {
	sc_req *e = sc_req_new(r, SC_REQ_COLL);
	if (!e) { PMPI_Wait(&cr, MPI_STATUS_IGNORE); compare(k, in); free(in); return; }
	e->check = cr;
	e->in = in;
	e->out = k->out; // freed with the entry
	e->call = k->call;
	e->name = k->name;
	e->comm = k->c->comm;
	e->nrec = k->p;
	k->out = NULL;
}

int sc_coll_ready(sc_req *e) {
	if (e->check == MPI_REQUEST_NULL) return 1;
	int done = 0;
	PMPI_Test(&e->check, &done, MPI_STATUS_IGNORE);
	return done;
}

// sc_coll_finish waits for a non-blocking collective's check, with the
// lock let go meanwhile (another thread of this process may have to start
// its own check for the peer's to complete), then compares. Lock held;
// e, whose request has completed, is this thread's.
void sc_coll_finish(sc_req *e) {
	if (e->check != MPI_REQUEST_NULL) {
		MPI_Request cr = e->check;
		SC_UNLOCK();
		PMPI_Wait(&cr, MPI_STATUS_IGNORE);
		SC_LOCK();
		e->check = MPI_REQUEST_NULL;
	}
	coll k = {.c = sc_comm_get(e->comm), .p = e->nrec, .call = e->call, .name = e->name, .out = e->out};
	if (!k.c) return;
	PMPI_Comm_rank(e->comm, &k.me);
	e->out = NULL; // compare frees it
	for (int j = 0; j < k.p; j++)
		if (((record *)k.out)[j].send.flags & SC_HDR_UNCHECKED) k.undecodable = 1;
	compare(&k, e->in);
}

// The shapes of the collectives. Each fills the records for its
// transfers; IN_PLACE sides take their count and type from the other
// argument, as MPI says.

static void one_to_all(coll *k, int root, int scount, MPI_Datatype sdt, int rcount, MPI_Datatype rdt, int inplace_root) {
	if (k->me == root)
		for (int j = 0; j < k->p; j++)
			if (j != root || !inplace_root) sends(k, j, scount, sdt);
	if (k->me != root || !inplace_root) expects(k, root, rcount, rdt);
}

static void all_to_one(coll *k, int root, int scount, MPI_Datatype sdt, int rcount, MPI_Datatype rdt, int inplace_root) {
	if (k->me != root || !inplace_root) sends(k, root, scount, sdt);
	if (k->me == root)
		for (int i = 0; i < k->p; i++)
			if (i != root || !inplace_root) expects(k, i, rcount, rdt);
}

// Reductions: every rank's count and type must be the same; each is
// checked against rank root's.
static void same(coll *k, int root, int count, MPI_Datatype dt) {
	sends(k, root, count, dt);
	if (k->me == root)
		for (int i = 0; i < k->p; i++) expects(k, i, count, dt);
}

#define BEGIN(CALL, NAME, COMM) coll k; int _checking = 0; sc_enc_note(COMM, CALL, NAME); SC_LOCK(); _checking = setup(&k, COMM, CALL, NAME);
#define RUN_BLOCKING(EXPR) if (_checking) check(&k); SC_UNLOCK(); return EXPR;
#define RUN_NONBLOCKING(EXPR, REQ)                                              \
	MPI_Request _cr = MPI_REQUEST_NULL; record *_in = NULL;                     \
	if (_checking) _cr = start_check(&k, &_in);                                 \
	int _rc = EXPR;                                                             \
	if (_checking) {                                                            \
		if (_rc == MPI_SUCCESS) follow(&k, *(REQ), _cr, _in);                   \
		else { PMPI_Wait(&_cr, MPI_STATUS_IGNORE); free(_in); free(k.out); }    \
	}                                                                           \
	SC_UNLOCK();                                                                \
	return _rc;

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
	SC_REP(rep_Bcast(buf, count, dt, root, comm));
	BEGIN(SC_CALL_BCAST, "MPI_Bcast", comm)
	if (_checking) one_to_all(&k, root, count, dt, count, dt, 1);
	RUN_BLOCKING(PMPI_Bcast(buf, count, dt, root, comm))
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *r) {
	SC_REP(rep_Ibcast(buf, count, dt, root, comm, r));
	BEGIN(SC_CALL_BCAST, "MPI_Ibcast", comm)
	if (_checking) one_to_all(&k, root, count, dt, count, dt, 1);
	RUN_NONBLOCKING(PMPI_Ibcast(buf, count, dt, root, comm, r), r)
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
	SC_REP(rep_Reduce(s, r, count, dt, op, root, comm));
	BEGIN(SC_CALL_REDUCE, "MPI_Reduce", comm)
	if (_checking) same(&k, root, count, dt);
	RUN_BLOCKING(PMPI_Reduce(s, r, count, dt, op, root, comm))
}

int MPI_Ireduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Ireduce(s, r, count, dt, op, root, comm, q));
	BEGIN(SC_CALL_REDUCE, "MPI_Ireduce", comm)
	if (_checking) same(&k, root, count, dt);
	RUN_NONBLOCKING(PMPI_Ireduce(s, r, count, dt, op, root, comm, q), q)
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	SC_REP(rep_Allreduce(s, r, count, dt, op, comm));
	BEGIN(SC_CALL_ALLREDUCE, "MPI_Allreduce", comm)
	if (_checking) same(&k, 0, count, dt);
	RUN_BLOCKING(PMPI_Allreduce(s, r, count, dt, op, comm))
}

int MPI_Iallreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Iallreduce(s, r, count, dt, op, comm, q));
	BEGIN(SC_CALL_ALLREDUCE, "MPI_Iallreduce", comm)
	if (_checking) same(&k, 0, count, dt);
	RUN_NONBLOCKING(PMPI_Iallreduce(s, r, count, dt, op, comm, q), q)
}

int MPI_Scan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	SC_REP(rep_Scan(s, r, count, dt, op, comm));
	BEGIN(SC_CALL_SCAN, "MPI_Scan", comm)
	if (_checking) same(&k, 0, count, dt);
	RUN_BLOCKING(PMPI_Scan(s, r, count, dt, op, comm))
}

int MPI_Iscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Iscan(s, r, count, dt, op, comm, q));
	BEGIN(SC_CALL_SCAN, "MPI_Iscan", comm)
	if (_checking) same(&k, 0, count, dt);
	RUN_NONBLOCKING(PMPI_Iscan(s, r, count, dt, op, comm, q), q)
}

int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	SC_REP(rep_Exscan(s, r, count, dt, op, comm));
	BEGIN(SC_CALL_SCAN, "MPI_Exscan", comm)
	if (_checking) same(&k, 0, count, dt);
	RUN_BLOCKING(PMPI_Exscan(s, r, count, dt, op, comm))
}

int MPI_Iexscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Iexscan(s, r, count, dt, op, comm, q));
	BEGIN(SC_CALL_SCAN, "MPI_Iexscan", comm)
	if (_checking) same(&k, 0, count, dt);
	RUN_NONBLOCKING(PMPI_Iexscan(s, r, count, dt, op, comm, q), q)
}

int MPI_Reduce_scatter_block(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	SC_REP(rep_Reduce_scatter_block(s, r, count, dt, op, comm));
	BEGIN(SC_CALL_REDUCE, "MPI_Reduce_scatter_block", comm)
	if (_checking) same(&k, 0, count, dt);
	RUN_BLOCKING(PMPI_Reduce_scatter_block(s, r, count, dt, op, comm))
}

int MPI_Reduce_scatter(const void *s, void *r, const int counts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
	SC_REP(rep_Reduce_scatter(s, r, counts, dt, op, comm));
	BEGIN(SC_CALL_REDUCE, "MPI_Reduce_scatter", comm)
	if (_checking) {
		// Every rank reduces the same vector: its length must agree.
		long total = 0;
		for (int i = 0; i < k.p; i++) total += counts[i];
		if (total > 0x7fffffff) { free(k.out); _checking = 0; }
		else same(&k, 0, (int)total, dt);
	}
	RUN_BLOCKING(PMPI_Reduce_scatter(s, r, counts, dt, op, comm))
}

int MPI_Gather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm) {
	SC_REP(rep_Gather(s, sc, sdt, r, rc, rdt, root, comm));
	BEGIN(SC_CALL_GATHER, "MPI_Gather", comm)
	if (_checking) all_to_one(&k, root, sc, sdt, rc, rdt, s == MPI_IN_PLACE);
	RUN_BLOCKING(PMPI_Gather(s, sc, sdt, r, rc, rdt, root, comm))
}

int MPI_Igather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Igather(s, sc, sdt, r, rc, rdt, root, comm, q));
	BEGIN(SC_CALL_GATHER, "MPI_Igather", comm)
	if (_checking) all_to_one(&k, root, sc, sdt, rc, rdt, s == MPI_IN_PLACE);
	RUN_NONBLOCKING(PMPI_Igather(s, sc, sdt, r, rc, rdt, root, comm, q), q)
}

static void gatherv(coll *k, int root, const void *s, int sc, MPI_Datatype sdt, const int rcs[], MPI_Datatype rdt) {
	int inplace = s == MPI_IN_PLACE;
	if (k->me != root || !inplace) sends(k, root, sc, sdt);
	if (k->me == root)
		for (int i = 0; i < k->p; i++)
			if (i != root || !inplace) expects(k, i, rcs[i], rdt);
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm) {
	SC_REP(rep_Gatherv(s, sc, sdt, r, rcs, displs, rdt, root, comm));
	BEGIN(SC_CALL_GATHER, "MPI_Gatherv", comm)
	if (_checking) gatherv(&k, root, s, sc, sdt, rcs, rdt);
	RUN_BLOCKING(PMPI_Gatherv(s, sc, sdt, r, rcs, displs, rdt, root, comm))
}

int MPI_Igatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Igatherv(s, sc, sdt, r, rcs, displs, rdt, root, comm, q));
	BEGIN(SC_CALL_GATHER, "MPI_Igatherv", comm)
	if (_checking) gatherv(&k, root, s, sc, sdt, rcs, rdt);
	RUN_NONBLOCKING(PMPI_Igatherv(s, sc, sdt, r, rcs, displs, rdt, root, comm, q), q)
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm) {
	SC_REP(rep_Scatter(s, sc, sdt, r, rc, rdt, root, comm));
	BEGIN(SC_CALL_SCATTER, "MPI_Scatter", comm)
	if (_checking) one_to_all(&k, root, sc, sdt, rc, rdt, r == MPI_IN_PLACE);
	RUN_BLOCKING(PMPI_Scatter(s, sc, sdt, r, rc, rdt, root, comm))
}

int MPI_Iscatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Iscatter(s, sc, sdt, r, rc, rdt, root, comm, q));
	BEGIN(SC_CALL_SCATTER, "MPI_Iscatter", comm)
	if (_checking) one_to_all(&k, root, sc, sdt, rc, rdt, r == MPI_IN_PLACE);
	RUN_NONBLOCKING(PMPI_Iscatter(s, sc, sdt, r, rc, rdt, root, comm, q), q)
}

static void scatterv(coll *k, int root, const int scs[], MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt) {
	int inplace = r == MPI_IN_PLACE;
	if (k->me == root)
		for (int j = 0; j < k->p; j++)
			if (j != root || !inplace) sends(k, j, scs[j], sdt);
	if (k->me != root || !inplace) expects(k, root, rc, rdt);
}

int MPI_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm) {
	SC_REP(rep_Scatterv(s, scs, displs, sdt, r, rc, rdt, root, comm));
	BEGIN(SC_CALL_SCATTER, "MPI_Scatterv", comm)
	if (_checking) scatterv(&k, root, scs, sdt, r, rc, rdt);
	RUN_BLOCKING(PMPI_Scatterv(s, scs, displs, sdt, r, rc, rdt, root, comm))
}

int MPI_Iscatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Iscatterv(s, scs, displs, sdt, r, rc, rdt, root, comm, q));
	BEGIN(SC_CALL_SCATTER, "MPI_Iscatterv", comm)
	if (_checking) scatterv(&k, root, scs, sdt, r, rc, rdt);
	RUN_NONBLOCKING(PMPI_Iscatterv(s, scs, displs, sdt, r, rc, rdt, root, comm, q), q)
}

// allgather: rank i sends its block to every j; j expects rcs[i] × rdt.
static void allgather(coll *k, const void *s, int sc, MPI_Datatype sdt, const int *rcs, int rc, MPI_Datatype rdt) {
	if (s == MPI_IN_PLACE) { sc = rcs ? rcs[k->me] : rc; sdt = rdt; }
	for (int j = 0; j < k->p; j++) {
		sends(k, j, sc, sdt);
		expects(k, j, rcs ? rcs[j] : rc, rdt);
	}
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm) {
	SC_REP(rep_Allgather(s, sc, sdt, r, rc, rdt, comm));
	BEGIN(SC_CALL_ALLGATHER, "MPI_Allgather", comm)
	if (_checking) allgather(&k, s, sc, sdt, NULL, rc, rdt);
	RUN_BLOCKING(sc_allgather(s, sc, sdt, r, rc, rdt, comm))
}

int MPI_Iallgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Iallgather(s, sc, sdt, r, rc, rdt, comm, q));
	BEGIN(SC_CALL_ALLGATHER, "MPI_Iallgather", comm)
	if (_checking) allgather(&k, s, sc, sdt, NULL, rc, rdt);
	RUN_NONBLOCKING(PMPI_Iallgather(s, sc, sdt, r, rc, rdt, comm, q), q)
}

int MPI_Allgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt, MPI_Comm comm) {
	SC_REP(rep_Allgatherv(s, sc, sdt, r, rcs, displs, rdt, comm));
	BEGIN(SC_CALL_ALLGATHER, "MPI_Allgatherv", comm)
	if (_checking) allgather(&k, s, sc, sdt, rcs, 0, rdt);
	RUN_BLOCKING(PMPI_Allgatherv(s, sc, sdt, r, rcs, displs, rdt, comm))
}

int MPI_Iallgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Iallgatherv(s, sc, sdt, r, rcs, displs, rdt, comm, q));
	BEGIN(SC_CALL_ALLGATHER, "MPI_Iallgatherv", comm)
	if (_checking) allgather(&k, s, sc, sdt, rcs, 0, rdt);
	RUN_NONBLOCKING(PMPI_Iallgatherv(s, sc, sdt, r, rcs, displs, rdt, comm, q), q)
}

static void alltoall(coll *k, const void *s, const int *scs, int sc, MPI_Datatype sdt, const int *rcs, int rc, MPI_Datatype rdt) {
	if (s == MPI_IN_PLACE) { scs = rcs; sc = rc; sdt = rdt; }
	for (int j = 0; j < k->p; j++) {
		sends(k, j, scs ? scs[j] : sc, sdt);
		expects(k, j, rcs ? rcs[j] : rc, rdt);
	}
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm) {
	SC_REP(rep_Alltoall(s, sc, sdt, r, rc, rdt, comm));
	BEGIN(SC_CALL_ALLTOALL, "MPI_Alltoall", comm)
	if (_checking) alltoall(&k, s, NULL, sc, sdt, NULL, rc, rdt);
	RUN_BLOCKING(PMPI_Alltoall(s, sc, sdt, r, rc, rdt, comm))
}

int MPI_Ialltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Ialltoall(s, sc, sdt, r, rc, rdt, comm, q));
	BEGIN(SC_CALL_ALLTOALL, "MPI_Ialltoall", comm)
	if (_checking) alltoall(&k, s, NULL, sc, sdt, NULL, rc, rdt);
	RUN_NONBLOCKING(PMPI_Ialltoall(s, sc, sdt, r, rc, rdt, comm, q), q)
}

int MPI_Alltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype sdt, void *r, const int rcs[], const int rd[], MPI_Datatype rdt, MPI_Comm comm) {
	SC_REP(rep_Alltoallv(s, scs, sd, sdt, r, rcs, rd, rdt, comm));
	BEGIN(SC_CALL_ALLTOALL, "MPI_Alltoallv", comm)
	if (_checking) alltoall(&k, s, scs, 0, sdt, rcs, 0, rdt);
	RUN_BLOCKING(PMPI_Alltoallv(s, scs, sd, sdt, r, rcs, rd, rdt, comm))
}

int MPI_Ialltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype sdt, void *r, const int rcs[], const int rd[], MPI_Datatype rdt, MPI_Comm comm, MPI_Request *q) {
	SC_REP(rep_Ialltoallv(s, scs, sd, sdt, r, rcs, rd, rdt, comm, q));
	BEGIN(SC_CALL_ALLTOALL, "MPI_Ialltoallv", comm)
	if (_checking) alltoall(&k, s, scs, 0, sdt, rcs, 0, rdt);
	RUN_NONBLOCKING(PMPI_Ialltoallv(s, scs, sd, sdt, r, rcs, rd, rdt, comm, q), q)
}
