//go:build mpi

// Completion: the Wait and Test calls, and what the library does when a
// receive completes: read its header and check it.
//
// A header is read from the message's source and tag, and headers from
// one source and tag come in the order their messages were sent. Messages
// are matched in that order too, but can complete out of it: a long
// message ahead of a short one, both from one source with one tag. So a
// receive whose message completes while a receive posted before it, which
// could have matched an earlier message of the same stream, is still
// pending, is checked later, when that one is (it is "deferred").
#include <stdlib.h>
#include <string.h>
#include "sc.h"
#include "req.h"
#include "_cgo_export.h"

uint64_t sc_seq;
int sc_msg_blocks(MPI_Comm comm, int src, int tag, uint64_t seq);
void sc_check_now(void *buf, int count, MPI_Datatype dt, MPI_Comm comm, const MPI_Status *st, int call, const char *name,
		int have_csum, uint64_t csum, int injected);

// The table of followed requests, by handle.
static sc_req **tab;
static size_t tabcap, tablen;

static size_t slot_of(void *h, size_t cap) {
	uint64_t x = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 20) & (cap - 1);
}

static sc_req *lookup(MPI_Request r, size_t *at) {
	if (!tabcap) { *at = 0; return NULL; }
	size_t j = slot_of(r, tabcap);
	while (tab[j]) {
		if (tab[j]->req == r) { *at = j; return tab[j]; }
		j = (j + 1) & (tabcap - 1);
	}
	*at = j;
	return NULL;
}

static void grow(void) {
	size_t ncap = tabcap ? tabcap * 2 : 256;
	sc_req **n = calloc(ncap, sizeof *n);
	if (!n) return;
	for (size_t i = 0; i < tabcap; i++) {
		sc_req *e = tab[i];
		if (!e) continue;
		size_t j = slot_of(e->req, ncap);
		while (n[j]) j = (j + 1) & (ncap - 1);
		n[j] = e;
	}
	free(tab);
	tab = n;
	tabcap = ncap;
}

// unlink_at empties slot at and re-seats the entries of its cluster
// after it (deletion under linear probing).
static void unlink_at(size_t at) {
	tab[at] = NULL;
	tablen--;
	size_t j = (at + 1) & (tabcap - 1);
	while (tab[j]) {
		sc_req *m = tab[j];
		tab[j] = NULL;
		size_t k = slot_of(m->req, tabcap);
		while (tab[k]) k = (k + 1) & (tabcap - 1);
		tab[k] = m;
		j = (j + 1) & (tabcap - 1);
	}
}

int sc_req_any(void) { return tablen > 0; }

sc_req *sc_req_get(MPI_Request r) {
	if (!tablen || r == MPI_REQUEST_NULL) return NULL;
	size_t at;
	return lookup(r, &at);
}

// detach takes e out of the table, keeping it for the thread that is
// completing it.
static void detach(sc_req *e, size_t at) {
	unlink_at(at);
	e->detached = 1;
}

// sc_req_claim marks r's entry as being completed by this thread. Lock
// held.
//
// An entry already being completed is another thread's, whose handle MPI
// gave meanwhile to a request the library does not follow (two threads
// may not complete one request at once): it is not this one's.
sc_req *sc_req_claim(MPI_Request r) {
	sc_req *e = sc_req_get(r);
	if (!e || e->completing) return NULL;
	e->completing = 1;
	return e;
}

// sc_req_unclaim gives back an entry whose request did not complete.
// Lock held.
void sc_req_unclaim(sc_req *e) {
	if (!e) return;
	e->completing = 0;
	if (e->detached) sc_req_drop(e); // its handle went to another request: it is done
}

sc_req *sc_req_new(MPI_Request r, int kind) {
	if ((tablen + 1) * 2 > tabcap) grow();
	if (!tabcap) return NULL;
	size_t at;
	sc_req *e = lookup(r, &at);
	if (e && e->completing) detach(e, at); // MPI reused the handle of a request completing in another thread
	else if (e) sc_req_drop(e);            // a stale entry
	lookup(r, &at);
	e = calloc(1, sizeof *e);
	if (!e) return NULL;
	e->req = r;
	e->kind = kind;
	e->pending_index = -1;
	tab[at] = e;
	tablen++;
	return e;
}

