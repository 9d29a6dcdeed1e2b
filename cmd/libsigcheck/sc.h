// Internal interface between libsigcheck's C wrappers and its Go part.
// The wrappers (p2p.c, complete.c, coll.c, comm.c, types.c) keep the hot
// path in C: a message whose datatype and count were seen before costs two
// table lookups and one extra small message, never a call into Go. Go
// decodes datatypes, computes signatures for counts not seen before, and
// formats reports and the summary.
#ifndef SIGCHECK_SC_H
#define SIGCHECK_SC_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include "rep.h"

// Modes (SIGCHECK_CHECK).
enum { SC_TYPES = 1, SC_CHECKSUM = 2, SC_REPAIR = 3 };

// Classes, as package sig's Class.
enum { SC_TYPED = 0, SC_BYTES = 1, SC_PACKED = 2 };

// Header flags.
enum { SC_HDR_CSUM = 1, SC_HDR_UNCHECKED = 2, SC_HDR_KEPT = 4 };

// The header that travels beside every checked point-to-point message, on
// the shadow communicator, with the message's own tag (see doc.go).
typedef struct {
	uint64_t sig;    // signature value, default algebra of package sig
	uint64_t elems;  // basic elements in the message
	uint64_t bytes;  // bytes of data in the message
	uint64_t count;  // the sender's count
	uint64_t csum;   // checksum of the data bytes (SC_HDR_CSUM)
	uint64_t msgid;  // the sender's number for the message (repair asks by it)
	uint32_t typeid; // the sender's datatype id (see sc_type)
	uint32_t desc_total; // descriptions the sender has sent the receiver (desc.c)
	uint8_t class;   // SC_TYPED, SC_BYTES or SC_PACKED
	uint8_t flags;
	uint16_t magic;
	uint32_t pad;
} sc_hdr;

#define SC_HDR_MAGIC 0x5C1Fu

// What the library knows of one datatype handle.
typedef struct {
	MPI_Datatype dt;
	uint32_t id;     // 0: undecodable
	uint8_t class;
	uint8_t contig;  // its data bytes are one run from the buffer's start
	uint64_t elems;  // basic elements in one instance
	int64_t size;    // bytes of data in one instance
	int64_t extent;
	// One-slot memos of Of(count) and Prefix(k): programs send the same
	// count again and again, so the signature is computed once.
	uint64_t memo_count, memo_sig;
	uint64_t memo_k, memo_prefix;
	int refs;        // pending requests and deferred checks that use it
	int freed;       // MPI_Type_free came while refs > 0
	unsigned char *sentmap; // world ranks its description went to (desc.c)
} sc_type;

// What the library knows of one application communicator.
typedef struct {
	MPI_Comm comm;
	MPI_Comm shadow;  // our duplicate; headers and checks travel here
	int id;           // for reports
	int inter;
	int size;         // local group size (remote size for inter)
	int *world;       // world rank of each (remote, for inter) rank
	int used;
} sc_comm;

// Counters per call, for the summary.
enum {
	SC_CALL_SEND, SC_CALL_RECV, SC_CALL_SENDRECV, SC_CALL_BCAST, SC_CALL_REDUCE,
	SC_CALL_ALLREDUCE, SC_CALL_SCAN, SC_CALL_GATHER, SC_CALL_SCATTER,
	SC_CALL_ALLGATHER, SC_CALL_ALLTOALL, SC_CALL_OTHER, SC_NCALLS
};

// Why a call passed through unchecked.
enum {
	SC_WHY_TYPE,   // a datatype that could not be decoded
	SC_WHY_COMM,   // a communicator without a shadow
	SC_WHY_INTER,  // an intercommunicator collective
	SC_WHY_NOHDR,  // a message from an unchecked sender
	SC_NWHY
};

typedef struct {
	uint64_t checked[SC_NCALLS];
	uint64_t sent[SC_NCALLS]; // messages sent with a checked header
	uint64_t unchecked[SC_NCALLS][SC_NWHY];
	uint64_t mismatches, corrupt, injected, repaired;
	uint64_t unrepaired_late, unrepaired_gone;
} sc_counters;

