//go:build mpi

// Replication: completion. A receive is voted on when the application
// completes it; which requests complete in MPI_Test, MPI_Testany,
// MPI_Testsome, MPI_Testall, MPI_Waitany and MPI_Waitsome depends on
// timing, so replica 0 calls MPI and tells the others, which then wait
// for exactly those (the paper's §III-C): every replica's application
// takes the same path.
//
// In replica 0, the answers and the envelopes of resolved wildcards go
// out before the votes, whose claims come from other replicas that may be
// waiting for exactly those answers.
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include "repint.h"
#include "_cgo_export.h"

void rep_complete(rep_req *e, MPI_Status *st, const char *call, int rc) {
	switch (e->kind) {
	case REP_RECV:
		if (!e->active) return;
		e->active = 0;
		rep_pend_remove(e);
		e->posted = 0;
		rep_received(e, st, call ? call : e->name, rc);
		if (e->persistent) {
			for (int i = 0; i < 3; i++) {
				free(e->copies[i]);
				e->copies[i] = NULL;
			}
			e->has_claim = 0;
			e->real = e->placeholder ? MPI_REQUEST_NULL : e->app;
			return;
		}
		rep_req_drop(e);
		return;
	case REP_SEND:
		if (!e->persistent) rep_req_drop(e);
		return;
	case REP_COLL:
		rep_coll_vote(&e->out, e->out.name);
		rep_req_drop(e);
		return;
	}
}