void sc_req_drop(sc_req *e) {
	size_t at;
	if (e->detached) {
		sc_pending_remove(e);
		if (e->kind == SC_REQ_RECV || e->kind == SC_REQ_PSEND) sc_type_unref(e->dt);
		free(e->out);
		free(e->in);
		free(e);
		return;
	}
	if (lookup(e->req, &at) != e) return;
	sc_pending_remove(e);
	if (e->kind == SC_REQ_RECV || e->kind == SC_REQ_PSEND) sc_type_unref(e->dt);
	unlink_at(at);
	free(e->out);
	free(e->in);
	free(e);
}

// Pending receives, in no order (the seq says which came first).
static sc_req **pending;
static int npending, cappending;

void sc_pending_add(sc_req *e) {
	if (e->pending_index >= 0) return;
	if (npending == cappending) {
		int n = cappending ? cappending * 2 : 16;
		sc_req **x = realloc(pending, (size_t)n * sizeof *x);
		if (!x) return;
		pending = x;
		cappending = n;
	}
	e->pending_index = npending;
	pending[npending++] = e;
}

void sc_pending_remove(sc_req *e) {
	int i = e->pending_index;
	if (i < 0) return;
	pending[i] = pending[--npending];
	pending[i]->pending_index = i;
	e->pending_index = -1;
}

// Deferred checks, kept in seq order.
typedef struct {
	void *buf;
	int count;
	MPI_Datatype dt;
	MPI_Comm comm;
	MPI_Status st;
	int call;
	const char *name;
	uint64_t seq;
	int have_csum, injected;
	uint64_t csum;
} deferred;
static deferred *defs;
static int ndefs, capdefs;

static int could_match(int want_src, int want_tag, int src, int tag) {
	return (want_src == src || want_src == MPI_ANY_SOURCE) && (want_tag == tag || want_tag == MPI_ANY_TAG);
}

// blocked says whether a message from (src, tag) on comm, received by a
// receive posted at seq, must wait for an earlier one's header.
static int blocked(MPI_Comm comm, int src, int tag, uint64_t seq, int skip_def) {
	for (int i = 0; i < npending; i++) {
		sc_req *p = pending[i];
		if (p->active && p->seq < seq && p->comm == comm && could_match(p->peer, p->tag, src, tag)) return 1;
	}
	for (int i = 0; i < ndefs && i < skip_def; i++) {
		deferred *d = &defs[i];
		if (d->seq < seq && d->comm == comm && d->st.MPI_SOURCE == src && d->st.MPI_TAG == tag) return 1;
	}
	return sc_msg_blocks(comm, src, tag, seq);
}

static void run_deferred(void) {
	int progress = 1;
	while (progress && ndefs) {
		progress = 0;
		for (int i = 0; i < ndefs; i++) {
			deferred d = defs[i];
			if (blocked(d.comm, d.st.MPI_SOURCE, d.st.MPI_TAG, d.seq, i)) continue;
			memmove(&defs[i], &defs[i + 1], (size_t)(ndefs - i - 1) * sizeof *defs);
			ndefs--;
			sc_check_now(d.buf, d.count, d.dt, d.comm, &d.st, d.call, d.name, d.have_csum, d.csum, d.injected);
			sc_type_unref(d.dt);
			progress = 1;
			break;
		}
	}
}

// sc_arrived is called, lock held, when a receive posted at seq has its
// message in buf.
void sc_arrived(void *buf, int count, MPI_Datatype dt, MPI_Comm comm, uint64_t seq, const MPI_Status *st, int call,
		const char *name) {
	if (st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0) return;
	int cancelled = 0;
	PMPI_Test_cancelled(st, &cancelled);
	if (cancelled) return;
	if (!blocked(comm, st->MPI_SOURCE, st->MPI_TAG, seq, ndefs)) {
		sc_check_now(buf, count, dt, comm, st, call, name, 0, 0, 0);
		run_deferred();
		return;
	}
	if (ndefs == capdefs) {
		int n = capdefs ? capdefs * 2 : 8;
		deferred *x = realloc(defs, (size_t)n * sizeof *x);
		if (!x) return;
		defs = x;
		capdefs = n;
	}
	// The data is the application's once its receive returns, so its
	// checksum is taken now and compared when the header is read.
	deferred d = {buf, count, dt, comm, *st, call, name, seq, 0, 0, 0};
	if (sc_mode >= SC_CHECKSUM) {
		d.csum = sc_received_csum(buf, count, dt, st, 1, &d.injected);
		d.have_csum = 1;
	}
	sc_type_ref(dt);
	int i = ndefs;
	while (i > 0 && defs[i - 1].seq > seq) i--;
	memmove(&defs[i + 1], &defs[i], (size_t)(ndefs - i) * sizeof *defs);
	defs[i] = d;
	ndefs++;
}

