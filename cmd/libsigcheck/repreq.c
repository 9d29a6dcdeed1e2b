//go:build mpi

// Replication: the requests the layer follows, and how a wildcard
// receive is resolved by replica 0 (the paper's §III-C).
//
// Replica 0 posts every receive as the application does. A receive from
// MPI_ANY_SOURCE could match different messages in different replicas,
// so replica k > 0 does not post it: it gives the application a
// placeholder (an inactive persistent receive, a real handle that MPI
// knows), and posts the receive, with the source and tag replica 0's
// matched, when replica 0 says. While such a receive waits on a
// communicator, every later receive there waits behind it too (the
// queue), since posted first it could take a message that replica 0's
// wildcard took; the queue is posted, in order, as replica 0 resolves it.
//
// Replica 0 keeps the same queue, without waiting on it, so that both
// know alike when an answer is due: when the application completes a
// receive still in the queue, replica 0 sends, for it and for every
// unresolved wildcard before it, the envelope it matched, or "open" for a
// wildcard whose request is not complete. A receive completed before an
// open wildcard ahead of it is posted alone, with its exact envelope: in
// replica 0 it did not go to the wildcard, so the wildcard had not matched
// its message's stream, unless the wildcard's own, earlier message of
// that source and tag was still in transfer when it was asked (the one
// case this cannot order, documented in docs/replication.md).
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include "repint.h"
#include "_cgo_export.h"

uint64_t rep_post_seq;

static rep_req **tab;
static size_t tabcap, tablen;

static size_t slot_of(void *h, size_t cap) {
	uint64_t x = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 20) & (cap - 1);
}

static rep_req *lookup(MPI_Request r, size_t *at) {
	if (!tabcap) { *at = 0; return NULL; }
	size_t j = slot_of(r, tabcap);
	while (tab[j]) {
		if (tab[j]->app == r) { *at = j; return tab[j]; }
		j = (j + 1) & (tabcap - 1);
	}
	*at = j;
	return NULL;
}

static int grow(void) {
	size_t ncap = tabcap ? tabcap * 2 : 256;
	rep_req **n = calloc(ncap, sizeof *n);
	if (!n) return -1;
	for (size_t i = 0; i < tabcap; i++) {
		rep_req *e = tab[i];
		if (!e) continue;
		size_t j = slot_of(e->app, ncap);
		while (n[j]) j = (j + 1) & (ncap - 1);
		n[j] = e;
	}
	free(tab);
	tab = n;
	tabcap = ncap;
	return 0;
}

static void unlink_at(size_t at) {
	tab[at] = NULL;
	tablen--;
	size_t j = (at + 1) & (tabcap - 1);
	while (tab[j]) {
		rep_req *m = tab[j];
		tab[j] = NULL;
		size_t k = slot_of(m->app, tabcap);
		while (tab[k]) k = (k + 1) & (tabcap - 1);
		tab[k] = m;
		j = (j + 1) & (tabcap - 1);
	}
}

int rep_req_any(void) { return tablen > 0; }

rep_req *rep_req_get(MPI_Request r) {
	if (!tablen || r == MPI_REQUEST_NULL) return NULL;
	size_t at;
	return lookup(r, &at);
}

static void q_remove(rep_req *e);

// A datatype that the application frees while a request still uses it
// stays alive in MPI until the request is done (the checking layer's
// reference count, types.c): the vote at completion needs it.
void rep_type_hold(MPI_Datatype dt) {
	SC_LOCK();
	sc_type_ref(dt);
	SC_UNLOCK();
}

void rep_type_release(MPI_Datatype dt) {
	SC_LOCK();
	sc_type_unref(dt);
	SC_UNLOCK();
}

void rep_req_hold(rep_req *e) {
	if (e->held) return;
	rep_type_hold(e->dt);
	e->held = 1;
}

static void free_entry(rep_req *e) {
	if (e->held) rep_type_release(e->dt);
	rep_pend_remove(e);
	q_remove(e);
	for (int i = 0; i < 3; i++) free(e->copies[i]);
	free(e->inj);
	rep_out_free(&e->out);
	free(e);
}