// cancelled_status is what a receive that replica 0 cancelled before it
// matched returns here, where it was never posted.
static void cancelled_status(MPI_Status *s) {
	memset(s, 0, sizeof *s);
	s->MPI_SOURCE = MPI_ANY_SOURCE;
	s->MPI_TAG = MPI_ANY_TAG;
	PMPI_Status_set_elements(s, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(s, 1);
}

// Receives that the application freed while pending: MPI still completes
// them, and their claims must still be taken in turn, or the next
// receive of their stream would take theirs.
static rep_req **zombies;
static int nzombies, capzombies;

static void poll_zombies(void) {
	for (int i = 0; i < nzombies; i++) {
		rep_req *e = zombies[i];
		int done = 0;
		MPI_Status st;
		MPI_Test(&e->real, &done, &st);
		if (!done) continue;
		rep_complete(e, &st, NULL, MPI_SUCCESS);
		zombies[i--] = zombies[--nzombies];
	}
}

// rep_wait_one waits for *r as MPI_Wait does, resolving a receive that
// waits on replica 0 first (elsewhere than replica 0) or after (there).
int rep_wait_one(MPI_Request *r, MPI_Status *st, const char *call) {
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	rep_req *e = rep_req_get(*r);
	int rc;
	if (e && e->kind == REP_RECV && e->inq && sc_rep_replica != 0) rep_resolve_for(e, NULL);
	MPI_Request ph = *r;
	int free_ph = e && e->placeholder && !e->persistent;
	if (e && e->placeholder) {
		if (e->real == MPI_REQUEST_NULL) {
			cancelled_status(s);
			rc = MPI_SUCCESS;
		} else {
			rc = MPI_Wait(&e->real, s);
		}
	} else {
		rc = MPI_Wait(r, s);
	}
	if (e && e->inq && sc_rep_replica == 0) rep_resolve_for(e, s);
	if (e) rep_complete(e, s, call, rc);
	if (free_ph) {
		PMPI_Request_free(&ph);
		*r = MPI_REQUEST_NULL;
	}
	poll_zombies();
	return rc;
}

int rep_Wait(MPI_Request *r, MPI_Status *st) {
	REP_ENTER();
	int rc = rep_wait_one(r, st, NULL);
	REP_LEAVE();
	return rc;
}

// rep_waitall waits for all of rs, as MPI_Waitall does.
int rep_waitall(int n, MPI_Request rs[], MPI_Status sts[]) {
	rep_req **e = calloc((size_t)(n > 0 ? n : 1), sizeof *e);
	MPI_Request *arr = malloc(sizeof *arr * (size_t)(n > 0 ? n : 1));
	MPI_Status *ss = malloc(sizeof *ss * (size_t)(n > 0 ? n : 1));
	if (!e || !arr || !ss) rep_fail();
	for (int i = 0; i < n; i++) {
		e[i] = rep_req_get(rs[i]);
		if (e[i] && e[i]->kind == REP_RECV && e[i]->inq && sc_rep_replica != 0) rep_resolve_for(e[i], NULL);
	}
	for (int i = 0; i < n; i++) arr[i] = e[i] && e[i]->placeholder ? e[i]->real : rs[i];
	int rc = MPI_Waitall(n, arr, ss);
	for (int i = 0; i < n; i++) {
		if (!e[i] || !e[i]->placeholder) {
			rs[i] = arr[i];
			continue;
		}
		if (e[i]->real == MPI_REQUEST_NULL) cancelled_status(&ss[i]);
		e[i]->real = arr[i];
	}
	if (sc_rep_replica == 0)
		for (int i = 0; i < n; i++)
			if (e[i] && e[i]->inq) rep_resolve_for(e[i], &ss[i]);
	for (int i = 0; i < n; i++) {
		if (!e[i]) continue;
		int one = rc == MPI_ERR_IN_STATUS ? ss[i].MPI_ERROR : rc;
		int free_ph = e[i]->placeholder && !e[i]->persistent;
		rep_complete(e[i], &ss[i], NULL, one);
		if (free_ph) {
			PMPI_Request_free(&rs[i]);
			rs[i] = MPI_REQUEST_NULL;
		}
	}
	if (sts != MPI_STATUSES_IGNORE) memcpy(sts, ss, sizeof *ss * (size_t)n);
	free(e);
	free(arr);
	free(ss);
	poll_zombies();
	return rc;
}

int rep_Waitall(int n, MPI_Request rs[], MPI_Status sts[]) {
	REP_ENTER();
	int rc = rep_waitall(n, rs, sts);
	REP_LEAVE();
	return rc;
}

// done0 is replica 0's part once MPI said which requests completed: the
// envelopes of those in a queue, then the votes.
static void done0(rep_req *e, MPI_Status *s, int rc) {
	if (!e) return;
	if (e->inq) rep_resolve_for(e, s);
	rep_complete(e, s, NULL, rc);
}

int rep_Test(MPI_Request *r, int *flag, MPI_Status *st) {
	REP_ENTER();
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int32_t a[2];
	int rc;
	if (sc_rep_replica == 0) {
		rep_req *e = rep_req_get(*r);
		rc = MPI_Test(r, flag, s);
		a[0] = rc;
		a[1] = *flag;
		rep_ctl_send(CTL_TEST, a, sizeof a);
		if (rc == MPI_SUCCESS && *flag) done0(e, s, rc);
		poll_zombies();
	} else {
		rep_ctl_recv(CTL_TEST, a, sizeof a);
		*flag = a[1];
		rc = a[1] ? rep_wait_one(r, s, NULL) : a[0];
		if (!a[1]) rep_progress();
	}
	REP_LEAVE();
	return rc;
}

int rep_Testall(int n, MPI_Request rs[], int *flag, MPI_Status sts[]) {
	REP_ENTER();
	int32_t a[2];
	int rc;
	if (sc_rep_replica == 0) {
		rep_req **e = calloc((size_t)(n > 0 ? n : 1), sizeof *e);
		MPI_Status *ss = malloc(sizeof *ss * (size_t)(n > 0 ? n : 1));
		if (!e || !ss) rep_fail();
		for (int i = 0; i < n; i++) e[i] = rep_req_get(rs[i]);
		rc = MPI_Testall(n, rs, flag, ss);
		a[0] = rc;
		a[1] = *flag;
		rep_ctl_send(CTL_TESTALL, a, sizeof a);
		if (*flag)
			for (int i = 0; i < n; i++) done0(e[i], &ss[i], rc == MPI_ERR_IN_STATUS ? ss[i].MPI_ERROR : rc);
		if (*flag && sts != MPI_STATUSES_IGNORE) memcpy(sts, ss, sizeof *ss * (size_t)n);
		free(e);
		free(ss);
		poll_zombies();
	} else {
		rep_ctl_recv(CTL_TESTALL, a, sizeof a);
		*flag = a[1];
		rc = a[1] ? rep_waitall(n, rs, sts) : a[0];
		if (!a[1]) rep_progress();
	}
	REP_LEAVE();
	return rc;
}

// any is MPI_Waitany (test 0) or MPI_Testany (test 1).
static int any(int test, int n, MPI_Request rs[], int *index, int *flag, MPI_Status *st) {
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int32_t a[3];
	int rc, f = 1;
	if (sc_rep_replica == 0) {
		rep_req *e0[32], **e = n <= 32 ? e0 : calloc((size_t)n, sizeof *e);
		if (!e) rep_fail();
		for (int i = 0; i < n; i++) e[i] = rep_req_get(rs[i]);
		rc = test ? MPI_Testany(n, rs, index, &f, s) : MPI_Waitany(n, rs, index, s);
		a[0] = rc;
		a[1] = f;
		a[2] = *index;
		rep_ctl_send(test ? CTL_TESTANY : CTL_WAITANY, a, sizeof a);
		if (f && *index != MPI_UNDEFINED && *index >= 0) done0(e[*index], s, rc);
		if (e != e0) free(e);
		poll_zombies();
	} else {
		rep_ctl_recv(test ? CTL_TESTANY : CTL_WAITANY, a, sizeof a);
		rc = a[0];
		f = a[1];
		*index = a[2];
		if (f && a[2] != MPI_UNDEFINED && a[2] >= 0 && a[2] < n) {
			rc = rep_wait_one(&rs[a[2]], s, NULL);
		} else if (!f) {
			rep_progress();
		} else {
			memset(s, 0, sizeof *s); // none active: the empty status
			s->MPI_SOURCE = MPI_ANY_SOURCE;
			s->MPI_TAG = MPI_ANY_TAG;
		}
	}
	if (flag) *flag = f;
	return rc;
}

int rep_Waitany(int n, MPI_Request rs[], int *index, MPI_Status *st) {
	REP_ENTER();
	int rc = any(0, n, rs, index, NULL, st);
	REP_LEAVE();
	return rc;
}

int rep_Testany(int n, MPI_Request rs[], int *index, int *flag, MPI_Status *st) {
	REP_ENTER();
	int rc = any(1, n, rs, index, flag, st);
	REP_LEAVE();
	return rc;
}

// some is MPI_Waitsome (test 0) or MPI_Testsome (test 1).
static int some(int test, int n, MPI_Request rs[], int *outcount, int idx[], MPI_Status sts[]) {
	MPI_Status *ss = malloc(sizeof *ss * (size_t)(n > 0 ? n : 1));
	int32_t *a = malloc(sizeof *a * (size_t)(n + 2));
	if (!ss || !a) rep_fail();
	int rc;
	if (sc_rep_replica == 0) {
		rep_req **e = calloc((size_t)(n > 0 ? n : 1), sizeof *e);
		if (!e) rep_fail();
		for (int i = 0; i < n; i++) e[i] = rep_req_get(rs[i]);
		rc = test ? MPI_Testsome(n, rs, outcount, idx, ss) : MPI_Waitsome(n, rs, outcount, idx, ss);
		int m = *outcount == MPI_UNDEFINED ? 0 : *outcount;
		a[0] = rc;
		a[1] = *outcount;
		for (int k = 0; k < m; k++) a[2 + k] = idx[k];
		rep_ctl_send(test ? CTL_TESTSOME : CTL_WAITSOME, a, (int)sizeof *a * (m + 2));
		for (int k = 0; k < m; k++) done0(e[idx[k]], &ss[k], rc == MPI_ERR_IN_STATUS ? ss[k].MPI_ERROR : rc);
		free(e);
		poll_zombies();
	} else {
		memset(a, 0, sizeof *a * (size_t)(n + 2));
		rep_ctl_recv(test ? CTL_TESTSOME : CTL_WAITSOME, a, (int)sizeof *a * (n + 2));
		rc = a[0];
		*outcount = a[1];
		int m = a[1] == MPI_UNDEFINED ? 0 : a[1];
		if (m == 0) rep_progress();
		for (int k = 0; k < m && k < n; k++) {
			idx[k] = a[2 + k];
			int one = rep_wait_one(&rs[idx[k]], &ss[k], NULL);
			if (one != MPI_SUCCESS) rc = MPI_ERR_IN_STATUS, ss[k].MPI_ERROR = one;
		}
	}
	int m = *outcount == MPI_UNDEFINED ? 0 : *outcount;
	if (sts != MPI_STATUSES_IGNORE) memcpy(sts, ss, sizeof *ss * (size_t)m);
	free(ss);
	free(a);
	return rc;
}

int rep_Waitsome(int n, MPI_Request rs[], int *outcount, int idx[], MPI_Status sts[]) {
	REP_ENTER();
	int rc = some(0, n, rs, outcount, idx, sts);
	REP_LEAVE();
	return rc;
}

int rep_Testsome(int n, MPI_Request rs[], int *outcount, int idx[], MPI_Status sts[]) {
	REP_ENTER();
	int rc = some(1, n, rs, outcount, idx, sts);
	REP_LEAVE();
	return rc;
}

int rep_Request_free(MPI_Request *r) {
	REP_ENTER();
	rep_req *e = rep_req_get(*r);
	int rc = MPI_SUCCESS;
	// Out of the queue in every replica alike: replica 0 keeps its receive
	// (below), the others never post theirs.
	if (e && e->kind == REP_RECV) rep_queue_remove(e);
	if (e && e->kind == REP_RECV && e->active && e->posted && !e->placeholder) {
		// Kept, and completed by later calls (see zombies).
		if (nzombies == capzombies) {
			int n = capzombies ? capzombies * 2 : 8;
			rep_req **x = realloc(zombies, sizeof *x * (size_t)n);
			if (!x) rep_fail();
			zombies = x;
			capzombies = n;
		}
		rep_req_rekey(e, MPI_REQUEST_NULL);
		e->persistent = 0;
		zombies[nzombies++] = e;
		*r = MPI_REQUEST_NULL;
	} else {
		if (e) {
			e->inj = NULL; // a send's copy may still be going out: it stays
			rep_req_drop(e);
		}
		rc = MPI_Request_free(r);
	}
	REP_LEAVE();
	return rc;
}

// Calls the checking layer does not wrap, answered alike in every
// replica.

int MPI_Request_get_status(MPI_Request r, int *flag, MPI_Status *st) {
	if (!sc_rep_on || sc_rep_in) return PMPI_Request_get_status(r, flag, st);
	struct {
		int32_t rc, flag;
		MPI_Status st;
	} a;
	memset(&a, 0, sizeof a);
	REP_ENTER();
	if (sc_rep_replica == 0) {
		int f = 0;
		rep_req *e = rep_req_get(r);
		a.rc = PMPI_Request_get_status(e && e->placeholder ? e->real : r, &f, &a.st);
		a.flag = f;
		rep_ctl_send(CTL_GETSTATUS, &a, sizeof a);
	} else {
		rep_ctl_recv(CTL_GETSTATUS, &a, sizeof a);
	}
	REP_LEAVE();
	*flag = a.flag;
	if (st != MPI_STATUS_IGNORE && a.flag) *st = a.st;
	return a.rc;
}

// A cancel's outcome is agreed: MPI may cancel a receive in one replica
// and let its message match in another. A receive posted in every
// replica (not waiting in the queue) is cancelled in each, and each waits
// for its outcome; it stays cancelled only if it was in all of them.
// Otherwise the message is there for every replica (each replica's
// sender sent it): a replica whose cancel took posts the receive again,
// with the envelope another replica's matched, and the application's
// request is that receive. A receive still waiting in the
// queue is replica 0's alone to cancel: the others follow its outcome
// when it is resolved (repreq.c).
static int cancel_agreed(rep_req *e, MPI_Request *r) {
	MPI_Status st;
	int rc = MPI_SUCCESS, done = 0;
	if (e->real == MPI_REQUEST_NULL) cancelled_status(&st), done = 1;
	else if ((rc = PMPI_Cancel(&e->real)) != MPI_SUCCESS) return rc;
	double deadline = 0;
	for (unsigned k = 0; !done; k++) {
		PMPI_Request_get_status(e->real, &done, &st);
		if (done) break;
		if (k < 64 || (k & 255)) continue;
		double now = PMPI_Wtime();
		if (deadline == 0) deadline = now + sc_rep_conf.wait;
		else if (now > deadline) rep_timeout("a cancelled receive to complete");
		sched_yield();
	}
	int cx = 0;
	PMPI_Test_cancelled(&st, &cx);
	int32_t mine[3] = {cx, st.MPI_SOURCE, st.MPI_TAG}, *all = malloc(sizeof mine * (size_t)sc_rep_conf.r);
	if (!all) rep_fail();
	MPI_Request q;
	PMPI_Iallgather(mine, 3, MPI_INT32_T, all, 3, MPI_INT32_T, rep_set, &q);
	rep_wait_req(&q, MPI_STATUS_IGNORE, "the other replicas' outcome of MPI_Cancel");
	int j = 0;
	while (j < sc_rep_conf.r && all[3 * j]) j++;
	if (cx && j < sc_rep_conf.r) {
		// Matched elsewhere: receive it here too. The cancelled request
		// completes (in the checking layer too) and the new one takes
		// its place: the application's handle changes (a placeholder's
		// does not), as an MPI_Request in C and an INTEGER in Fortran is
		// passed by reference.
		if (e->real != MPI_REQUEST_NULL) MPI_Wait(&e->real, MPI_STATUS_IGNORE);
		rc = rep_post_recv(e, all[3 * j + 1], all[3 * j + 2]);
		if (rc != MPI_SUCCESS) e->real = MPI_REQUEST_NULL;
		if (!e->placeholder) {
			*r = e->real;
			rep_req_rekey(e, e->real);
		}
	}
	free(all);
	return rc;
}

int MPI_Cancel(MPI_Request *r) {
	if (!sc_rep_on || sc_rep_in) return PMPI_Cancel(r);
	rep_req *e = rep_req_get(*r);
	if (e && e->kind == REP_RECV && !e->inq && !e->persistent && e->active && !e->cancelled && sc_rep_conf.r > 1) {
		REP_ENTER();
		int rc = cancel_agreed(e, r);
		REP_LEAVE();
		return rc;
	}
	if (e && e->placeholder) {
		// Not posted here: replica 0's cancel decides, and says so when
		// the receive completes.
		if (e->real == MPI_REQUEST_NULL) return MPI_SUCCESS;
		return PMPI_Cancel(&e->real);
	}
	return PMPI_Cancel(r);
}
