// The replication layer's own interface between its files: the
// communicators it follows, the requests it follows, replica 0's answers
// to the others, and the votes.
#ifndef SIGCHECK_REPINT_H
#define SIGCHECK_REPINT_H

#include <stddef.h>
#include "sc.h"

// What a sender replica vouches for: the hash of a message's data bytes
// (MsgPlusHash's small message), with the sender's number for the message
// so that the two receivers of a disagreement name it alike.
typedef struct {
	uint64_t seq;
	uint64_t len;
	uint64_t h[2];
} rep_claim;

// One communicator of the application, in this replica's world.
typedef struct rep_comm {
	MPI_Comm vc;   // the communicator (for MPI_COMM_WORLD, sc_rep_world)
	MPI_Comm x;    // every replica of its ranks, rank replica·size + rank; MPI_COMM_NULL: not compared
	int size, me, id, inter;
	int differs;   // the replicas made it with different members (its twin's check failed)
	uint64_t *seq; // messages sent to each rank (MsgPlusHash names them by it)
	struct rep_req *pend_head, *pend_tail; // receives posted in MPI and not yet voted on, in posting order
	struct rep_req *q_head, *q_tail;       // receives other replicas defer (see repreq.c), in posting order
} rep_comm;

enum { REP_RECV = 1, REP_SEND, REP_COLL, REP_MSG };

// What a collective left at this rank, to be voted on: up to nblk blocks
// of (buffer, count, datatype).
typedef struct {
	int nblk;
	void **buf;
	int *count;
	MPI_Datatype *dt;
	void *inj;         // the injected copy of the input, freed at completion
	const char *name;
	MPI_Comm vc;
} rep_out;

// A request the layer follows: a receive (voted on when it completes), a
// send from an injected copy (freed when it completes), a non-blocking
// collective (its result voted on), or a matched probe's message.
typedef struct rep_req {
	MPI_Request app;      // the handle the application holds
	MPI_Request real;     // what is posted in MPI (app, or the deferred receive posted late); NULL while deferred
	MPI_Message msg;      // REP_MSG: the message a matched probe took
	int kind;
	unsigned persistent : 1, active : 1, posted : 1, inq : 1, unres : 1, has_claim : 1, placeholder : 1,
		cancelled : 1, wild : 1, truncated : 1, held : 1;
	void *buf;
	int count;
	MPI_Datatype dt;
	int src, tag;         // as the application posted it (may be wildcards)
	int psrc, ptag;       // as posted in MPI
	int env_src, env_tag; // the envelope replica 0 resolved
	rep_comm *c;
	uint64_t post_seq;    // order of posting in MPI
	struct rep_req *pprev, *pnext, *qprev, *qnext;
	rep_claim claim;      // MsgPlusHash: the other replica's
	void *copies[3];      // All-to-all: the other replicas' copies, by replica
	uint64_t copylen[3];
	void *inj;            // a send from an injected copy
	rep_out out;
	const char *name;
} rep_req;

// rep.c: state and setup.
extern MPI_Comm rep_set, rep_ctl, rep_fix, rep_vote; // this rank's replicas, rank = replica
rep_comm *rep_comm_get(MPI_Comm vc);
void rep_comm_derive(MPI_Comm parent, MPI_Comm n);
void rep_comm_drop(MPI_Comm vc);
void rep_comm_name(rep_comm *c, char *buf, int size);
void rep_wait_req(MPI_Request *r, MPI_Status *st, const char *what);
void rep_recv_bounded(void *buf, int n, int src, int tag, MPI_Comm c, MPI_Status *st, const char *what);
void rep_send_bounded(const void *buf, int n, int dst, int tag, MPI_Comm c, const char *what);
void rep_fail(void);
void rep_progress(void);
void rep_timeout(const char *what);

// Replica 0's answers (rep.c): kinds, so that replicas that went apart
// are told so rather than fed the wrong answer.
enum { CTL_WTIME = 1, CTL_TEST, CTL_TESTANY, CTL_TESTSOME, CTL_TESTALL, CTL_WAITANY, CTL_WAITSOME, CTL_PROBE,
	CTL_IPROBE, CTL_MPROBE, CTL_IMPROBE, CTL_RESOLVE, CTL_SENDRECV, CTL_NAME, CTL_GETSTATUS };
void rep_ctl_send(int kind, const void *p, int n);
void rep_ctl_recv(int kind, void *p, int n);

// repreq.c: the requests followed.
rep_req *rep_req_new(MPI_Request app, int kind);
rep_req *rep_req_get(MPI_Request app);
void rep_req_rekey(rep_req *e, MPI_Request app);
void rep_req_drop(rep_req *e);
void rep_req_hold(rep_req *e);
void rep_type_hold(MPI_Datatype dt);
void rep_type_release(MPI_Datatype dt);
int rep_req_any(void);
void rep_pend_add(rep_req *e, int src, int tag);
void rep_pend_remove(rep_req *e);
int rep_defers(rep_comm *c, int src);
void rep_queue_add(rep_req *e);
void rep_queue_remove(rep_req *e);
void rep_resolve_for(rep_req *e, const MPI_Status *st);
int rep_post_recv(rep_req *e, int src, int tag);

// repp2p.c: claims and votes.
void rep_send_claims(const void *buf, int count, MPI_Datatype dt, int dest, int tag, rep_comm *c);
int rep_inject_copy(const void *buf, int count, MPI_Datatype dt, void **copy, const void **from);
void rep_pull(rep_req *e, const MPI_Status *st);
void rep_received(rep_req *e, MPI_Status *st, const char *call, int rc);
void rep_claims_finalize(void);
uint64_t rep_data_bytes(int count, MPI_Datatype dt);
int rep_hash_data(const void *buf, int count, MPI_Datatype dt, uint64_t bytes, uint64_t h[2]);

// repwait.c: completion.
void rep_complete(rep_req *e, MPI_Status *st, const char *call, int rc);
int rep_wait_one(MPI_Request *r, MPI_Status *st, const char *call);
int rep_waitall(int n, MPI_Request rs[], MPI_Status sts[]);

// repcoll.c: collectives' votes.
void rep_coll_vote(rep_out *o, const char *call);
void rep_out_free(rep_out *o);

// The sequence of posts, for the order claims are taken in.
extern uint64_t rep_post_seq;

// Every call into the layer from the application goes through REP_ENTER:
// replicas take the same path only if their application calls MPI from one
// thread at a time (rep_own says so when another thread is inside).
void rep_own(void);
void rep_disown(void);
#define REP_ENTER() int _rep_was = sc_rep_in; if (!_rep_was) rep_own(); sc_rep_in = 1
#define REP_LEAVE() do { sc_rep_in = _rep_was; if (!_rep_was) rep_disown(); } while (0)

#endif
