//go:build mpi

// Replication: the point-to-point calls. A send goes to the same replica
// of its destination, as the application's own message, after its claim
// (a hash, or copies) went to the others; a receive is followed until it
// completes, and voted on then (repvote.c). A receive from
// MPI_ANY_SOURCE waits for replica 0 elsewhere (repreq.c), and so do
// MPI_Probe, MPI_Iprobe and the matched probes, whose answers replica 0
// gives.
#include <stdlib.h>
#include <string.h>
#include "repint.h"
#include "_cgo_export.h"

enum { M_SEND, M_SSEND, M_RSEND, M_BSEND };

// outgoing prepares a send on c: the injector's copy, if it aims here
// (only where the message is compared: a flip nobody compares would be a
// wrong answer the tool made), and the claims.
static void outgoing(const void *buf, int count, MPI_Datatype dt, int dest, int tag, rep_comm *c, void **copy,
		const void **from) {
	*copy = NULL;
	*from = buf;
	if (!c || dest == MPI_PROC_NULL || c->x == MPI_COMM_NULL) return;
	rep_inject_copy(buf, count, dt, copy, from);
	rep_send_claims(*from, count, dt, dest, tag, c);
}

static int blocking_send(int mode, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	void *copy;
	const void *from;
	outgoing(buf, count, dt, dest, tag, dest == MPI_PROC_NULL ? NULL : rep_comm_get(vc), &copy, &from);
	int rc;
	switch (mode) {
	case M_SSEND: rc = MPI_Ssend(from, count, dt, dest, tag, vc); break;
	case M_RSEND: rc = MPI_Rsend(from, count, dt, dest, tag, vc); break;
	case M_BSEND: rc = MPI_Bsend(from, count, dt, dest, tag, vc); break;
	default: rc = MPI_Send(from, count, dt, dest, tag, vc);
	}
	free(copy);
	REP_LEAVE();
	return rc;
}

int rep_Send(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c) { return blocking_send(M_SEND, b, n, t, d, g, c); }
int rep_Ssend(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c) { return blocking_send(M_SSEND, b, n, t, d, g, c); }
int rep_Rsend(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c) { return blocking_send(M_RSEND, b, n, t, d, g, c); }
int rep_Bsend(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c) { return blocking_send(M_BSEND, b, n, t, d, g, c); }

static int nonblocking_send(int mode, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		MPI_Request *r) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	void *copy;
	const void *from;
	outgoing(buf, count, dt, dest, tag, dest == MPI_PROC_NULL ? NULL : rep_comm_get(vc), &copy, &from);
	int rc;
	switch (mode) {
	case M_SSEND: rc = MPI_Issend(from, count, dt, dest, tag, vc, r); break;
	case M_RSEND: rc = MPI_Irsend(from, count, dt, dest, tag, vc, r); break;
	case M_BSEND: rc = MPI_Ibsend(from, count, dt, dest, tag, vc, r); break;
	default: rc = MPI_Isend(from, count, dt, dest, tag, vc, r);
	}
	if (copy) {
		// The copy goes when the send completes; an entry that cannot be
		// made leaves it allocated.
		rep_req *e = rc == MPI_SUCCESS ? rep_req_new(*r, REP_SEND) : NULL;
		if (e) e->inj = copy;
		else if (rc != MPI_SUCCESS) free(copy);
	}
	REP_LEAVE();
	return rc;
}

int rep_Isend(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r) {
	return nonblocking_send(M_SEND, b, n, t, d, g, c, r);
}
int rep_Issend(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r) {
	return nonblocking_send(M_SSEND, b, n, t, d, g, c, r);
}
int rep_Irsend(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r) {
	return nonblocking_send(M_RSEND, b, n, t, d, g, c, r);
}
int rep_Ibsend(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r) {
	return nonblocking_send(M_BSEND, b, n, t, d, g, c, r);
}