// sc_completed handles a followed request that MPI reports complete with
// status st. Lock held.
//
// The entry stays claimed (completing) until it is dropped or given back:
// a collective's check lets go of the lock while it waits.
void sc_completed(sc_req *e, MPI_Status *st) {
	switch (e->kind) {
	case SC_REQ_RECV:
		if (!e->active) break; // an inactive persistent request
		e->active = 0;
		sc_pending_remove(e);
		sc_arrived(e->buf, e->count, e->dt, e->comm, e->seq, st, e->call, e->name);
		if (!e->persistent) {
			sc_req_drop(e);
			return;
		}
		run_deferred();
		break;
	case SC_REQ_COLL:
		sc_coll_finish(e);
		sc_req_drop(e);
		return;
	default:
		if (!e->persistent) {
			sc_req_drop(e);
			return;
		}
	}
	sc_req_unclaim(e);
}

// Freed receives still complete, and their headers must still be read, or
// every later header from that stream would be paired with the wrong
// message. So MPI_Request_free of a pending receive keeps the request
// here and tests it on later calls.
static MPI_Request *zombies;
static int nzombies, capzombies;

static void poll_zombies(void) {
	for (int i = 0; i < nzombies; i++) {
		MPI_Request r = zombies[i];
		int done = 0;
		MPI_Status st;
		PMPI_Test(&zombies[i], &done, &st);
		if (!done) continue;
		sc_req *e = sc_req_get(r);
		if (e) { e->persistent = 0; sc_completed(e, &st); }
		zombies[i--] = zombies[--nzombies];
	}
}

int MPI_Request_free(MPI_Request *r) {
	SC_REP(rep_Request_free(r));
	if (!sc_active || !sc_req_any()) return PMPI_Request_free(r);
	SC_LOCK();
	sc_req *e = sc_req_get(*r);
	if (e && e->completing) e = NULL; // another thread's (see sc_req_claim)
	if (e && e->kind == SC_REQ_RECV && e->active) {
		if (nzombies == capzombies) {
			int n = capzombies ? capzombies * 2 : 8;
			MPI_Request *x = realloc(zombies, (size_t)n * sizeof *x);
			if (x) { zombies = x; capzombies = n; }
		}
		if (nzombies < capzombies) {
			zombies[nzombies++] = *r;
			*r = MPI_REQUEST_NULL;
			SC_UNLOCK();
			return MPI_SUCCESS;
		}
	}
	if (e) sc_req_drop(e);
	SC_UNLOCK();
	return PMPI_Request_free(r);
}

// Completion calls. Each keeps the handles as they were before MPI sets
// completed ones to MPI_REQUEST_NULL, and a status for each even when the
// application ignores them.

#define STACK_N 32

int MPI_Wait(MPI_Request *r, MPI_Status *st) {
	SC_REP(rep_Wait(r, st));
	if (!sc_active || (!sc_req_any() && !nzombies)) return PMPI_Wait(r, st);
	MPI_Request orig = *r;
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	SC_LOCK();
	sc_req *e = sc_req_claim(orig);
	SC_UNLOCK();
	int rc = PMPI_Wait(r, s);
	SC_LOCK();
	if (e) sc_completed(e, s);
	poll_zombies();
	SC_UNLOCK();
	return rc;
}

// coll_hold says whether a non-blocking collective's request must not be
// reported complete yet because its check has not completed: MPI_Test
// never blocks on the check. Lock held.
static int coll_hold(MPI_Request r) {
	sc_req *e = sc_req_get(r);
	return e && !e->completing && e->kind == SC_REQ_COLL && !sc_coll_ready(e);
}

