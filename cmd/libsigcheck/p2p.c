//go:build mpi

// Point-to-point sends and receives. Every message on a shadowed
// communicator is preceded by a header on the shadow, with the same
// destination and tag; the receiver reads it when the message completes,
// from the source and tag in the message's status (see doc.go).
#include <stdlib.h>
#include <string.h>
#include "sc.h"
#include "req.h"
#include "_cgo_export.h"

// stamp fills h for a message and says on which shadow it goes; 0 means
// no header (no checking, or MPI_PROC_NULL). Lock held.
static int stamp(const void *buf, int count, MPI_Datatype dt, int dest, MPI_Comm comm, int call,
		sc_comm **cp, sc_hdr *h) {
	if (dest == MPI_PROC_NULL) return 0;
	sc_comm *c = sc_comm_get(comm);
	if (!c) { sc_count.unchecked[call][SC_WHY_COMM]++; return 0; }
	if (sc_enc_on) sc_enc_p2p(sc_world_of(c, dest), call);
	sc_type *t = sc_type_get(dt);
	if (sc_stamp(t, count < 0 ? 0 : (uint64_t)count, h) != 0) {
		sc_count.unchecked[call][SC_WHY_TYPE]++;
	} else {
		if (sc_mode >= SC_CHECKSUM) {
			int kept = 0;
			h->csum = sc_keep(buf, count, dt, h->bytes, t, sc_world_of(c, dest), &h->msgid, &kept);
			h->flags |= SC_HDR_CSUM | (kept ? SC_HDR_KEPT : 0);
		}
		sc_desc_send(sc_world_of(c, dest), t);
		sc_count.sent[call]++;
	}
	h->desc_total = sc_desc_sent_to(sc_world_of(c, dest));
	*cp = c;
	return 1;
}

// sc_send_hdr sends the header of a message, started or about to be. Lock
// held.
int sc_send_hdr(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, int call) {
	sc_hdr h;
	sc_comm *c;
	if (!stamp(buf, count, dt, dest, comm, call, &c, &h)) return MPI_SUCCESS;
	return PMPI_Send(&h, sizeof h, MPI_BYTE, dest, tag, c->shadow);
}

// Messages from this size on, in checksum mode, are started before their
// checksum is taken, so that the hashing overlaps the transfer.
#define SC_OVERLAP_BYTES (64 * 1024)

static int overlap(int count, MPI_Datatype dt) {
	if (sc_mode < SC_CHECKSUM || count <= 0) return 0;
	int size = 0;
	PMPI_Type_size(dt, &size);
	return (int64_t)size * count >= SC_OVERLAP_BYTES;
}

// A blocking send: its header, then the message, so that the header is
// there when the message completes; a long message's completion waits for
// its receiver, and a header sent after it would cost the receiver another
// small message's time. A long message in checksum mode, and any message
// when several threads are in MPI, is started as a non-blocking send
// instead, its header sent, and the send completed: its checksum is then
// taken while the receiver copies it, and with threads the message and
// its header leave in one critical section, so that messages and headers
// to one destination stay in the same order.
#define BLOCKING_SEND(NAME, PNAME, PINAME, REP)                                                            \
	int NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {        \
		SC_REP(REP(buf, count, dt, dest, tag, comm));                                              \
		if (!sc_active) return PNAME(buf, count, dt, dest, tag, comm);                  \
		if (!sc_multi && !overlap(count, dt)) {                                                    \
			sc_send_hdr(buf, count, dt, dest, tag, comm, SC_CALL_SEND);                            \
			return PNAME(buf, count, dt, dest, tag, comm);                                         \
		}                                                                                          \
		MPI_Request r;                                                                             \
		SC_LOCK();                                                                                 \
		int rc = PINAME(buf, count, dt, dest, tag, comm, &r);                                        \
		if (rc == MPI_SUCCESS) sc_send_hdr(buf, count, dt, dest, tag, comm, SC_CALL_SEND);           \
		SC_UNLOCK();                                                                               \
		if (rc != MPI_SUCCESS) return rc;                                                          \
		return PMPI_Wait(&r, MPI_STATUS_IGNORE);                                                   \
	}

BLOCKING_SEND(MPI_Send, PMPI_Send, PMPI_Isend, rep_Send)
BLOCKING_SEND(MPI_Ssend, PMPI_Ssend, PMPI_Issend, rep_Ssend)
BLOCKING_SEND(MPI_Rsend, PMPI_Rsend, PMPI_Irsend, rep_Rsend)
BLOCKING_SEND(MPI_Bsend, PMPI_Bsend, PMPI_Ibsend, rep_Bsend)

