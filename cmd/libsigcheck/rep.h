// Replication (SIGCHECK_REPLICATE=R): the interface between the
// replication layer (rep*.c, rep.go, the generated virt.c) and the
// checking layer's wrappers.
//
// The layer sits above the checking layer, as RedMPI sat above MPI: every
// wrapper the checking layer defines begins with SC_REP, which hands the
// call to the replication layer's version (rep_Send for MPI_Send, …).
// That version translates the application's MPI_COMM_WORLD into its
// replica's world, does its part (a hash to another replica, a vote when a
// receive completes, replica 0's answer to a Test), and calls the checking
// layer's wrapper for the message itself with sc_rep_in set, so that the
// call goes through SC_REP the second time (wrap.py's re-entry guard), and
// the message is checked as without replication. Functions the checking
// layer does not wrap, and that take a communicator, are defined in virt.c
// (generated from virt.list) and only translate.
#ifndef SIGCHECK_REP_H
#define SIGCHECK_REP_H

#include <mpi.h>
#include <stdint.h>

// sc_rep_on: replication set up (from MPI_Init until MPI_Finalize).
extern int sc_rep_on;
// sc_rep_in: this thread is inside the replication layer, whose calls of
// MPI_ functions go to the checking layer.
extern _Thread_local int sc_rep_in;
// sc_rep_world: the application's MPI_COMM_WORLD, its replica's n ranks.
extern MPI_Comm sc_rep_world;

#define SC_REP(CALL) do { if (sc_rep_on && !sc_rep_in) return CALL; } while (0)

// sc_rep_vc is the communicator an application's handle stands for.
static inline MPI_Comm sc_rep_vc(MPI_Comm c) { return sc_rep_on && c == MPI_COMM_WORLD ? sc_rep_world : c; }

// Protocols (SIGCHECK_REPLICATE_PROTOCOL).
enum { SC_REP_MSGPLUSHASH = 0, SC_REP_ALLTOALL = 1 };

// What the environment asked for, as rep.go read it.
typedef struct {
	int r;               // replicas per rank, 2 or 3
	int protocol;
	int report;          // SIGCHECK_ON_ERROR=report: r = 2 mismatches are counted, not fatal
	double inject;       // probability per message of one flipped bit
	uint64_t inject_mask;// replicas the injector aims at, a bit each
	uint64_t seed;
	double wait;         // seconds a replica waits for another before giving up
	int perturb;         // fill fresh heap memory with one byte (rep.c says why)
} sc_rep_cfg;

// Why a message or collective was not compared between replicas.
enum {
	SC_REP_U_COMM,     // a communicator with no cross-replica twin (intercommunicator, idup, spawn, inconsistent)
	SC_REP_U_COLL,     // a collective whose result is not voted on
	SC_REP_U_TRUNC,    // a receive that failed (truncated), or a message past 2 GiB
	SC_REP_U_PERSIST,  // a persistent send the injector could not aim at
	SC_REP_U_FORTRAN,  // a Fortran call with no entry point here (virt.list's N), its MPI_COMM_WORLD untranslated
	SC_REP_NU
};

typedef struct {
	uint64_t compared;       // received messages whose replicas' copies were compared
	uint64_t found;          // of those, the ones whose copies disagreed
	uint64_t corrected;      // this replica's copy replaced by the majority's before the receive returned
	uint64_t uncorrectable;  // disagreements with no majority (the job ends), or r = 2
	uint64_t injected;       // send buffers the injector flipped a bit of
	uint64_t claims_sent;    // hashes (MsgPlusHash) or extra copies (All-to-all) sent
	uint64_t coll_compared, coll_found, coll_corrected;
	uint64_t agreed;         // answers replica 0 gave the others (Test, probe, Wtime, wildcard)
	uint64_t wildcards;      // wildcard receives resolved by replica 0
	uint64_t uncompared[SC_REP_NU];
} sc_rep_counters;

extern sc_rep_counters sc_rep_count;
extern sc_rep_cfg sc_rep_conf;
extern int sc_rep_replica, sc_rep_app, sc_rep_n; // this process: replica, application rank, application size

int sc_rep_start(void);
void sc_rep_finalize(void);