int MPI_Test(MPI_Request *r, int *flag, MPI_Status *st) {
	SC_REP(rep_Test(r, flag, st));
	if (!sc_active || (!sc_req_any() && !nzombies)) return PMPI_Test(r, flag, st);
	MPI_Request orig = *r;
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	SC_LOCK();
	if (coll_hold(orig)) { poll_zombies(); SC_UNLOCK(); *flag = 0; return MPI_SUCCESS; }
	sc_req *e = sc_req_claim(orig);
	SC_UNLOCK();
	int rc = PMPI_Test(r, flag, s);
	SC_LOCK();
	if (*flag && e) sc_completed(e, s);
	else sc_req_unclaim(e);
	poll_zombies();
	SC_UNLOCK();
	return rc;
}

// some handles the completion calls over arrays. kind: 0 Waitall, 1
// Testall, 2 Waitany, 3 Testany, 4 Waitsome, 5 Testsome.
static int some(int kind, int n, MPI_Request rs[], int *flag, int *index, int *outcount, int idx[], MPI_Status sts[]) {
	MPI_Request origbuf[STACK_N], *orig = n <= STACK_N ? origbuf : malloc((size_t)n * sizeof *orig);
	sc_req *epbuf[STACK_N], **ep = n <= STACK_N ? epbuf : malloc((size_t)n * sizeof *ep);
	unsigned char hidbuf[STACK_N], *hid = n <= STACK_N ? hidbuf : malloc((size_t)n);
	MPI_Status stbuf[STACK_N], *ss = sts;
	int alloc_st = 0, rc = MPI_SUCCESS;
	if (!orig || !ep || !hid) { rc = MPI_ERR_NO_MEM; goto out; }
	if (sts == MPI_STATUSES_IGNORE) {
		if (n <= STACK_N) ss = stbuf;
		else if (!(ss = malloc((size_t)n * sizeof *ss))) { rc = MPI_ERR_NO_MEM; goto out; }
		else alloc_st = 1;
	}
	memcpy(orig, rs, (size_t)n * sizeof *orig);
	memset(hid, 0, (size_t)n);
	int testing = kind == 1 || kind == 3 || kind == 5;
	int held = 0;
	SC_LOCK();
	for (int i = 0; i < n; i++) {
		// A collective whose check is pending is hidden from MPI_Test*
		// (as MPI_REQUEST_NULL) and put back after, so MPI cannot
		// complete it.
		if (testing && coll_hold(rs[i])) {
			hid[i] = 1;
			rs[i] = MPI_REQUEST_NULL;
			held++;
			ep[i] = NULL;
			continue;
		}
		ep[i] = sc_req_claim(rs[i]);
	}
	SC_UNLOCK();
	int one = 0, single;
	MPI_Status one_st;
	switch (kind) {
	case 0: rc = PMPI_Waitall(n, rs, ss); break;
	case 1:
		if (held) { *flag = 0; break; } // not all can be complete
		rc = PMPI_Testall(n, rs, flag, ss);
		break;
	case 2: rc = PMPI_Waitany(n, rs, index, &one_st); one = 1; break;
	case 3: rc = PMPI_Testany(n, rs, index, flag, &one_st); one = 1; break;
	case 4: rc = PMPI_Waitsome(n, rs, outcount, idx, ss); break;
	case 5: rc = PMPI_Testsome(n, rs, outcount, idx, ss); break;
	}
	// With only hidden requests live, MPI answers as if all were
	// inactive (MPI_UNDEFINED); they are not: nothing completed yet.
	if (held && kind == 3 && *index == MPI_UNDEFINED) *flag = 0;
	if (held && kind == 5 && *outcount == MPI_UNDEFINED) *outcount = 0;
	for (int i = 0; i < n; i++)
		if (hid[i]) rs[i] = orig[i]; // put back what was hidden
	SC_LOCK();
	switch (kind) {
	case 0: case 1:
		if ((kind == 1 && !*flag) || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) break;
		// Receives first: a collective's check may let go of the lock.
		for (int pass = 0; pass < 2; pass++)
			for (int i = 0; i < n; i++) {
				sc_req *e = ep[i];
				if (!e || (pass == 0) != (e->kind == SC_REQ_RECV)) continue;
				ep[i] = NULL;
				if (rc == MPI_ERR_IN_STATUS && ss[i].MPI_ERROR != MPI_SUCCESS) { sc_req_unclaim(e); continue; }
				sc_completed(e, &ss[i]);
			}
		break;
	case 2: case 3:
		single = *index;
		if ((kind == 3 && !*flag) || single == MPI_UNDEFINED) break;
		if (ep[single]) {
			sc_req *e = ep[single];
			ep[single] = NULL;
			sc_completed(e, &one_st);
		}
		if (sts != MPI_STATUSES_IGNORE && one) *(MPI_Status *)sts = one_st; // Waitany/Testany take one status
		break;
	case 4: case 5:
		if (*outcount == MPI_UNDEFINED) break;
		for (int k = 0; k < *outcount; k++) {
			sc_req *e = ep[idx[k]];
			if (!e) continue;
			ep[idx[k]] = NULL;
			sc_completed(e, &ss[k]);
		}
		break;
	}
	for (int i = 0; i < n; i++) sc_req_unclaim(ep[i]); // those that did not complete
	poll_zombies();
	SC_UNLOCK();
out:
	if (orig != origbuf) free(orig);
	if (ep != epbuf) free(ep);
	if (hid != hidbuf) free(hid);
	if (alloc_st) free(ss);
	return rc;
}