#define NONBLOCKING_SEND(NAME, PNAME, REP)                                                                \
	int NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,          \
			MPI_Request *r) {                                                                      \
		SC_REP(REP(buf, count, dt, dest, tag, comm, r));                                           \
		if (!sc_active) return PNAME(buf, count, dt, dest, tag, comm, r);               \
		SC_LOCK();                                                                                 \
		int rc = PNAME(buf, count, dt, dest, tag, comm, r);                                          \
		if (rc == MPI_SUCCESS) sc_send_hdr(buf, count, dt, dest, tag, comm, SC_CALL_SEND);           \
		SC_UNLOCK();                                                                               \
		return rc;                                                                                 \
	}

NONBLOCKING_SEND(MPI_Isend, PMPI_Isend, rep_Isend)
NONBLOCKING_SEND(MPI_Issend, PMPI_Issend, rep_Issend)
NONBLOCKING_SEND(MPI_Irsend, PMPI_Irsend, rep_Irsend)
NONBLOCKING_SEND(MPI_Ibsend, PMPI_Ibsend, rep_Ibsend)

// Persistent sends send their header at each MPI_Start.
#define PERSISTENT_SEND(NAME, PNAME, REP)                                                                 \
	int NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,          \
			MPI_Request *r) {                                                                      \
		SC_REP(REP(buf, count, dt, dest, tag, comm, r));                                           \
		int rc = PNAME(buf, count, dt, dest, tag, comm, r);                                          \
		if (rc != MPI_SUCCESS || !sc_active) return rc;                                 \
		SC_LOCK();                                                                                 \
		sc_req *e = sc_req_new(*r, SC_REQ_PSEND);                                                    \
		if (e) {                                                                                   \
			e->persistent = 1;                                                                     \
			e->buf = (void *)buf; e->count = count; e->dt = dt; sc_type_ref(dt);                                    \
			e->peer = dest; e->tag = tag; e->comm = comm; e->call = SC_CALL_SEND;                  \
		}                                                                                          \
		SC_UNLOCK();                                                                               \
		return rc;                                                                                 \
	}

PERSISTENT_SEND(MPI_Send_init, PMPI_Send_init, rep_Send_init)
PERSISTENT_SEND(MPI_Ssend_init, PMPI_Ssend_init, rep_Ssend_init)
PERSISTENT_SEND(MPI_Rsend_init, PMPI_Rsend_init, rep_Rsend_init)
PERSISTENT_SEND(MPI_Bsend_init, PMPI_Bsend_init, rep_Bsend_init)

int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r) {
	SC_REP(rep_Recv_init(buf, count, dt, src, tag, comm, r));
	int rc = PMPI_Recv_init(buf, count, dt, src, tag, comm, r);
	if (rc != MPI_SUCCESS || !sc_active || src == MPI_PROC_NULL) return rc;
	SC_LOCK();
	sc_req *e = sc_req_new(*r, SC_REQ_RECV);
	if (e) {
		e->persistent = 1;
		e->buf = buf; e->count = count; e->dt = dt; sc_type_ref(dt);
		e->peer = src; e->tag = tag; e->comm = comm; e->call = SC_CALL_RECV; e->name = "MPI_Recv_init";
	}
	SC_UNLOCK();
	return rc;
}

// start starts one request, sending its header first if it is a
// persistent send. Lock held.
static int start(MPI_Request *r) {
	sc_req *e = sc_req_get(*r);
	int rc = PMPI_Start(r);
	if (e && e->kind == SC_REQ_PSEND && rc == MPI_SUCCESS)
		sc_send_hdr(e->buf, e->count, e->dt, e->peer, e->tag, e->comm, e->call);
	if (e && e->kind == SC_REQ_RECV && rc == MPI_SUCCESS) {
		e->active = 1;
		e->seq = ++sc_seq;
		sc_pending_add(e);
	}
	return rc;
}

int MPI_Start(MPI_Request *r) {
	SC_REP(rep_Start(r));
	if (!sc_active || !sc_req_any()) return PMPI_Start(r);
	SC_LOCK();
	int rc = start(r);
	SC_UNLOCK();
	return rc;
}