// rep_req_new follows a new request whose handle is app (or, for a
// matched probe's message, which has none, MPI_REQUEST_NULL: then it is
// not in the table). An entry still under that handle is stale: MPI gave
// the handle of a finished request to this one.
rep_req *rep_req_new(MPI_Request app, int kind) {
	rep_req *e = calloc(1, sizeof *e);
	if (!e) return NULL;
	e->app = app;
	e->real = app;
	e->kind = kind;
	e->active = 1;
	e->env_src = MPI_ANY_SOURCE;
	if (app == MPI_REQUEST_NULL) return e;
	size_t at;
	rep_req *old = lookup(app, &at);
	if (old) {
		unlink_at(at);
		free_entry(old);
	}
	if ((tablen + 1) * 2 > tabcap && grow() != 0) {
		free(e);
		return NULL;
	}
	lookup(app, &at);
	tab[at] = e;
	tablen++;
	return e;
}

// rep_req_rekey files e under a new application handle.
void rep_req_rekey(rep_req *e, MPI_Request app) {
	size_t at;
	if (e->app != MPI_REQUEST_NULL && lookup(e->app, &at) == e) unlink_at(at);
	e->app = app;
	if (app == MPI_REQUEST_NULL) return;
	rep_req *old = lookup(app, &at);
	if (old) {
		unlink_at(at);
		free_entry(old);
	}
	if ((tablen + 1) * 2 > tabcap && grow() != 0) return;
	lookup(app, &at);
	tab[at] = e;
	tablen++;
}

void rep_req_drop(rep_req *e) {
	size_t at;
	if (e->app != MPI_REQUEST_NULL && lookup(e->app, &at) == e) unlink_at(at);
	free_entry(e);
}

// The receives posted in MPI on a communicator and not yet voted on, in
// the order they were posted: a receive's claim is taken only after those
// of the earlier ones that could have matched the same stream (repp2p.c).
void rep_pend_add(rep_req *e, int src, int tag) {
	rep_comm *c = e->c;
	e->psrc = src;
	e->ptag = tag;
	e->posted = 1;
	e->post_seq = ++rep_post_seq;
	if (!c || e->pprev || c->pend_head == e) return;
	e->pnext = NULL;
	e->pprev = c->pend_tail;
	if (c->pend_tail) c->pend_tail->pnext = e;
	else c->pend_head = e;
	c->pend_tail = e;
}

void rep_pend_remove(rep_req *e) {
	rep_comm *c = e->c;
	if (!c || (!e->pprev && c->pend_head != e)) return;
	if (e->pprev) e->pprev->pnext = e->pnext;
	else c->pend_head = e->pnext;
	if (e->pnext) e->pnext->pprev = e->pprev;
	else c->pend_tail = e->pprev;
	e->pprev = e->pnext = NULL;
}

// rep_defers says whether a receive from src posted now on c joins the
// queue: a wildcard always, anything behind a queued receive too.
int rep_defers(rep_comm *c, int src) {
	if (!c || sc_rep_conf.r < 2) return 0;
	return src == MPI_ANY_SOURCE || c->q_head != NULL;
}

void rep_queue_add(rep_req *e) {
	rep_comm *c = e->c;
	e->inq = 1;
	e->wild = e->src == MPI_ANY_SOURCE;
	e->unres = e->wild;
	e->qnext = NULL;
	e->qprev = c->q_tail;
	if (c->q_tail) c->q_tail->qnext = e;
	else c->q_head = e;
	c->q_tail = e;
}

void rep_queue_remove(rep_req *e) { q_remove(e); }

static void q_remove(rep_req *e) {
	if (!e->inq) return;
	rep_comm *c = e->c;
	if (e->qprev) e->qprev->qnext = e->qnext;
	else c->q_head = e->qnext;
	if (e->qnext) e->qnext->qprev = e->qprev;
	else c->q_tail = e->qprev;
	e->qprev = e->qnext = NULL;
	e->inq = 0;
}

// rep_post_recv posts e's receive in MPI, from src with tag, through the
// checking layer.
int rep_post_recv(rep_req *e, int src, int tag) {
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Irecv(e->buf, e->count, e->dt, src, tag, e->c->vc, &r);
	if (rc != MPI_SUCCESS) return rc;
	e->real = r;
	rep_pend_add(e, src, tag);
	return rc;
}

// post_late posts a receive another replica deferred, once its turn
// came: a wildcard with replica 0's envelope, a cancelled one not at all.
static void post_late(rep_req *e) {
	if (e->posted || e->cancelled || sc_rep_replica == 0) return;
	int src = e->src, tag = e->tag;
	if (e->wild || e->env_src != MPI_ANY_SOURCE) {
		src = e->env_src;
		tag = e->env_tag;
	}
	if (rep_post_recv(e, src, tag) != MPI_SUCCESS) e->cancelled = 1;
}