// Persistent sends send their claims at each MPI_Start. They go from the
// application's buffer, bound to the request, so the injector skips them.
static int persistent_send(int mode, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		MPI_Request *r) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	int rc;
	switch (mode) {
	case M_SSEND: rc = MPI_Ssend_init(buf, count, dt, dest, tag, vc, r); break;
	case M_RSEND: rc = MPI_Rsend_init(buf, count, dt, dest, tag, vc, r); break;
	case M_BSEND: rc = MPI_Bsend_init(buf, count, dt, dest, tag, vc, r); break;
	default: rc = MPI_Send_init(buf, count, dt, dest, tag, vc, r);
	}
	rep_comm *c = rc == MPI_SUCCESS && dest != MPI_PROC_NULL ? rep_comm_get(vc) : NULL;
	if (c && c->x != MPI_COMM_NULL) {
		rep_req *e = rep_req_new(*r, REP_SEND);
		if (!e) rep_fail();
		e->persistent = 1;
		e->active = 0;
		e->buf = (void *)buf;
		e->count = count;
		e->dt = dt;
		e->src = dest;
		e->tag = tag;
		e->c = c;
		rep_req_hold(e);
	}
	REP_LEAVE();
	return rc;
}

int rep_Send_init(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r) {
	return persistent_send(M_SEND, b, n, t, d, g, c, r);
}
int rep_Ssend_init(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r) {
	return persistent_send(M_SSEND, b, n, t, d, g, c, r);
}
int rep_Rsend_init(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r) {
	return persistent_send(M_RSEND, b, n, t, d, g, c, r);
}
int rep_Bsend_init(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r) {
	return persistent_send(M_BSEND, b, n, t, d, g, c, r);
}

static void fill(rep_req *e, void *buf, int count, MPI_Datatype dt, int src, int tag, rep_comm *c, const char *name) {
	e->buf = buf;
	e->count = count;
	e->dt = dt;
	e->src = src;
	e->tag = tag;
	e->c = c;
	e->name = name;
}

int rep_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	int rc = MPI_Recv_init(buf, count, dt, src, tag, vc, r);
	rep_comm *c = rc == MPI_SUCCESS && src != MPI_PROC_NULL ? rep_comm_get(vc) : NULL;
	if (c) {
		rep_req *e = rep_req_new(*r, REP_RECV);
		if (!e) rep_fail();
		fill(e, buf, count, dt, src, tag, c, "MPI_Recv_init");
		rep_req_hold(e);
		e->persistent = 1;
		e->active = 0;
	}
	REP_LEAVE();
	return rc;
}

static void clear_claims(rep_req *e) {
	for (int i = 0; i < 3; i++) {
		free(e->copies[i]);
		e->copies[i] = NULL;
	}
	e->has_claim = 0;
}

// start starts one persistent request as the application's MPI_Start
// would: a send after its claims, a receive as a new receive (into the
// queue, and not started, where replica 0 must resolve it first).
static int start(MPI_Request *r) {
	rep_req *e = rep_req_get(*r);
	if (!e || !e->persistent) return MPI_Start(r);
	if (e->kind == REP_SEND) {
		rep_send_claims(e->buf, e->count, e->dt, e->src, e->tag, e->c);
		if (sc_rep_conf.inject > 0 && ((sc_rep_conf.inject_mask >> sc_rep_replica) & 1))
			sc_rep_count.uncompared[SC_REP_U_PERSIST]++;
		return MPI_Start(r);
	}
	if (e->kind != REP_RECV) return MPI_Start(r);
	clear_claims(e);
	e->active = 1;
	e->cancelled = 0;
	e->env_src = MPI_ANY_SOURCE;
	e->real = *r;
	e->placeholder = 0;
	int defer = rep_defers(e->c, e->src);
	if (defer) rep_queue_add(e);
	if (defer && sc_rep_replica != 0) {
		e->placeholder = 1;
		e->real = MPI_REQUEST_NULL;
		return MPI_SUCCESS;
	}
	int rc = MPI_Start(r);
	if (rc == MPI_SUCCESS) rep_pend_add(e, e->src, e->tag);
	return rc;
}

int rep_Start(MPI_Request *r) {
	REP_ENTER();
	int rc = start(r);
	REP_LEAVE();
	return rc;
}

int rep_Startall(int n, MPI_Request rs[]) {
	REP_ENTER();
	int rc = MPI_SUCCESS;
	for (int i = 0; i < n && rc == MPI_SUCCESS; i++) rc = start(&rs[i]);
	REP_LEAVE();
	return rc;
}