int MPI_Startall(int n, MPI_Request rs[]) {
	SC_REP(rep_Startall(n, rs));
	if (!sc_active || !sc_req_any()) return PMPI_Startall(n, rs);
	int rc = MPI_SUCCESS;
	SC_LOCK();
	for (int i = 0; i < n && rc == MPI_SUCCESS; i++) rc = start(&rs[i]);
	SC_UNLOCK();
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r) {
	SC_REP(rep_Irecv(buf, count, dt, src, tag, comm, r));
	if (!sc_active || src == MPI_PROC_NULL) return PMPI_Irecv(buf, count, dt, src, tag, comm, r);
	SC_LOCK();
	int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, r);
	if (rc == MPI_SUCCESS) {
		sc_req *e = sc_req_new(*r, SC_REQ_RECV);
		if (e) {
			e->buf = buf; e->count = count; e->dt = dt; sc_type_ref(dt);
			e->peer = src; e->tag = tag; e->comm = comm; e->call = SC_CALL_RECV; e->name = "MPI_Irecv";
			e->active = 1;
			e->seq = ++sc_seq;
			sc_pending_add(e);
		}
	}
	SC_UNLOCK();
	return rc;
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st) {
	SC_REP(rep_Recv(buf, count, dt, src, tag, comm, st));
	if (!sc_active || src == MPI_PROC_NULL) return PMPI_Recv(buf, count, dt, src, tag, comm, st);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	if (!sc_multi) {
		uint64_t seq = ++sc_seq;
		int rc = PMPI_Recv(buf, count, dt, src, tag, comm, s);
		if (rc == MPI_SUCCESS) sc_arrived(buf, count, dt, comm, seq, s, SC_CALL_RECV, "MPI_Recv");
		return rc;
	}
	// Posted under the lock, so that the posting order the library
	// records is the order MPI matches in.
	MPI_Request r;
	SC_LOCK();
	int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, &r);
	sc_req *e = rc == MPI_SUCCESS ? sc_req_new(r, SC_REQ_RECV) : NULL;
	if (e) {
		e->buf = buf; e->count = count; e->dt = dt; sc_type_ref(dt);
		e->peer = src; e->tag = tag; e->comm = comm; e->call = SC_CALL_RECV; e->name = "MPI_Recv";
		e->active = 1;
		e->seq = ++sc_seq;
		e->completing = 1; // completed here, by pointer
		sc_pending_add(e);
	}
	SC_UNLOCK();
	if (rc != MPI_SUCCESS) return rc;
	rc = PMPI_Wait(&r, s);
	SC_LOCK();
	if (e) sc_completed(e, s);
	SC_UNLOCK();
	return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag,
		void *rbuf, int rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st) {
	SC_REP(rep_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, st));
	if (!sc_active)
		return PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, st);
	MPI_Request rs[2];
	MPI_Status ss[2];
	int rc;
	if (!sc_multi) {
		sc_send_hdr(sbuf, scount, sdt, dest, stag, comm, SC_CALL_SENDRECV);
		uint64_t seq = ++sc_seq;
		MPI_Status tmp;
		MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
		rc = PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, s);
		if (rc == MPI_SUCCESS && src != MPI_PROC_NULL) sc_arrived(rbuf, rcount, rdt, comm, seq, s, SC_CALL_SENDRECV, "MPI_Sendrecv");
		return rc;
	}
	rc = MPI_Irecv(rbuf, rcount, rdt, src, rtag, comm, &rs[0]);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Isend(sbuf, scount, sdt, dest, stag, comm, &rs[1]);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Waitall(2, rs, ss);
	if (st != MPI_STATUS_IGNORE) *st = ss[0];
	return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
		MPI_Comm comm, MPI_Status *st) {
	SC_REP(rep_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, st));
	if (!sc_active) return PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, st);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	SC_LOCK();
	sc_send_hdr(buf, count, dt, dest, stag, comm, SC_CALL_SENDRECV);
	uint64_t seq = ++sc_seq;
	SC_UNLOCK();
	// With several threads, another thread's send to the same destination
	// and tag could slip between the header and the message here; MPI
	// offers no non-blocking Sendrecv_replace to close that gap.
	int rc = PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, s);
	if (rc == MPI_SUCCESS && src != MPI_PROC_NULL) {
		SC_LOCK();
		sc_arrived(buf, count, dt, comm, seq, s, SC_CALL_SENDRECV, "MPI_Sendrecv_replace");
		SC_UNLOCK();
	}
	return rc;
}