static void flush(rep_comm *c) {
	while (c->q_head && !c->q_head->unres) {
		rep_req *e = c->q_head;
		q_remove(e);
		post_late(e);
	}
}

enum { ENV_OPEN = 0, ENV_MATCHED = 1, ENV_CANCELLED = 2 };

static void env_of(const MPI_Status *st, int32_t out[3]) {
	int cx = 0;
	PMPI_Test_cancelled(st, &cx);
	out[0] = cx ? ENV_CANCELLED : ENV_MATCHED;
	out[1] = st->MPI_SOURCE;
	out[2] = st->MPI_TAG;
}

static void apply(rep_req *w, const int32_t env[3]) {
	if (env[0] == ENV_OPEN) return;
	w->unres = 0;
	w->env_src = env[1];
	w->env_tag = env[2];
	if (env[0] == ENV_CANCELLED) w->cancelled = 1;
	if (w->wild) sc_rep_count.wildcards++;
}

// rep_resolve_for runs where the application completes e, which is in
// its communicator's queue: replica 0 after MPI completed e (st is e's
// status there), every other replica before it posts e. Replica 0 tells
// the envelope of e and of each unresolved wildcard ahead of it; all
// apply the answers alike, post (elsewhere than replica 0) what came to
// the head of the queue, and e alone if it is still behind an open
// wildcard.
void rep_resolve_for(rep_req *e, const MPI_Status *st) {
	if (!e->inq || sc_rep_conf.r < 2) return;
	rep_comm *c = e->c;
	int m = 0;
	for (rep_req *w = c->q_head; w && w != e; w = w->qnext)
		if (w->unres) m++;
	int32_t stackbuf[3 * 16], *env = m < 16 ? stackbuf : malloc(sizeof(int32_t) * 3 * (size_t)(m + 1));
	if (!env) rep_fail();
	if (sc_rep_replica == 0) {
		env_of(st, &env[3 * m]);
		// Backwards from e: a wildcard that could have matched a message
		// a receive posted after it matched (same communicator, its tag
		// or MPI_ANY_TAG; its source is any) has, by MPI's
		// non-overtaking rule, matched an earlier message: it may still
		// be in transfer, and replica 0 waits for it to complete. Only a
		// wildcard that none of the later receives' messages could match
		// may have matched nothing; one still open after a few rounds of
		// progress is reported open.
		rep_req *wstack[16], **ws = m <= 16 ? wstack : malloc(sizeof *ws * (size_t)m);
		if (!ws) rep_fail();
		int i = 0;
		for (rep_req *w = c->q_head; w && w != e; w = w->qnext)
			if (w->unres) ws[i++] = w;
		for (i = m - 1; i >= 0; i--) {
			rep_req *w = ws[i];
			int must = 0;
			for (int j = i + 1; j <= m && !must; j++) {
				int32_t *x = &env[3 * j];
				if (x[0] != ENV_MATCHED || x[1] == MPI_PROC_NULL || x[1] < 0) continue;
				must = w->tag == MPI_ANY_TAG || w->tag == x[2];
			}
			int done = 0;
			MPI_Status wst;
			double deadline = 0;
			for (unsigned k = 0; !done; k++) {
				PMPI_Request_get_status(w->real, &done, &wst);
				if (done || (!must && k >= 64)) break;
				if (k < 64 || (k & 255)) continue;
				double now = PMPI_Wtime();
				if (deadline == 0) deadline = now + sc_rep_conf.wait;
				else if (now > deadline) rep_timeout("a wildcard receive to complete, whose message a later receive's proves matched");
				sched_yield();
			}
			if (done) env_of(&wst, &env[3 * i]);
			else env[3 * i] = ENV_OPEN, env[3 * i + 1] = env[3 * i + 2] = 0;
		}
		if (ws != wstack) free(ws);
		rep_ctl_send(CTL_RESOLVE, env, (int)sizeof(int32_t) * 3 * (m + 1));
	} else {
		rep_ctl_recv(CTL_RESOLVE, env, (int)sizeof(int32_t) * 3 * (m + 1));
	}
	int i = 0;
	for (rep_req *w = c->q_head; w && w != e; w = w->qnext)
		if (w->unres) apply(w, &env[3 * i++]);
	int32_t *mine = &env[3 * m];
	if (mine[0] == ENV_OPEN) mine[0] = ENV_MATCHED; // e is complete in replica 0
	e->unres = 1; // apply counts and clears it
	apply(e, mine);
	if (env != stackbuf) free(env);
	flush(c);
	if (e->inq) {
		q_remove(e);
		post_late(e);
	}
}