int rep_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	rep_comm *c = src == MPI_PROC_NULL ? NULL : rep_comm_get(vc);
	int defer = rep_defers(c, src), rc;
	if (!c || (!defer && c->x == MPI_COMM_NULL)) {
		rc = MPI_Irecv(buf, count, dt, src, tag, vc, r);
	} else if (defer && sc_rep_replica != 0) {
		// The placeholder: a real handle, never started.
		MPI_Request ph = MPI_REQUEST_NULL;
		rc = PMPI_Recv_init(buf, count, dt, src, tag, vc, &ph);
		if (rc == MPI_SUCCESS) {
			rep_req *e = rep_req_new(ph, REP_RECV);
			if (!e) rep_fail();
			fill(e, buf, count, dt, src, tag, c, "MPI_Irecv");
			rep_req_hold(e);
			e->placeholder = 1;
			e->real = MPI_REQUEST_NULL;
			rep_queue_add(e);
			*r = ph;
		}
	} else {
		rc = MPI_Irecv(buf, count, dt, src, tag, vc, r);
		if (rc == MPI_SUCCESS) {
			rep_req *e = rep_req_new(*r, REP_RECV);
			if (!e) rep_fail();
			fill(e, buf, count, dt, src, tag, c, "MPI_Irecv");
			rep_req_hold(e);
			rep_pend_add(e, src, tag);
			if (defer) rep_queue_add(e);
		}
	}
	REP_LEAVE();
	return rc;
}

// A blocking receive that nothing defers is voted on from an entry on
// the stack: it is posted last, so only earlier ones can come before it.
static void stack_entry(rep_req *e, void *buf, int count, MPI_Datatype dt, int src, int tag, rep_comm *c) {
	memset(e, 0, sizeof *e);
	fill(e, buf, count, dt, src, tag, c, NULL);
	e->psrc = src;
	e->ptag = tag;
	e->env_src = MPI_ANY_SOURCE;
	e->post_seq = ++rep_post_seq;
}

int rep_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	rep_comm *c = src == MPI_PROC_NULL ? NULL : rep_comm_get(vc);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc;
	if (rep_defers(c, src)) {
		MPI_Request q;
		rc = rep_Irecv(buf, count, dt, src, tag, comm, &q);
		if (rc == MPI_SUCCESS) rc = rep_wait_one(&q, s, "MPI_Recv");
	} else {
		rep_req e;
		stack_entry(&e, buf, count, dt, src, tag, c);
		rc = MPI_Recv(buf, count, dt, src, tag, vc, s);
		if (c) rep_received(&e, s, "MPI_Recv", rc);
		clear_claims(&e);
	}
	REP_LEAVE();
	return rc;
}

int rep_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, int rcount,
		MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	rep_comm *c = rep_comm_get(vc);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc;
	if (src != MPI_PROC_NULL && rep_defers(c, src)) {
		// MPI_Sendrecv is a receive and a send started together and
		// waited for together: so it is here, where the receive waits on
		// replica 0.
		MPI_Request q[2];
		MPI_Status ss[2];
		rc = rep_Irecv(rbuf, rcount, rdt, src, rtag, comm, &q[0]);
		if (rc == MPI_SUCCESS) rc = rep_Isend(sbuf, scount, sdt, dest, stag, comm, &q[1]);
		if (rc == MPI_SUCCESS) rc = rep_waitall(2, q, ss);
		*s = ss[0];
		if (rc == MPI_ERR_IN_STATUS) rc = ss[0].MPI_ERROR != MPI_SUCCESS ? ss[0].MPI_ERROR : ss[1].MPI_ERROR;
	} else {
		void *copy;
		const void *from;
		outgoing(sbuf, scount, sdt, dest, stag, c, &copy, &from);
		rep_req e;
		stack_entry(&e, rbuf, rcount, rdt, src, rtag, c);
		rc = MPI_Sendrecv(from, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, vc, s);
		free(copy);
		if (src != MPI_PROC_NULL && c) rep_received(&e, s, "MPI_Sendrecv", rc);
		clear_claims(&e);
	}
	REP_LEAVE();
	return rc;
}

// span_copy copies the memory count × dt spans at buf, returning the
// address to use as the copy's buffer (*mem is what to free).
static const void *span_copy(const void *buf, int count, MPI_Datatype dt, void **mem) {
	MPI_Aint lb = 0, ext = 0, tl = 0, text = 0;
	PMPI_Type_get_extent(dt, &lb, &ext);
	PMPI_Type_get_true_extent(dt, &tl, &text);
	MPI_Aint span = count > 0 ? text + (MPI_Aint)(count - 1) * ext : 0;
	char *m = malloc(span > 0 ? (size_t)span : 1);
	if (!m) rep_fail();
	if (span > 0) memcpy(m, (const char *)buf + tl, (size_t)span);
	*mem = m;
	return m - tl;
}