// The replication layer's version of each wrapper the checking layer
// defines.
int rep_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
int rep_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
int rep_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
int rep_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
int rep_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Start(MPI_Request *r);
int rep_Startall(int n, MPI_Request rs[]);
int rep_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r);
int rep_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st);
int rep_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, int rcount,
	MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st);
int rep_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
	MPI_Comm comm, MPI_Status *st);
int rep_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *m, MPI_Status *st);
int rep_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *m, MPI_Status *st);
int rep_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *m, MPI_Status *st);
int rep_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *m, MPI_Request *r);

int rep_Request_free(MPI_Request *r);
int rep_Wait(MPI_Request *r, MPI_Status *st);
int rep_Test(MPI_Request *r, int *flag, MPI_Status *st);
int rep_Waitall(int n, MPI_Request rs[], MPI_Status sts[]);
int rep_Testall(int n, MPI_Request rs[], int *flag, MPI_Status sts[]);
int rep_Waitany(int n, MPI_Request rs[], int *index, MPI_Status *st);
int rep_Testany(int n, MPI_Request rs[], int *index, int *flag, MPI_Status *st);
int rep_Waitsome(int n, MPI_Request rs[], int *outcount, int idx[], MPI_Status sts[]);
int rep_Testsome(int n, MPI_Request rs[], int *outcount, int idx[], MPI_Status sts[]);

int rep_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm);
int rep_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *r);
int rep_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm);
int rep_Ireduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Request *q);
int rep_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int rep_Iallreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q);
int rep_Scan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int rep_Iscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q);
int rep_Exscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int rep_Iexscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *q);
int rep_Reduce_scatter_block(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int rep_Reduce_scatter(const void *s, void *r, const int counts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
int rep_Gather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm);
int rep_Igather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm,
	MPI_Request *q);
int rep_Gatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt,
	int root, MPI_Comm comm);
int rep_Igatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt,
	int root, MPI_Comm comm, MPI_Request *q);
int rep_Scatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm);
int rep_Iscatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm,
	MPI_Request *q);
int rep_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt,
	int root, MPI_Comm comm);
int rep_Iscatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r, int rc,
	MPI_Datatype rdt, int root, MPI_Comm comm, MPI_Request *q);
int rep_Allgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm);
int rep_Iallgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm,
	MPI_Request *q);
int rep_Allgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[],
	MPI_Datatype rdt, MPI_Comm comm);
int rep_Iallgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[],
	MPI_Datatype rdt, MPI_Comm comm, MPI_Request *q);
int rep_Alltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm);
int rep_Ialltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm,
	MPI_Request *q);
int rep_Alltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype sdt, void *r, const int rcs[],
	const int rd[], MPI_Datatype rdt, MPI_Comm comm);
int rep_Ialltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype sdt, void *r, const int rcs[],
	const int rd[], MPI_Datatype rdt, MPI_Comm comm, MPI_Request *q);

int rep_Comm_dup(MPI_Comm c, MPI_Comm *n);
int rep_Comm_dup_with_info(MPI_Comm c, MPI_Info info, MPI_Comm *n);
int rep_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *n);
int rep_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *n);
int rep_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *n);
int rep_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm *n);
int rep_Intercomm_create(MPI_Comm local, int lleader, MPI_Comm peer, int rleader, int tag, MPI_Comm *n);
int rep_Intercomm_merge(MPI_Comm c, int high, MPI_Comm *n);
int rep_Cart_create(MPI_Comm c, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *n);
int rep_Cart_sub(MPI_Comm c, const int remain[], MPI_Comm *n);
int rep_Graph_create(MPI_Comm c, int nn, const int index[], const int edges[], int reorder, MPI_Comm *n);
int rep_Dist_graph_create_adjacent(MPI_Comm c, int indeg, const int srcs[], const int sw[], int outdeg,
	const int dsts[], const int dw[], MPI_Info info, int reorder, MPI_Comm *n);
int rep_Dist_graph_create(MPI_Comm c, int nn, const int srcs[], const int deg[], const int dsts[], const int w[],
	MPI_Info info, int reorder, MPI_Comm *n);
int rep_Comm_free(MPI_Comm *c);
int rep_Comm_disconnect(MPI_Comm *c);

#endif