// Global state.
extern int sc_active;   // between MPI_Init and MPI_Finalize, checking on
extern int sc_mode;
extern int sc_abort;    // -on-error abort
extern int sc_world_rank, sc_world_size;
extern int sc_multi;    // MPI_THREAD_MULTIPLE was provided
extern MPI_Comm sc_world; // our duplicate of MPI_COMM_WORLD (descriptions, finalize)
extern sc_counters sc_count;
extern pthread_mutex_t sc_mu;

#define SC_LOCK() do { if (sc_multi) pthread_mutex_lock(&sc_mu); } while (0)
#define SC_UNLOCK() do { if (sc_multi) pthread_mutex_unlock(&sc_mu); } while (0)

// types.c
sc_type *sc_type_get(MPI_Datatype dt);
void sc_type_drop(MPI_Datatype dt);
void sc_type_ref(MPI_Datatype dt);
void sc_type_unref(MPI_Datatype dt);
int sc_type_free_held(MPI_Datatype dt);
int sc_stamp(sc_type *t, uint64_t count, sc_hdr *h);
int sc_prefix(sc_type *t, uint64_t k, uint64_t *sig);
void sc_types_init(void);
const char *sc_type_name_of(MPI_Datatype dt);

// comm.c
sc_comm *sc_comm_get(MPI_Comm c);
void sc_comm_add(MPI_Comm c);
int sc_shadow_of(MPI_Comm c, MPI_Comm *out);
void sc_comm_drop(MPI_Comm c);
void sc_comms_init(void);
int sc_world_of(sc_comm *c, int rank);

// descriptions (desc.c)
void sc_desc_send(int world_dest, sc_type *t);
void sc_desc_send_again(int world_dest, uint32_t id);
void sc_desc_catch_up(int world_src, uint32_t total);
int sc_desc_get(int world_src, uint32_t id, const char **text, int wait);
uint32_t sc_desc_sent_to(int world_dest);
void sc_comm_name(sc_comm *c, char *buf, int size);
int sc_desc_finalize(void);

// p2p.c, complete.c
int sc_send_hdr(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, int call);
void sc_recv_done(const void *buf, int count, MPI_Datatype dt, MPI_Comm comm, const MPI_Status *st, int call);
void sc_reqs_init(void);

// repair (keep.c)
uint64_t sc_keep(const void *buf, int count, MPI_Datatype dt, uint64_t bytes, sc_type *t, int world_dest, uint64_t *msgid, int *kept);
int sc_repair(void *buf, int count, MPI_Datatype dt, int world_src, const sc_hdr *h);
int sc_keep_start(void);
void sc_keep_finalize(void);
extern int sc_real_multi; // MPI_THREAD_MULTIPLE from MPI, whatever the application asked

// Encryption of MPI_Allgather between nodes, SIGCHECK_ENCRYPT (crypt.c).
typedef struct {
	uint64_t clear[SC_NCALLS]; // calls to another node, or collectives spanning nodes, sent in the clear
	uint64_t ag_onenode;       // MPI_Allgather within one node: nothing crossed between nodes
	uint64_t ag_large;         // MPI_Allgather past the size limit, in the clear
	uint64_t ag_foreign;       // MPI_Allgather on an intercommunicator, or with ranks outside MPI_COMM_WORLD, in the clear
} sc_enc_counters;
extern int sc_enc_on;
extern sc_enc_counters sc_enc_count;
int sc_allgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm);
void sc_enc_note(MPI_Comm comm, int call, const char *name);
void sc_enc_p2p(int world_dest, int call);
int sc_enc_start(void);
void sc_enc_finalize(void);

// Hashing and reporting (Go).
uint64_t sc_checksum(const void *buf, int count, MPI_Datatype dt, uint64_t bytes, sc_type *t);
uint64_t sc_received_csum(void *buf, int count, MPI_Datatype dt, const MPI_Status *st, int may_inject, int *injected);
void sc_fail(void);

#endif
