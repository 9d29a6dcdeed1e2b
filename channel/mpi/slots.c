//go:build mpi

// The send slots and the receive ring: the two halves of the small-frame
// path, in C so that a frame costs one call across cgo each way, with no
// Go pointer kept by C after the call.

#include "shim.h"
#include <string.h>

// touch writes a byte of every page of n bytes at p, so that the pages
// exist before the first message: a page faulted in on a message's way
// costs that message a microsecond or so, and a ring's first round many
// of them. (A memset of zeros after malloc may become a calloc, which
// touches nothing.)
static void touch(char *p, size_t n) {
	for (size_t i = 0; i < n; i += 4096) {
		((volatile char *)p)[i] = 1;
	}
}

// sc_slots are n buffers of cap bytes, each with the request of the send
// made from it. A small frame is copied into the next free one and sent
// (MPI_Isend); its sender returns at once, and the slot is free again
// when MPI has sent it, which for a message within Open MPI's eager limit
// is at once. A slot's failed send is kept until the slot is taken again
// or sc_slots_busy looks, and reported then.
struct sc_slots {
	MPI_Comm comm;
	int n, cap, next;
	MPI_Request *req;
	int *dst, *err, *idx;
	MPI_Status *st;
	char *buf;
};

sc_slots *sc_slots_new(MPI_Comm c, int n, int cap) {
	sc_slots *s = calloc(1, sizeof *s);
	if (s == NULL) {
		return NULL;
	}
	s->comm = c;
	s->n = n;
	s->cap = cap;
	s->req = malloc(n * sizeof *s->req);
	s->dst = calloc(n, sizeof *s->dst);
	s->err = calloc(n, sizeof *s->err);
	s->idx = calloc(n, sizeof *s->idx);
	s->st = calloc(n, sizeof *s->st);
	s->buf = malloc((size_t)n * cap);
	if (!s->req || !s->dst || !s->err || !s->idx || !s->st || !s->buf) {
		sc_slots_free(s);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		s->req[i] = MPI_REQUEST_NULL;
	}
	touch(s->buf, (size_t)n * cap);
	return s;
}

void sc_slots_free(sc_slots *s) {
	free(s->req);
	free(s->dst);
	free(s->err);
	free(s->idx);
	free(s->st);
	free(s->buf);
	free(s);
}

// reap completes what it can of the sends under way (one MPI_Testsome:
// one pass of Open MPI's progress for all of them), keeping their
// errors.
static void reap(sc_slots *s) {
	int out = 0;
	int rc = MPI_Testsome(s->n, s->req, &out, s->idx, s->st);
	if (out == MPI_UNDEFINED) {
		return;
	}
	for (int k = 0; k < out; k++) {
		int e = rc == MPI_ERR_IN_STATUS ? s->st[k].MPI_ERROR : rc;
		if (e != MPI_SUCCESS) {
			s->err[s->idx[k]] = e;
		}
	}
}

// failed reports (and forgets) slot i's failed send, if it failed.
static void failed(sc_slots *s, int i, sc_out *o) {
	if (s->err[i] != MPI_SUCCESS && o->failerr == MPI_SUCCESS) {
		o->faildst = s->dst[i];
		o->failerr = s->err[i];
		s->err[i] = MPI_SUCCESS;
	}
}

// take returns a free slot, or -1: the next one in turn if its send is
// done, else the first that reap finds done.
static int take(sc_slots *s, sc_out *o) {
	int i = s->next;
	if (s->req[i] != MPI_REQUEST_NULL) {
		reap(s);
		for (int k = 0; k < s->n && s->req[i] != MPI_REQUEST_NULL; k++) {
			i = (i + 1) % s->n;
		}
		if (s->req[i] != MPI_REQUEST_NULL) {
			return -1;
		}
	}
	failed(s, i, o);
	s->next = (i + 1) % s->n;
	return i;
}

