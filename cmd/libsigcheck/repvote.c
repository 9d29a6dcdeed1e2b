//go:build mpi

// Replication: what the sender replicas vouch for, how a receiver takes
// it, the vote, and the correction (the paper's §III-B).
//
// MsgPlusHash: replica k of a sender sends its message to replica k of
// the receiver (the application's own message, in the replica's world)
// and the hash of its data bytes to replica k+1, on the communicator's
// twin with the message's tag. A receiver compares its copy with the
// hash from sender replica k-1. With r = 3 a disagreement is settled as
// the paper's adjacent-replica discovery settles it: one corrupted sender
// replica j makes exactly receivers j (bad copy, good hash) and j+1 (good
// copy, bad hash) disagree, so each disagreeing receiver sends its two
// claims to both ring neighbours and votes on the three claims it then
// holds with the first report that names the same message. The claim
// that stands alone names the corrupted sender: receiver j takes the
// verified copy from j+1 before its receive returns. Two corrupted
// replicas leave three different claims: no majority, and the job ends.
//
// All-to-all: every sender replica sends its message to every receiver
// replica; a receiver votes on the r copies and takes the plurality's.
//
// Claims are taken when a receive completes, from the source and tag in
// its status, one at a time from each sender replica in MPI's order for
// that source and tag; a receive whose earlier-posted siblings on the
// same stream have not completed first lets them take theirs (they have
// matched earlier messages of the stream, or its message would have gone
// to them).
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "repint.h"
#include "_cgo_export.h"

#define TAG_REPORT 2
#define TAG_COPY 3

// The data bytes of a message, in order: the buffer itself when its
// datatype is one run from the start, else packed into a scratch buffer.
static char *scratch;
static size_t scratchcap;

static void *scratch_of(size_t n) {
	if (n > scratchcap) {
		void *p = realloc(scratch, n ? n : 1);
		if (!p) return NULL;
		scratch = p;
		scratchcap = n;
	}
	return scratch;
}

typedef struct {
	int size;
	int contig;
	MPI_Aint tlb, span;
} layout_t;

// layout_of says where count × dt lies and whether its data bytes are the
// buffer's bytes in order: the checking layer's decoding says so (a
// datatype of size equal to its extent may still hold its members out of
// order), and the extent must be the size for more than one.
static layout_t layout_of(MPI_Datatype dt, int count) {
	layout_t l = {0, 0, 0, 0};
	MPI_Aint lb = 0, ext = 0, tl = 0, text = 0;
	PMPI_Type_size(dt, &l.size);
	PMPI_Type_get_extent(dt, &lb, &ext);
	PMPI_Type_get_true_extent(dt, &tl, &text);
	l.tlb = tl;
	l.span = count > 0 ? text + (MPI_Aint)(count - 1) * ext : 0;
	SC_LOCK();
	sc_type *t = sc_type_get(dt);
	int decoded_contig = t && t->id && t->contig;
	SC_UNLOCK();
	l.contig = decoded_contig && tl == 0 && text == l.size && (count <= 1 || ext == l.size);
	return l;
}

uint64_t rep_data_bytes(int count, MPI_Datatype dt) {
	int size = 0;
	PMPI_Type_size(dt, &size);
	return count > 0 && size > 0 ? (uint64_t)size * (uint64_t)count : 0;
}

// data returns the first bytes data bytes of (buf, count, dt), or NULL.
static const void *data(const void *buf, int count, MPI_Datatype dt, uint64_t bytes) {
	if (bytes == 0) return buf;
	layout_t l = layout_of(dt, count);
	if (l.contig) return buf;
	if (l.size <= 0) return NULL;
	uint64_t n = (bytes + (uint64_t)l.size - 1) / (uint64_t)l.size;
	if (n > (uint64_t)count) return NULL;
	int ps = 0, pos = 0;
	if (PMPI_Pack_size((int)n, dt, MPI_COMM_WORLD, &ps) != MPI_SUCCESS) return NULL;
	void *p = scratch_of((size_t)ps);
	if (!p || PMPI_Pack(buf, (int)n, dt, p, ps, &pos, MPI_COMM_WORLD) != MPI_SUCCESS || (uint64_t)pos < bytes) return NULL;
	return p;
}