// Matched probes: MPI_Mprobe takes the message off the queue, so it is
// then that the receive is "posted" for the library's ordering. The
// message's communicator, source and tag are kept from the probe.
typedef struct { MPI_Message msg; MPI_Comm comm; int src, tag; uint64_t seq; } sc_msg;
static sc_msg *msgs;
static int nmsgs, capmsgs;

static void msg_add(MPI_Message m, MPI_Comm comm, const MPI_Status *st) {
	if (m == MPI_MESSAGE_NULL || m == MPI_MESSAGE_NO_PROC) return;
	if (nmsgs == capmsgs) {
		int n = capmsgs ? capmsgs * 2 : 8;
		sc_msg *x = realloc(msgs, (size_t)n * sizeof *x);
		if (!x) return;
		msgs = x;
		capmsgs = n;
	}
	msgs[nmsgs] = (sc_msg){m, comm, st->MPI_SOURCE, st->MPI_TAG, ++sc_seq};
	nmsgs++;
}

static int msg_take(MPI_Message m, sc_msg *out) {
	for (int i = 0; i < nmsgs; i++)
		if (msgs[i].msg == m) {
			*out = msgs[i];
			msgs[i] = msgs[--nmsgs];
			return 1;
		}
	return 0;
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *m, MPI_Status *st) {
	SC_REP(rep_Mprobe(src, tag, comm, m, st));
	if (!sc_active) return PMPI_Mprobe(src, tag, comm, m, st);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc = PMPI_Mprobe(src, tag, comm, m, s);
	if (rc == MPI_SUCCESS) { SC_LOCK(); msg_add(*m, comm, s); SC_UNLOCK(); }
	return rc;
}

int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *m, MPI_Status *st) {
	SC_REP(rep_Improbe(src, tag, comm, flag, m, st));
	if (!sc_active) return PMPI_Improbe(src, tag, comm, flag, m, st);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc = PMPI_Improbe(src, tag, comm, flag, m, s);
	if (rc == MPI_SUCCESS && *flag) { SC_LOCK(); msg_add(*m, comm, s); SC_UNLOCK(); }
	return rc;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *m, MPI_Status *st) {
	SC_REP(rep_Mrecv(buf, count, dt, m, st));
	if (!sc_active) return PMPI_Mrecv(buf, count, dt, m, st);
	sc_msg mm;
	SC_LOCK();
	int known = msg_take(*m, &mm);
	SC_UNLOCK();
	if (!known) return PMPI_Mrecv(buf, count, dt, m, st);
	MPI_Status tmp;
	MPI_Status *s = st == MPI_STATUS_IGNORE ? &tmp : st;
	int rc = PMPI_Mrecv(buf, count, dt, m, s);
	if (rc == MPI_SUCCESS) {
		SC_LOCK();
		sc_arrived(buf, count, dt, mm.comm, mm.seq, s, SC_CALL_RECV, "MPI_Mrecv");
		SC_UNLOCK();
	}
	return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *m, MPI_Request *r) {
	SC_REP(rep_Imrecv(buf, count, dt, m, r));
	if (!sc_active) return PMPI_Imrecv(buf, count, dt, m, r);
	sc_msg mm;
	SC_LOCK();
	int known = msg_take(*m, &mm);
	int rc = PMPI_Imrecv(buf, count, dt, m, r);
	if (rc == MPI_SUCCESS && known) {
		sc_req *e = sc_req_new(*r, SC_REQ_RECV);
		if (e) {
			e->buf = buf; e->count = count; e->dt = dt; sc_type_ref(dt);
			e->peer = mm.src; e->tag = mm.tag; e->comm = mm.comm; e->call = SC_CALL_RECV; e->name = "MPI_Imrecv";
			e->active = 1;
			e->seq = mm.seq;
			sc_pending_add(e);
		}
	}
	SC_UNLOCK();
	return rc;
}

// sc_msg_blocks says whether a probed message not yet received comes
// before a receive of seq from (src, tag) in the stream its header is in.
int sc_msg_blocks(MPI_Comm comm, int src, int tag, uint64_t seq) {
	for (int i = 0; i < nmsgs; i++)
		if (msgs[i].seq < seq && msgs[i].comm == comm && msgs[i].src == src && msgs[i].tag == tag) return 1;
	return 0;
}