int MPI_Waitall(int n, MPI_Request rs[], MPI_Status sts[]) {
	SC_REP(rep_Waitall(n, rs, sts));
	if (!sc_active || (!sc_req_any() && !nzombies)) return PMPI_Waitall(n, rs, sts);
	return some(0, n, rs, NULL, NULL, NULL, NULL, sts);
}

int MPI_Testall(int n, MPI_Request rs[], int *flag, MPI_Status sts[]) {
	SC_REP(rep_Testall(n, rs, flag, sts));
	if (!sc_active || (!sc_req_any() && !nzombies)) return PMPI_Testall(n, rs, flag, sts);
	return some(1, n, rs, flag, NULL, NULL, NULL, sts);
}

int MPI_Waitany(int n, MPI_Request rs[], int *index, MPI_Status *st) {
	SC_REP(rep_Waitany(n, rs, index, st));
	if (!sc_active || (!sc_req_any() && !nzombies)) return PMPI_Waitany(n, rs, index, st);
	return some(2, n, rs, NULL, index, NULL, NULL, st == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : st);
}

int MPI_Testany(int n, MPI_Request rs[], int *index, int *flag, MPI_Status *st) {
	SC_REP(rep_Testany(n, rs, index, flag, st));
	if (!sc_active || (!sc_req_any() && !nzombies)) return PMPI_Testany(n, rs, index, flag, st);
	return some(3, n, rs, flag, index, NULL, NULL, st == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : st);
}

int MPI_Waitsome(int n, MPI_Request rs[], int *outcount, int idx[], MPI_Status sts[]) {
	SC_REP(rep_Waitsome(n, rs, outcount, idx, sts));
	if (!sc_active || (!sc_req_any() && !nzombies)) return PMPI_Waitsome(n, rs, outcount, idx, sts);
	return some(4, n, rs, NULL, NULL, outcount, idx, sts);
}

int MPI_Testsome(int n, MPI_Request rs[], int *outcount, int idx[], MPI_Status sts[]) {
	SC_REP(rep_Testsome(n, rs, outcount, idx, sts));
	if (!sc_active || (!sc_req_any() && !nzombies)) return PMPI_Testsome(n, rs, outcount, idx, sts);
	return some(5, n, rs, NULL, NULL, outcount, idx, sts);
}

// sc_reqs_finalize completes what MPI_Finalize would otherwise leave: the
// freed receives still pending are waited for (MPI requires them to
// complete before MPI_Finalize) and their headers read.
void sc_reqs_finalize(void) {
	SC_LOCK();
	while (nzombies) {
		MPI_Status st;
		MPI_Request r = zombies[nzombies - 1];
		PMPI_Wait(&zombies[nzombies - 1], &st);
		nzombies--;
		sc_req *e = sc_req_get(r);
		if (e) { e->persistent = 0; sc_completed(e, &st); }
	}
	SC_UNLOCK();
}