int rep_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag, MPI_Comm comm,
		MPI_Status *st) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	rep_comm *c = rep_comm_get(vc);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc;
	if (src != MPI_PROC_NULL && rep_defers(c, src)) {
		void *mem;
		const void *out = span_copy(buf, count, dt, &mem);
		MPI_Request q[2];
		MPI_Status ss[2];
		rc = rep_Irecv(buf, count, dt, src, rtag, comm, &q[0]);
		if (rc == MPI_SUCCESS) rc = rep_Isend(out, count, dt, dest, stag, comm, &q[1]);
		if (rc == MPI_SUCCESS) rc = rep_waitall(2, q, ss);
		*s = ss[0];
		if (rc == MPI_ERR_IN_STATUS) rc = ss[0].MPI_ERROR != MPI_SUCCESS ? ss[0].MPI_ERROR : ss[1].MPI_ERROR;
		free(mem);
	} else {
		void *copy;
		const void *from;
		outgoing(buf, count, dt, dest, stag, c, &copy, &from);
		rep_req e;
		stack_entry(&e, buf, count, dt, src, rtag, c);
		// An injected copy is sent by MPI_Sendrecv, which is what
		// MPI_Sendrecv_replace is with a buffer of its own.
		rc = copy ? MPI_Sendrecv(from, count, dt, dest, stag, buf, count, dt, src, rtag, vc, s)
			: MPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, vc, s);
		free(copy);
		if (src != MPI_PROC_NULL && c) rep_received(&e, s, "MPI_Sendrecv_replace", rc);
		clear_claims(&e);
	}
	REP_LEAVE();
	return rc;
}

// Matched probes take a message off the queue: its claims are taken then,
// in order with the receives posted before, and kept until MPI_Mrecv.
static rep_req **msgs;
static int nmsgs, capmsgs;

static void msg_follow(rep_comm *c, MPI_Message m, const MPI_Status *st) {
	if (!c || m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC || c->x == MPI_COMM_NULL) return;
	rep_req *e = rep_req_new(MPI_REQUEST_NULL, REP_MSG);
	if (!e) rep_fail();
	e->msg = m;
	e->c = c;
	e->psrc = st->MPI_SOURCE;
	e->ptag = st->MPI_TAG;
	e->post_seq = ++rep_post_seq;
	rep_pull(e, st);
	if (nmsgs == capmsgs) {
		int n = capmsgs ? capmsgs * 2 : 8;
		rep_req **x = realloc(msgs, sizeof *x * (size_t)n);
		if (!x) rep_fail();
		msgs = x;
		capmsgs = n;
	}
	msgs[nmsgs++] = e;
}

static rep_req *msg_take(MPI_Message m) {
	for (int i = 0; i < nmsgs; i++)
		if (msgs[i]->msg == m) {
			rep_req *e = msgs[i];
			msgs[i] = msgs[--nmsgs];
			return e;
		}
	return NULL;
}

// behind_wildcard says whether receives on vc wait in the queue (posted
// in replica 0, not yet elsewhere): then even a probe of one source could
// see another message elsewhere than in replica 0.
static int behind_wildcard(MPI_Comm vc) {
	rep_comm *c = rep_comm_get(vc);
	return c && c->q_head;
}

int rep_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *m, MPI_Status *st) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc;
	if (src == MPI_ANY_SOURCE || behind_wildcard(vc)) {
		int32_t env[3] = {0, 0, 0};
		if (sc_rep_replica == 0) {
			rc = MPI_Mprobe(src, tag, vc, m, s);
			env[0] = rc;
			env[1] = s->MPI_SOURCE;
			env[2] = s->MPI_TAG;
			rep_ctl_send(CTL_MPROBE, env, sizeof env);
		} else {
			rep_ctl_recv(CTL_MPROBE, env, sizeof env);
			rc = env[0] == MPI_SUCCESS ? MPI_Mprobe(env[1], env[2], vc, m, s) : env[0];
		}
		if (src == MPI_ANY_SOURCE) sc_rep_count.wildcards++;
	} else {
		rc = MPI_Mprobe(src, tag, vc, m, s);
	}
	if (rc == MPI_SUCCESS) msg_follow(rep_comm_get(vc), *m, s);
	REP_LEAVE();
	return rc;
}

