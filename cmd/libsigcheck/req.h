// Requests the library follows: receives (whose headers it reads when
// they complete), persistent sends (whose headers it sends at each start)
// and non-blocking collectives (whose checks complete with them).
#ifndef SIGCHECK_REQ_H
#define SIGCHECK_REQ_H
#include "sc.h"

enum { SC_REQ_RECV = 1, SC_REQ_PSEND, SC_REQ_COLL };

typedef struct sc_req {
	MPI_Request req;
	int kind, call, persistent, active;
	uint64_t seq;        // posting order of a receive
	void *buf;
	int count;
	MPI_Datatype dt;
	MPI_Comm comm;
	int peer, tag;       // source (receive) or destination (send); may be wildcards
	// A non-blocking collective's check.
	MPI_Request check;
	void *out, *in;
	int nrec;
	int pending_index;   // place in the pending list, -1 if none
	// A thread is in a blocking call that may complete it: MPI may then
	// free the handle and give it to another thread's new request, whose
	// entry takes this one's place in the table (detached), and this one
	// is completed by pointer.
	int completing, detached;
	const char *name;    // the call, for reports
} sc_req;

sc_req *sc_req_new(MPI_Request r, int kind);
sc_req *sc_req_get(MPI_Request r);
sc_req *sc_req_claim(MPI_Request r);
void sc_req_unclaim(sc_req *e);
void sc_req_drop(sc_req *e);
int sc_req_any(void);
void sc_pending_add(sc_req *e);
void sc_pending_remove(sc_req *e);
void sc_arrived(void *buf, int count, MPI_Datatype dt, MPI_Comm comm, uint64_t seq, const MPI_Status *st, int call,
		const char *name);
void sc_completed(sc_req *e, MPI_Status *st);
void sc_coll_finish(sc_req *e);
int sc_coll_ready(sc_req *e);
extern uint64_t sc_seq;
#endif