// sc_slots_send sends the frame header in o's hdr followed by p (pn
// bytes; the header and pn at most the slots' size) to dst with tag: 0,
// sc_busy if no slot is free (nothing is sent), or an MPI error code. A
// slot's earlier send that failed is reported in o's faildst and failerr
// (MPI_SUCCESS if none), whatever the result.
int sc_slots_send(uintptr_t slots, uintptr_t p, int pn, int dst, int tag, uintptr_t out) {
	sc_slots *s = (sc_slots *)slots;
	sc_out *o = (sc_out *)out;
	o->failerr = MPI_SUCCESS;
	int i = take(s, o);
	if (i < 0) {
		return sc_busy;
	}
	char *b = s->buf + (size_t)i * s->cap;
	memcpy(b, o->hdr, sizeof o->hdr);
	if (pn > 0) {
		memcpy(b + sizeof o->hdr, (const void *)p, pn);
	}
	s->dst[i] = dst;
	return MPI_Isend(b, (int)sizeof o->hdr + pn, MPI_BYTE, dst, tag, s->comm, &s->req[i]);
}

// sc_slots_busy completes what it can and returns how many sends are
// still under way; one failed send, if any, is reported as by
// sc_slots_send.
int sc_slots_busy(sc_slots *s, sc_out *o) {
	o->failerr = MPI_SUCCESS;
	reap(s);
	int busy = 0;
	for (int i = 0; i < s->n; i++) {
		busy += s->req[i] != MPI_REQUEST_NULL;
		failed(s, i, o);
	}
	return busy;
}

// sc_ring is n receives of up to cap bytes each, posted for tag from any
// rank, in ring order: MPI matches a message to the first posted receive
// it fits, so the ring's head always completes first, and the messages
// come out in the order they were matched. A slot handed out by
// sc_ring_poll is posted again at the next poll, once its message has
// been read.
struct sc_ring {
	MPI_Comm comm;
	int n, cap, tag, head, held;
	MPI_Request *req;
	char *buf;
};

static int post(sc_ring *r, int i) {
	return MPI_Irecv(r->buf + (size_t)i * r->cap, r->cap, MPI_BYTE, MPI_ANY_SOURCE, r->tag, r->comm, &r->req[i]);
}

sc_ring *sc_ring_new(MPI_Comm c, int n, int cap, int tag, int *err) {
	*err = MPI_SUCCESS;
	sc_ring *r = calloc(1, sizeof *r);
	if (r == NULL) {
		return NULL;
	}
	r->comm = c;
	r->n = n;
	r->cap = cap;
	r->tag = tag;
	r->held = -1;
	r->req = malloc(n * sizeof *r->req);
	r->buf = malloc((size_t)n * cap);
	if (!r->req || !r->buf) {
		free(r->req);
		free(r->buf);
		free(r);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		r->req[i] = MPI_REQUEST_NULL;
	}
	touch(r->buf, (size_t)n * cap);
	for (int i = 0; i < n && *err == MPI_SUCCESS; i++) {
		*err = post(r, i);
	}
	return r;
}

// sc_ring_poll posts again the slot it handed out last, then tests the
// head: 0 if no message has come, 1 with the message in o (its source,
// length and bytes, valid until the next call; err is MPI's error for
// it, such as MPI_ERR_TRUNCATE for one longer than cap), or -1 with err
// if the slot could not be posted again.
int sc_ring_poll(uintptr_t ring, uintptr_t out) {
	sc_ring *r = (sc_ring *)ring;
	sc_out *o = (sc_out *)out;
	if (r->held >= 0) {
		int rc = post(r, r->held);
		r->held = -1;
		if (rc != MPI_SUCCESS) {
			o->err = rc;
			return -1;
		}
	}
	int done = 0;
	MPI_Status st;
	int i = r->head;
	int rc = MPI_Test(&r->req[i], &done, &st);
	if (!done && rc == MPI_SUCCESS) {
		return 0;
	}
	// A single completion reports an error by its return value (the
	// status's MPI_ERROR is left undefined).
	o->src = st.MPI_SOURCE;
	o->err = rc;
	o->count = 0;
	if (rc == MPI_SUCCESS && MPI_Get_count(&st, MPI_BYTE, &o->count) != MPI_SUCCESS) {
		o->count = -1;
	}
	o->msg = r->buf + (size_t)i * r->cap;
	r->req[i] = MPI_REQUEST_NULL;
	r->held = i;
	r->head = (i + 1) % r->n;
	return 1;
}

// sc_ring_free withdraws the ring's receives, waits for them and frees
// the ring.
void sc_ring_free(sc_ring *r) {
	for (int i = 0; i < r->n; i++) {
		if (r->req[i] != MPI_REQUEST_NULL) {
			MPI_Cancel(&r->req[i]);
			MPI_Wait(&r->req[i], MPI_STATUS_IGNORE);
		}
	}
	free(r->req);
	free(r->buf);
	free(r);
}