int rep_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *m, MPI_Status *st) {
	REP_ENTER();
	MPI_Comm vc = sc_rep_vc(comm);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc;
	int32_t env[4] = {0, 0, 0, 0};
	if (sc_rep_replica == 0) {
		rc = MPI_Improbe(src, tag, vc, flag, m, s);
		env[0] = rc;
		env[1] = rc == MPI_SUCCESS && *flag;
		env[2] = s->MPI_SOURCE;
		env[3] = s->MPI_TAG;
		rep_ctl_send(CTL_IMPROBE, env, sizeof env);
	} else {
		rep_ctl_recv(CTL_IMPROBE, env, sizeof env);
		*flag = env[1];
		rc = env[0];
		if (env[1]) rc = MPI_Mprobe(env[2], env[3], vc, m, s); // there in this replica too, or soon
		else *m = MPI_MESSAGE_NULL;
	}
	if (rc == MPI_SUCCESS && *flag) msg_follow(rep_comm_get(vc), *m, s);
	REP_LEAVE();
	return rc;
}

int rep_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *m, MPI_Status *st) {
	REP_ENTER();
	rep_req *e = msg_take(*m);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc = MPI_Mrecv(buf, count, dt, m, s);
	if (e) {
		fill(e, buf, count, dt, e->psrc, e->ptag, e->c, "MPI_Mrecv");
		rep_received(e, s, "MPI_Mrecv", rc);
		rep_req_drop(e);
	}
	REP_LEAVE();
	return rc;
}

int rep_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *m, MPI_Request *r) {
	REP_ENTER();
	rep_req *e = msg_take(*m);
	int rc = MPI_Imrecv(buf, count, dt, m, r);
	if (e && rc == MPI_SUCCESS) {
		fill(e, buf, count, dt, e->psrc, e->ptag, e->c, "MPI_Imrecv");
		rep_req_hold(e);
		e->kind = REP_RECV;
		e->real = *r;
		rep_req_rekey(e, *r);
	} else if (e) {
		rep_req_drop(e);
	}
	REP_LEAVE();
	return rc;
}

// Probes are answered by replica 0: a probe of one source sees the same
// message in every replica, but maybe not yet; one of any source could
// see another, and so could one of one source while receives wait in the
// communicator's queue (repreq.c), posted in replica 0 and not elsewhere.
typedef struct {
	int32_t rc, flag;
	MPI_Status st;
} probe_answer;

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st) {
	MPI_Comm vc = sc_rep_vc(comm);
	if (!sc_rep_on || sc_rep_in || (src != MPI_ANY_SOURCE && !behind_wildcard(vc))) return PMPI_Probe(src, tag, vc, st);
	REP_ENTER();
	probe_answer a;
	memset(&a, 0, sizeof a);
	if (sc_rep_replica == 0) {
		a.rc = PMPI_Probe(src, tag, vc, &a.st);
		rep_ctl_send(CTL_PROBE, &a, sizeof a);
	} else {
		rep_ctl_recv(CTL_PROBE, &a, sizeof a);
	}
	REP_LEAVE();
	if (st != MPI_STATUS_IGNORE) *st = a.st;
	return a.rc;
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st) {
	MPI_Comm vc = sc_rep_vc(comm);
	if (!sc_rep_on || sc_rep_in) return PMPI_Iprobe(src, tag, vc, flag, st);
	REP_ENTER();
	probe_answer a;
	memset(&a, 0, sizeof a);
	if (sc_rep_replica == 0) {
		int f = 0;
		a.rc = PMPI_Iprobe(src, tag, vc, &f, &a.st);
		a.flag = f;
		rep_ctl_send(CTL_IPROBE, &a, sizeof a);
	} else {
		rep_ctl_recv(CTL_IPROBE, &a, sizeof a);
		rep_progress();
	}
	REP_LEAVE();
	*flag = a.flag;
	if (st != MPI_STATUS_IGNORE && a.flag) *st = a.st;
	return a.rc;
}