int rep_hash_data(const void *buf, int count, MPI_Datatype dt, uint64_t bytes, uint64_t h[2]) {
	if (bytes == 0) { // count 0, whatever the buffer (it may be NULL)
		scGoHash128(NULL, 0, h);
		return 0;
	}
	const void *p = data(buf, count, dt, bytes);
	if (!p) return -1;
	scGoHash128((void *)p, (size_t)bytes, h);
	return 0;
}

// put writes bytes data bytes into (buf, count, dt), as a receive would.
static int put(void *buf, int count, MPI_Datatype dt, const void *src, uint64_t bytes) {
	if (bytes == 0) return 0;
	layout_t l = layout_of(dt, count);
	if (l.contig) {
		memcpy(buf, src, bytes);
		return 0;
	}
	if (l.size <= 0 || bytes % (uint64_t)l.size != 0 || bytes / (uint64_t)l.size > (uint64_t)count) return -1;
	int pos = 0;
	return PMPI_Unpack(src, (int)bytes, &pos, buf, (int)(bytes / (uint64_t)l.size), dt, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

// The injector (§IV): one bit of a message's data flipped, with the
// configured probability, on the replicas it aims at. It flips the
// message as sent, in a copy: the application's memory stays as it was,
// so each flip damages one message, and corrected counts flips exactly.
static uint64_t rng;
static int rng_set;

static uint64_t next_rand(void) {
	if (!rng_set) {
		rng = sc_rep_conf.seed ? sc_rep_conf.seed : 1;
		rng_set = 1;
	}
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int rep_inject_copy(const void *buf, int count, MPI_Datatype dt, void **copy, const void **from) {
	*copy = NULL;
	*from = buf;
	if (sc_rep_conf.inject <= 0 || !((sc_rep_conf.inject_mask >> sc_rep_replica) & 1)) return 0;
	if ((double)(next_rand() >> 11) * 0x1p-53 >= sc_rep_conf.inject) return 0;
	uint64_t bytes = rep_data_bytes(count, dt);
	if (bytes == 0) return 0;
	layout_t l = layout_of(dt, count);
	char *c = malloc(l.span > 0 ? (size_t)l.span : 1);
	if (!c) return 0;
	memcpy(c, (const char *)buf + l.tlb, (size_t)l.span);
	char *f = c - l.tlb;
	uint64_t bit = next_rand() % (bytes * 8);
	if (l.contig) {
		c[bit / 8] ^= (char)(1u << (bit % 8));
	} else {
		char *p = (char *)data(f, count, dt, bytes);
		if (!p) { free(c); return 0; }
		p[bit / 8] ^= (char)(1u << (bit % 8));
		if (put(f, count, dt, p, bytes) != 0) { free(c); return 0; }
	}
	*copy = c;
	*from = f;
	sc_rep_count.injected++;
	return 1;
}

// Sends of claims in flight, reaped as more go out. A copy sent to
// several replicas (All-to-all) is shared, and freed with its last send.
typedef struct {
	int refs;
	char data[];
} blob;

static MPI_Request *pool_r;
static blob **pool_b;
static int npool, cappool;

static void pool_reap(void) {
	if (!npool) return;
	int out = 0;
	int *idx = malloc(sizeof(int) * (size_t)npool);
	if (!idx) return;
	PMPI_Testsome(npool, pool_r, &out, idx, MPI_STATUSES_IGNORE);
	if (out == MPI_UNDEFINED) out = 0;
	for (int i = 0; i < out; i++) {
		blob *b = pool_b[idx[i]];
		if (--b->refs == 0) free(b);
		pool_b[idx[i]] = NULL;
	}
	int k = 0;
	for (int i = 0; i < npool; i++)
		if (pool_b[i]) {
			pool_r[k] = pool_r[i];
			pool_b[k++] = pool_b[i];
		}
	npool = k;
	free(idx);
}

static void pool_add(MPI_Request r, blob *b) {
	if (npool >= 32) pool_reap();
	if (npool == cappool) {
		int n = cappool ? cappool * 2 : 64;
		MPI_Request *x = realloc(pool_r, sizeof *x * (size_t)n);
		if (x) pool_r = x;
		blob **y = realloc(pool_b, sizeof *y * (size_t)n);
		if (y) pool_b = y;
		if (!x || !y) rep_fail();
		cappool = n;
	}
	pool_r[npool] = r;
	pool_b[npool++] = b;
}

void rep_send_claims(const void *buf, int count, MPI_Datatype dt, int dest, int tag, rep_comm *c) {
	if (!c || c->x == MPI_COMM_NULL || dest < 0 || dest >= c->size) return;
	int r = sc_rep_conf.r, k = sc_rep_replica;
	uint64_t bytes = rep_data_bytes(count, dt);
	if (bytes > 0x7fffffff) return; // past an int count of bytes: not compared, as the receiver finds
	if (sc_rep_conf.protocol == SC_REP_MSGPLUSHASH) {
		blob *b = malloc(sizeof(blob) + sizeof(rep_claim));
		if (!b) rep_fail();
		b->refs = 1;
		rep_claim cl = {c->seq[dest]++, bytes, {0, 0}};
		if (rep_hash_data(buf, count, dt, bytes, cl.h) != 0) cl.len = UINT64_MAX; // cannot say: never agrees
		memcpy(b->data, &cl, sizeof cl);
		MPI_Request q;
		PMPI_Isend(b->data, sizeof cl, MPI_BYTE, ((k + 1) % r) * c->size + dest, tag, c->x, &q);
		pool_add(q, b);
	} else {
		const void *p = data(buf, count, dt, bytes);
		blob *b = malloc(sizeof(blob) + (size_t)bytes);
		if (!b) rep_fail();
		b->refs = r - 1;
		if (p) memcpy(b->data, p, (size_t)bytes);
		else memset(b->data, 0, (size_t)bytes);
		for (int i = 0; i < r; i++) {
			if (i == k) continue;
			MPI_Request q;
			PMPI_Isend(b->data, (int)bytes, MPI_BYTE, i * c->size + dest, tag, c->x, &q);
			pool_add(q, b);
		}
	}
	sc_rep_count.claims_sent++;
}

// could says whether q, as posted, could match a message from s with t.
static int could(const rep_req *q, int s, int t) {
	return (q->psrc == MPI_ANY_SOURCE || q->psrc == s) && (q->ptag == MPI_ANY_TAG || q->ptag == t);
}

static void mprobe_bounded(int src, int tag, MPI_Comm c, MPI_Message *m, MPI_Status *st, const char *what) {
	int flag = 0;
	double deadline = 0;
	for (unsigned spins = 0;; spins++) {
		PMPI_Improbe(src, tag, c, &flag, m, st);
		if (flag) return;
		if (spins < 64) continue;
		if ((spins & 255) == 0) {
			double now = PMPI_Wtime();
			if (deadline == 0) deadline = now + sc_rep_conf.wait;
			else if (now > deadline) rep_timeout(what);
		}
		sched_yield();
	}
}

static void pull_one(rep_req *e, int s, int t) {
	rep_comm *c = e->c;
	int r = sc_rep_conf.r, k = sc_rep_replica;
	MPI_Status st;
	char what[128];
	if (sc_rep_conf.protocol == SC_REP_MSGPLUSHASH) {
		int from = (k - 1 + r) % r;
		snprintf(what, sizeof what, "replica %d of rank %d to send the hash of its message (tag %d)", from, s, t);
		rep_recv_bounded(&e->claim, sizeof e->claim, from * c->size + s, t, c->x, &st, what);
		int n = 0;
		PMPI_Get_count(&st, MPI_BYTE, &n);
		if (n != (int)sizeof e->claim) e->claim.len = UINT64_MAX;
		return;
	}
	for (int i = 0; i < r; i++) {
		if (i == k) continue;
		MPI_Message m;
		snprintf(what, sizeof what, "replica %d of rank %d to send its copy (tag %d)", i, s, t);
		mprobe_bounded(i * c->size + s, t, c->x, &m, &st, what);
		int n = 0;
		PMPI_Get_count(&st, MPI_BYTE, &n);
		e->copies[i] = malloc(n > 0 ? (size_t)n : 1);
		if (!e->copies[i]) rep_fail();
		e->copylen[i] = (uint64_t)(n > 0 ? n : 0);
		PMPI_Mrecv(e->copies[i], n, MPI_BYTE, &m, &st);
	}
}

// settle waits, without completing it for the application, for an
// earlier receive that has matched a message of the stream: its claims
// come first.
static void settle(rep_req *q, MPI_Status *st) {
	int done = 0;
	double deadline = 0;
	for (unsigned spins = 0;; spins++) {
		PMPI_Request_get_status(q->real, &done, st);
		if (done) return;
		if (spins < 64) continue;
		if ((spins & 255) == 0) {
			double now = PMPI_Wtime();
			if (deadline == 0) deadline = now + sc_rep_conf.wait;
			else if (now > deadline) rep_timeout("an earlier receive of the same source and tag to complete");
		}
		sched_yield();
	}
}

// unclaimed says whether a message that arrived with st has no claims:
// cancelled, or past what a claim's send counts in bytes (an int), which
// the sender skipped alike.
static int unclaimed(const MPI_Status *st) {
	int cx = 0;
	MPI_Count n = 0;
	PMPI_Test_cancelled(st, &cx);
	PMPI_Get_elements_x(st, MPI_BYTE, &n);
	return cx || n > 0x7fffffff;
}

void rep_pull(rep_req *e, const MPI_Status *st) {
	rep_comm *c = e->c;
	if (e->has_claim || !c || c->x == MPI_COMM_NULL || st->MPI_SOURCE < 0) return;
	if (unclaimed(st)) {
		e->has_claim = 1;
		return;
	}
	int s = st->MPI_SOURCE, t = st->MPI_TAG;
	for (rep_req *q = c->pend_head; q && q->post_seq < e->post_seq; q = q->pnext) {
		if (q == e || q->has_claim || !q->posted || q->real == MPI_REQUEST_NULL || !could(q, s, t)) continue;
		MPI_Status qs;
		settle(q, &qs);
		rep_pull(q, &qs);
	}
	pull_one(e, s, t);
	e->has_claim = 1;
}

// Reports.

static void fmt_hash(char *b, size_t n, uint64_t len, const uint64_t h[2]) {
	if (len == UINT64_MAX) snprintf(b, n, "(none)");
	else snprintf(b, n, "%016llx%016llx over %llu bytes", (unsigned long long)h[1], (unsigned long long)h[0],
		(unsigned long long)len);
}

static void finding(int kind, const rep_req *e, const MPI_Status *st, const char *call, const char *detail) {
	char cname[MPI_MAX_OBJECT_NAME + 32];
	rep_comm_name(e->c, cname, sizeof cname);
	scGoRepFinding(kind, (char *)call, cname, e->c->me, st->MPI_SOURCE, st->MPI_TAG, (char *)detail);
}

// A claim: what replica i says the message is.
typedef struct {
	int replica;
	uint64_t len;
	uint64_t h[2];
} vclaim;

static int same(const vclaim *a, const vclaim *b) {
	return a->len == b->len && a->h[0] == b->h[0] && a->h[1] == b->h[1] && a->len != UINT64_MAX;
}

// plurality finds the claim at least two replicas make and more make than
// any other; it returns its index in v, or -1.
static int plurality(const vclaim *v, int n) {
	int best = -1, bestn = 0, tie = 0;
	for (int i = 0; i < n; i++) {
		int m = 0;
		for (int j = 0; j < n; j++) m += same(&v[i], &v[j]);
		if (m > bestn) { best = i; bestn = m; tie = 0; }
		else if (m == bestn && !same(&v[i], &v[best])) tie = 1;
	}
	return bestn >= 2 && !tie ? best : -1;
}

static void claims_text(char *b, size_t n, const vclaim *v, int nv) {
	size_t off = 0;
	b[0] = 0;
	for (int i = 0; i < nv && off < n; i++) {
		char h[80];
		fmt_hash(h, sizeof h, v[i].len, v[i].h);
		off += (size_t)snprintf(b + off, n - off, "%sreplica %d: %s", i ? "; " : "", v[i].replica, h);
	}
}

static void no_majority(const rep_req *e, const MPI_Status *st, const char *call, const vclaim *v, int nv) {
	char claims[512], detail[768];
	claims_text(claims, sizeof claims, v, nv);
	snprintf(detail, sizeof detail, "the replicas of rank %d sent different copies (%s), and no copy has two replicas "
		"behind it: the job ends rather than go on with one no majority vouches for", st->MPI_SOURCE, claims);
	sc_rep_count.uncorrectable++;
	finding(3, e, st, call, detail);
	rep_fail();
}

static void disagree(const rep_req *e, const MPI_Status *st, const char *call, const vclaim *v, int nv) {
	char claims[512], detail[768];
	claims_text(claims, sizeof claims, v, nv);
	snprintf(detail, sizeof detail, "the replicas of rank %d sent different copies (%s); with 2 replicas neither can be "
		"trusted%s", st->MPI_SOURCE, claims, sc_rep_conf.report ? ": this replica goes on with its own" : "");
	sc_rep_count.uncorrectable++;
	finding(2, e, st, call, detail);
	if (!sc_rep_conf.report) rep_fail();
}

static void corrected(const rep_req *e, const MPI_Status *st, const char *call, const vclaim *v, int nv) {
	char claims[512], detail[768];
	claims_text(claims, sizeof claims, v, nv);
	snprintf(detail, sizeof detail, "this replica's copy was voted out (%s) and replaced by the majority's before the "
		"receive returned", claims);
	sc_rep_count.corrected++;
	finding(1, e, st, call, detail);
}

// The discovery's records, on rep_fix.
typedef struct {
	int32_t comm, src, tag, from;
	uint64_t seq;
	vclaim claims[2];
} report;

typedef struct {
	int32_t comm, src, tag, pad;
	uint64_t seq, len;
} copyhdr;

#define STASH 64
static report stash[STASH];
static int nstash;
static uint64_t *fix_sent, *fix_read; // reports, by replica

static int is(const report *r, const report *id) {
	return r->comm == id->comm && r->src == id->src && r->tag == id->tag && r->seq == id->seq;
}

// wait_report returns a neighbour's report on the message id names. Others
// (from a replica whose disagreement this one did not share, or ahead of
// this one) are kept for a later discovery, the newest STASH of them.
static report wait_report(const report *id, int down, int up) {
	for (int i = 0; i < nstash; i++)
		if (is(&stash[i], id) && (stash[i].from == down || stash[i].from == up)) {
			report r = stash[i];
			stash[i] = stash[--nstash];
			return r;
		}
	for (;;) {
		report r;
		MPI_Status st;
		rep_recv_bounded(&r, sizeof r, MPI_ANY_SOURCE, TAG_REPORT, rep_fix, &st,
			"a neighbour replica's report on a message whose copies disagree");
		fix_read[st.MPI_SOURCE]++;
		r.from = st.MPI_SOURCE;
		if (is(&r, id) && (r.from == down || r.from == up)) return r;
		if (nstash == STASH) memmove(stash, stash + 1, sizeof stash - sizeof *stash), nstash--;
		stash[nstash++] = r;
	}
}

// discover settles a MsgPlusHash disagreement with r = 3.
static void discover(rep_req *e, const MPI_Status *st, const char *call, uint64_t len, const uint64_t h[2]) {
	int r = sc_rep_conf.r, k = sc_rep_replica, up = (k + 1) % r, down = (k - 1 + r) % r;
	if (!fix_sent) {
		fix_sent = calloc((size_t)r, sizeof *fix_sent);
		fix_read = calloc((size_t)r, sizeof *fix_read);
		if (!fix_sent || !fix_read) rep_fail();
	}
	report me = {e->c->id, st->MPI_SOURCE, st->MPI_TAG, k, e->claim.seq,
		{{k, len, {h[0], h[1]}}, {down, e->claim.len, {e->claim.h[0], e->claim.h[1]}}}};
	rep_send_bounded(&me, sizeof me, down, TAG_REPORT, rep_fix, "a neighbour replica to take a report");
	rep_send_bounded(&me, sizeof me, up, TAG_REPORT, rep_fix, "a neighbour replica to take a report");
	fix_sent[down]++;
	fix_sent[up]++;
	report theirs = wait_report(&me, down, up);
	vclaim v[3];
	int nv = 0;
	for (int i = 0; i < 2; i++) v[nv++] = me.claims[i];
	for (int i = 0; i < 2; i++) {
		vclaim *c = &theirs.claims[i];
		int j = 0;
		while (j < nv && v[j].replica != c->replica) j++;
		if (j == nv) v[nv++] = *c;
		else if (!same(&v[j], c)) no_majority(e, st, call, v, nv); // one sender replica, two stories
	}
	int w = plurality(v, nv);
	if (w < 0 || nv != 3) no_majority(e, st, call, v, nv);
	int odd = -1;
	for (int i = 0; i < nv; i++)
		if (!same(&v[i], &v[w])) odd = v[i].replica;
	copyhdr ch = {me.comm, me.src, me.tag, 0, me.seq, len};
	if (odd == down) {
		// Sender k-1 is corrupt: receiver k-1 holds its copy; this one
		// holds a verified one, and sends it.
		const void *p = data(e->buf, e->count, e->dt, len);
		char *b = malloc(sizeof ch + (size_t)len);
		if (!b || !p) rep_fail();
		memcpy(b, &ch, sizeof ch);
		memcpy(b + sizeof ch, p, (size_t)len);
		rep_send_bounded(b, (int)(sizeof ch + len), down, TAG_COPY, rep_fix, "a neighbour replica to take a corrected copy");
		free(b);
		return;
	}
	if (odd != k) no_majority(e, st, call, v, nv);
	// This copy is the corrupt one: receiver k+1 sends the verified copy.
	MPI_Message m;
	MPI_Status cs;
	mprobe_bounded(up, TAG_COPY, rep_fix, &m, &cs, "a neighbour replica's verified copy");
	int n = 0;
	PMPI_Get_count(&cs, MPI_BYTE, &n);
	char *b = malloc(n > 0 ? (size_t)n : 1);
	if (!b) rep_fail();
	PMPI_Mrecv(b, n, MPI_BYTE, &m, &cs);
	copyhdr got;
	uint64_t fixed[2] = {0, 0};
	if (n < (int)sizeof got) no_majority(e, st, call, v, nv);
	memcpy(&got, b, sizeof got);
	if (got.comm != ch.comm || got.src != ch.src || got.tag != ch.tag || got.seq != ch.seq || got.len != len ||
			(uint64_t)n != sizeof got + len)
		no_majority(e, st, call, v, nv);
	scGoHash128(b + sizeof got, (size_t)len, fixed);
	if (len != v[w].len || fixed[0] != v[w].h[0] || fixed[1] != v[w].h[1] || put(e->buf, e->count, e->dt, b + sizeof got, len) != 0)
		no_majority(e, st, call, v, nv);
	free(b);
	corrected(e, st, call, v, nv);
}

// rep_received votes on a receive that completed with st (rc its result):
// claims taken in order, the copies compared, a minority copy replaced.
void rep_received(rep_req *e, MPI_Status *st, const char *call, int rc) {
	rep_comm *c = e->c;
	if (!c || st->MPI_SOURCE < 0) return;
	if (c->x == MPI_COMM_NULL) {
		sc_rep_count.uncompared[SC_REP_U_COMM]++;
		return;
	}
	int cx = 0;
	PMPI_Test_cancelled(st, &cx);
	if (cx) return;
	if (unclaimed(st)) {
		sc_rep_count.uncompared[SC_REP_U_TRUNC]++;
		return;
	}
	rep_pull(e, st);
	MPI_Count got = 0;
	PMPI_Get_elements_x(st, MPI_BYTE, &got);
	uint64_t h[2] = {0, 0}, len = got > 0 ? (uint64_t)got : 0;
	if (rc != MPI_SUCCESS || got == MPI_UNDEFINED || rep_hash_data(e->buf, e->count, e->dt, len, h) != 0) {
		sc_rep_count.uncompared[SC_REP_U_TRUNC]++;
		return;
	}
	sc_rep_count.compared++;
	int r = sc_rep_conf.r, k = sc_rep_replica;
	vclaim v[3];
	int nv = 0;
	if (sc_rep_conf.protocol == SC_REP_MSGPLUSHASH) {
		vclaim mine = {k, len, {h[0], h[1]}}, theirs = {(k - 1 + r) % r, e->claim.len, {e->claim.h[0], e->claim.h[1]}};
		if (same(&mine, &theirs)) return;
		sc_rep_count.found++;
		v[0] = mine;
		v[1] = theirs;
		if (r == 2) disagree(e, st, call, v, 2);
		else discover(e, st, call, len, h);
		return;
	}
	for (int i = 0; i < r; i++) {
		v[nv].replica = i;
		if (i == k) {
			v[nv].len = len;
			v[nv].h[0] = h[0], v[nv].h[1] = h[1];
		} else {
			v[nv].len = e->copylen[i];
			scGoHash128(e->copies[i], (size_t)e->copylen[i], v[nv].h);
		}
		nv++;
	}
	int all = 1;
	for (int i = 1; i < nv; i++) all &= same(&v[0], &v[i]);
	if (all) return;
	sc_rep_count.found++;
	if (r == 2) {
		disagree(e, st, call, v, nv);
		return;
	}
	int w = plurality(v, nv);
	if (w < 0) no_majority(e, st, call, v, nv);
	if (same(&v[k], &v[w])) return;
	if (put(e->buf, e->count, e->dt, e->copies[v[w].replica], v[w].len) != 0) no_majority(e, st, call, v, nv);
	corrected(e, st, call, v, nv);
}

// rep_claims_finalize waits for the claims still in flight (each to a
// replica that takes it, or the job would not be ending), and reads the
// reports no discovery of this replica read: a replica that did not share
// a disagreement still got its neighbours' reports.
//
// A program that leaves a message unreceived (erroneous, and common) leaves
// its claim unreceived too: a hash has gone out eagerly, but a long
// All-to-all copy waits for a receiver that never comes. Such sends are
// let go after a few seconds rather than hold MPI_Finalize, and the copy
// they send from stays allocated.
void rep_claims_finalize(void) {
	double deadline = PMPI_Wtime() + (sc_rep_conf.wait < 5 ? sc_rep_conf.wait : 5);
	while (npool && PMPI_Wtime() < deadline) {
		pool_reap();
		if (npool) sched_yield();
	}
	for (int i = 0; i < npool; i++) PMPI_Request_free(&pool_r[i]);
	npool = 0;
	int r = sc_rep_conf.r;
	uint64_t *sent = calloc((size_t)r, sizeof *sent), *want = calloc((size_t)r, sizeof *want);
	if (!sent || !want) rep_fail();
	if (fix_sent) memcpy(sent, fix_sent, sizeof *sent * (size_t)r);
	MPI_Request q;
	PMPI_Ialltoall(sent, 1, MPI_UINT64_T, want, 1, MPI_UINT64_T, rep_fix, &q);
	rep_wait_req(&q, MPI_STATUS_IGNORE, "the other replicas at MPI_Finalize");
	for (int j = 0; j < r; j++) {
		uint64_t read = fix_read ? fix_read[j] : 0;
		for (; read < want[j]; read++) {
			report rp;
			rep_recv_bounded(&rp, sizeof rp, j, TAG_REPORT, rep_fix, NULL, "a report still in flight at MPI_Finalize");
		}
	}
	free(sent);
	free(want);
}
