#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

// Go memory is passed as uintptr_t: cgo's check of pointer arguments
// refuses a pointer into an object that holds other pointers (a payload
// in a struct), and the memory is either read only during the call or
// pinned (runtime.Pinner) until MPI is done with it.

int sc_init(int *provided, int *rank, int *size);
int sc_finalize(void);
int sc_leaders(int *leaders);
int sc_idup(MPI_Comm *c, MPI_Request *r);
void sc_errors_return(MPI_Comm c);
int sc_comm_free(MPI_Comm *c);
MPI_Request sc_null_request(void);
// sc_out is where the calls that poll report what they found: one, in C
// memory, for the whole process, used under the MPI lock (a Go pointer
// to a result would cost every call cgo's pointer check).
// The calls of every message's path take C memory as uintptr_t too:
// cgo checks every argument of a pointer type, C's own included, on
// every call. Their hdr is the header of the frame to send.
typedef struct {
	char hdr[64];
	int done, src, count, err, faildst, failerr;
	char *msg;
} sc_out;

int sc_test(uintptr_t r, uintptr_t o);
int sc_isend(void *buf, int n, int dst, int tag, MPI_Comm c, MPI_Request *r);
int sc_irecv(void *buf, int n, int src, int tag, MPI_Comm c, MPI_Request *r);
int sc_isend_go(uintptr_t buf, int n, int dst, int tag, MPI_Comm c, uintptr_t r);
int sc_cancel(MPI_Request *r);
int sc_drain(int src, int tag, MPI_Comm c, void *scratch, int n, int *got);
int sc_take_payload(int src, int tag, MPI_Comm c, uintptr_t buf, int n, uintptr_t req, void *scratch, int sn, uintptr_t out);
int sc_ibarrier(MPI_Comm c, MPI_Request *r);
int sc_ibcast(void *buf, int n, int root, MPI_Comm c, MPI_Request *r);
int sc_iallgather(void *send, void *recv, int n, MPI_Comm c, MPI_Request *r);
void sc_error_string(int code, char *buf);
void sc_yield(void);
int sc_cores(void);
int sc_max_error_string(void);

// The send slots: small frames copied into C memory and sent from
// there (slots.c).
typedef struct sc_slots sc_slots;
sc_slots *sc_slots_new(MPI_Comm c, int n, int cap);
int sc_slots_send(uintptr_t s, uintptr_t p, int pn, int dst, int tag, uintptr_t o);
int sc_slots_busy(sc_slots *s, sc_out *o);
void sc_slots_free(sc_slots *s);

// The receive ring: receives posted ahead for frames from any rank
// (ring.c).
typedef struct sc_ring sc_ring;
sc_ring *sc_ring_new(MPI_Comm c, int n, int cap, int tag, int *err);
int sc_ring_poll(uintptr_t r, uintptr_t o);
void sc_ring_free(sc_ring *r);

// sc_busy is what sc_slots_send returns when every slot still has a
// send under way.
enum { sc_busy = -2 };
