//go:build mpi

// Fortran entry points. Open MPI 4.1's Fortran bindings do not go through
// the C MPI_ functions: mpi_send_ (mpif.h and `use mpi`, in
// libmpi_mpifh.so) converts its arguments and calls PMPI_Send, and
// mpi_send_f08_ (`use mpi_f08`, in libmpi_usempif08.so) calls
// libmpi_mpifh's ompi_send_f, which calls PMPI_Send. So the C wrappers
// never see a Fortran program's calls. This file defines the Fortran entry
// points themselves; each converts its arguments as Open MPI's own do
// (ompi/mpi/fortran/mpif-h/*_f.c) and calls the library's C wrapper, which
// checks and then calls PMPI_.
//
// Each entry point is defined under every name Open MPI exports it by:
// mpi_send, mpi_send_, mpi_send__, MPI_SEND (mpif.h and `use mpi`; gfortran
// calls mpi_send_) and mpi_send_f08_ (`use mpi_f08`). The f08 entries share
// the bodies: in Open MPI 4.1 built for gfortran, as Debian's is, an f08
// handle is one INTEGER (OMPI_FORTRAN_F08_HANDLE_SIZE 4), TYPE(MPI_Status)
// has the layout of the INTEGER status array (6 INTEGERs, the C
// MPI_Status), choice buffers are plain addresses (NO_ARG_CHECK), and an
// absent optional ierror is a null pointer. The pmpi_ names are left alone:
// they are for tools above this one.
//
// Covered: every call the C wrappers wrap. MPI_Init, MPI_Init_thread,
// MPI_Finalize; the communicator constructors (MPI_Comm_dup,
// _dup_with_info, _split, _split_type, _create, _create_group,
// MPI_Intercomm_create, _merge, MPI_Cart_create, _sub, MPI_Graph_create,
// MPI_Dist_graph_create, _adjacent), MPI_Comm_free and _disconnect, so
// that every communicator has its shadow and a freed handle is forgotten;
// MPI_Type_free, likewise for the datatype cache; every point-to-point
// call the C wrappers check (blocking, non-blocking and persistent sends and
// receives, MPI_Sendrecv, _replace, MPI_Mprobe, _Improbe, _Mrecv, _Imrecv,
// MPI_Start, _Startall, MPI_Request_free) and every Wait and Test; the
// collectives MPI_Bcast, _Reduce, _Allreduce, _Scan, _Exscan,
// _Reduce_scatter, _Reduce_scatter_block, _Gather(v), _Scatter(v),
// _Allgather(v), _Alltoall(v) and the non-blocking forms the C wrappers
// have. A receive that bypassed the library would leave its message's
// header unread, and the next receive from that sender would read it: so
// every call that sends, receives or completes a point-to-point message is
// here.
//
// Not covered, and why:
//   - Calls the C wrappers do not check either pass through as before:
//     MPI_Probe, _Iprobe, _Cancel, _Barrier, _Alltoallw, the neighbourhood
//     collectives, MPI_Ireduce_scatter(_block), one-sided and I/O calls.
//     (Under replication, virt.c's generated entry points translate
//     MPI_COMM_WORLD for those of them that take a communicator, and
//     MPI_Cancel's goes to the layer that agrees on its outcome; virt.list
//     names, as N, the Fortran bindings that have none.)
//   - Communicators made by calls the C wrappers do not wrap either
//     (MPI_Comm_spawn, _accept, _connect, _join, MPI_Comm_idup) get no
//     shadow: their messages and collectives pass unchecked, counted as
//     unchecked ("comm") in the summary.
//   - Datatypes of MPI_Type_create_f90_integer/real/complex (combiner
//     F90_*) are not decoded: their messages pass unchecked, as the C
//     wrappers pass MPI_Type_create_darray's.
//   - Other MPI implementations: MPI_IN_PLACE, MPI_BOTTOM, MPI_UNWEIGHTED
//     and MPI_WEIGHTS_EMPTY are recognised by Open MPI's common-block
//     symbols (mpi_fortran_in_place_ …), MPI_STATUS_IGNORE by the
//     standard C variables MPI_F_STATUS_IGNORE and MPI_F_STATUSES_IGNORE,
//     and the f08 entries rely on Open MPI's f08 ABI. INTEGER must be C int
//     (MPI_Fint) and LOGICAL .TRUE. 1, as with gfortran and Open MPI's
//     default build: a program built with -fdefault-integer-8 is not
//     supported (nor is it by that Open MPI).
#include <stdlib.h>
#include "sc.h"

typedef MPI_Fint F;

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER is not C int");

// Open MPI's addresses behind Fortran's MPI_IN_PLACE and MPI_BOTTOM (common
// blocks /mpi_fortran_in_place/ and /mpi_fortran_bottom/, which the
// program, libmpi and libmpi_usempif08 all define; the dynamic linker
// makes them one). Only their addresses matter. Weak, so that the library
// still loads with an Open MPI built without Fortran, where they may be
// missing (and no Fortran program calls these entry points).
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_unweighted_ __attribute__((weak));
extern int mpi_fortran_weights_empty_ __attribute__((weak));

static void *buf_f2c(void *p) {
	if (!p) return p;
	if (p == (void *)&mpi_fortran_in_place_) return MPI_IN_PLACE;
	if (p == (void *)&mpi_fortran_bottom_) return MPI_BOTTOM;
	return p;
}

static int *weights_f2c(F *w) {
	if (w == &mpi_fortran_unweighted_) return MPI_UNWEIGHTED;
	if (w == &mpi_fortran_weights_empty_) return MPI_WEIGHTS_EMPTY;
	return w;
}

// The INTEGERs of one status in an array of statuses.
#define STATUS_INTS ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))

static MPI_Status *status_f2c(F *f, MPI_Status *tmp) { return f == MPI_F_STATUS_IGNORE ? MPI_STATUS_IGNORE : tmp; }

static void status_c2f(const MPI_Status *c, F *f) {
	if (f != MPI_F_STATUS_IGNORE) PMPI_Status_c2f(c, f);
}

// Fortran's .FALSE. is 0 with every compiler; .TRUE. is 1 with gfortran
// (Open MPI's OMPI_FORTRAN_VALUE_TRUE).
static F logical_c2f(int v) { return v ? 1 : 0; }

// SET_IERR evaluates rc, a call, whether or not ierr is there.
#define SET_IERR(rc) do { int _r = (rc); if (ierr) *ierr = (F)_r; } while (0)

// Small arrays of handles and statuses live on the stack.
#define STACK_N 32

typedef struct {
	MPI_Request stack_r[STACK_N];
	MPI_Status stack_s[STACK_N];
	MPI_Request *r;
	MPI_Status *s;
} arrays;

// arrays_get converts n Fortran requests; with statuses, it makes room for
// n C statuses too. It returns MPI_ERR_NO_MEM or MPI_SUCCESS.
static int arrays_get(arrays *a, int n, const F *freqs, int statuses) {
	a->r = a->stack_r;
	a->s = statuses ? a->stack_s : MPI_STATUSES_IGNORE;
	if (n > STACK_N) {
		a->r = malloc((size_t)n * sizeof *a->r);
		if (statuses) a->s = malloc((size_t)n * sizeof *a->s);
		if (!a->r || (statuses && !a->s)) {
			if (a->r != a->stack_r) free(a->r);
			if (statuses && a->s != a->stack_s) free(a->s);
			return MPI_ERR_NO_MEM;
		}
	}
	for (int i = 0; i < n; i++) a->r[i] = PMPI_Request_f2c(freqs[i]);
	return MPI_SUCCESS;
}

static void arrays_put(arrays *a) {
	if (a->r != a->stack_r) free(a->r);
	if (a->s != MPI_STATUSES_IGNORE && a->s != a->stack_s) free(a->s);
}

// FORTRAN(UP, lo, PARAMS) { body } defines the entry point under Open
// MPI's names for it: mpi_lo, mpi_lo_, mpi_lo__, MPI_UP and mpi_lo_f08_.
#define ALIAS(name, lo, PARAMS) void name PARAMS __attribute__((alias("sc_f_" #lo)));
#define FORTRAN(UP, lo, PARAMS)                \
	static void sc_f_##lo PARAMS;              \
	ALIAS(mpi_##lo, lo, PARAMS)                \
	ALIAS(mpi_##lo##_, lo, PARAMS)             \
	ALIAS(mpi_##lo##__, lo, PARAMS)            \
	ALIAS(MPI_##UP, lo, PARAMS)                \
	ALIAS(mpi_##lo##_f08_, lo, PARAMS)         \
	static void sc_f_##lo PARAMS

#define COMM(c) PMPI_Comm_f2c(*(c))
#define TYPE(t) PMPI_Type_f2c(*(t))
#define OP(o) PMPI_Op_f2c(*(o))

// Start and end.

FORTRAN(INIT, init, (F *ierr)) {
	int argc = 0;
	char **argv = NULL;
	SET_IERR(MPI_Init(&argc, &argv));
}

FORTRAN(INIT_THREAD, init_thread, (F *required, F *provided, F *ierr)) {
	int argc = 0, p = MPI_THREAD_SINGLE;
	char **argv = NULL;
	int rc = MPI_Init_thread(&argc, &argv, *required, &p);
	if (rc == MPI_SUCCESS) *provided = p;
	SET_IERR(rc);
}

FORTRAN(FINALIZE, finalize, (F *ierr)) { SET_IERR(MPI_Finalize()); }

FORTRAN(TYPE_FREE, type_free, (F *dt, F *ierr)) {
	MPI_Datatype d = TYPE(dt);
	int rc = MPI_Type_free(&d);
	if (rc == MPI_SUCCESS) *dt = PMPI_Type_c2f(d);
	SET_IERR(rc);
}

// Communicators.

#define NEWCOMM(EXPR)                                   \
	MPI_Comm n = MPI_COMM_NULL;                         \
	int rc = EXPR;                                      \
	if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(n); \
	SET_IERR(rc);

FORTRAN(COMM_DUP, comm_dup, (F *comm, F *newcomm, F *ierr)) { NEWCOMM(MPI_Comm_dup(COMM(comm), &n)) }

FORTRAN(COMM_DUP_WITH_INFO, comm_dup_with_info, (F *comm, F *info, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Comm_dup_with_info(COMM(comm), PMPI_Info_f2c(*info), &n))
}

FORTRAN(COMM_SPLIT, comm_split, (F *comm, F *color, F *key, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Comm_split(COMM(comm), *color, *key, &n))
}

FORTRAN(COMM_SPLIT_TYPE, comm_split_type, (F *comm, F *type, F *key, F *info, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Comm_split_type(COMM(comm), *type, *key, PMPI_Info_f2c(*info), &n))
}

FORTRAN(COMM_CREATE, comm_create, (F *comm, F *group, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Comm_create(COMM(comm), PMPI_Group_f2c(*group), &n))
}

// logicals_f2c converts an array of Fortran LOGICALs to C ints in out (or
// in memory it allocates, which the caller frees when it is not out).
static int *logicals_f2c(const F *l, int n, int *out, int outn) {
	int *c = n <= outn ? out : malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
	if (c)
		for (int i = 0; i < n; i++) c[i] = l[i] != 0;
	return c;
}

FORTRAN(CART_CREATE, cart_create, (F *comm, F *ndims, F *dims, F *periods, F *reorder, F *newcomm, F *ierr)) {
	int buf[STACK_N];
	int *p = logicals_f2c(periods, *ndims, buf, STACK_N);
	if (!p) { SET_IERR(MPI_ERR_NO_MEM); return; }
	MPI_Comm n = MPI_COMM_NULL;
	int rc = MPI_Cart_create(COMM(comm), *ndims, dims, p, *reorder != 0, &n);
	if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(n);
	if (p != buf) free(p);
	SET_IERR(rc);
}

FORTRAN(CART_SUB, cart_sub, (F *comm, F *remain, F *newcomm, F *ierr)) {
	MPI_Comm c = COMM(comm);
	int nd = 0;
	int rc = PMPI_Cartdim_get(c, &nd);
	if (rc != MPI_SUCCESS) { SET_IERR(rc); return; }
	int buf[STACK_N];
	int *r = logicals_f2c(remain, nd, buf, STACK_N);
	if (!r) { SET_IERR(MPI_ERR_NO_MEM); return; }
	MPI_Comm n = MPI_COMM_NULL;
	rc = MPI_Cart_sub(c, r, &n);
	if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(n);
	if (r != buf) free(r);
	SET_IERR(rc);
}

FORTRAN(COMM_CREATE_GROUP, comm_create_group, (F *comm, F *group, F *tag, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Comm_create_group(COMM(comm), PMPI_Group_f2c(*group), *tag, &n))
}

FORTRAN(INTERCOMM_CREATE, intercomm_create, (F *local, F *lleader, F *peer, F *rleader, F *tag, F *newcomm,
		F *ierr)) {
	NEWCOMM(MPI_Intercomm_create(COMM(local), *lleader, COMM(peer), *rleader, *tag, &n))
}

FORTRAN(INTERCOMM_MERGE, intercomm_merge, (F *comm, F *high, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Intercomm_merge(COMM(comm), *high != 0, &n))
}

FORTRAN(GRAPH_CREATE, graph_create, (F *comm, F *nnodes, F *index, F *edges, F *reorder, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Graph_create(COMM(comm), *nnodes, index, edges, *reorder != 0, &n))
}

FORTRAN(DIST_GRAPH_CREATE, dist_graph_create, (F *comm, F *nn, F *srcs, F *degrees, F *dsts, F *weights,
		F *info, F *reorder, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Dist_graph_create(COMM(comm), *nn, srcs, degrees, dsts, weights_f2c(weights),
		PMPI_Info_f2c(*info), *reorder != 0, &n))
}

FORTRAN(DIST_GRAPH_CREATE_ADJACENT, dist_graph_create_adjacent, (F *comm, F *indeg, F *srcs, F *sw,
		F *outdeg, F *dsts, F *dw, F *info, F *reorder, F *newcomm, F *ierr)) {
	NEWCOMM(MPI_Dist_graph_create_adjacent(COMM(comm), *indeg, srcs, weights_f2c(sw), *outdeg, dsts,
		weights_f2c(dw), PMPI_Info_f2c(*info), *reorder != 0, &n))
}

FORTRAN(COMM_FREE, comm_free, (F *comm, F *ierr)) {
	MPI_Comm c = COMM(comm);
	int rc = MPI_Comm_free(&c);
	if (rc == MPI_SUCCESS) *comm = PMPI_Comm_c2f(c);
	SET_IERR(rc);
}

FORTRAN(COMM_DISCONNECT, comm_disconnect, (F *comm, F *ierr)) {
	MPI_Comm c = COMM(comm);
	int rc = MPI_Comm_disconnect(&c);
	if (rc == MPI_SUCCESS) *comm = PMPI_Comm_c2f(c);
	SET_IERR(rc);
}

// Point-to-point.

#define F_SEND(UP, lo, CALL)                                                                          \
	FORTRAN(UP, lo, (void *buf, F *count, F *dt, F *dest, F *tag, F *comm, F *ierr)) {               \
		SET_IERR(CALL(buf_f2c(buf), *count, TYPE(dt), *dest, *tag, COMM(comm)));                      \
	}

F_SEND(SEND, send, MPI_Send)
F_SEND(SSEND, ssend, MPI_Ssend)
F_SEND(RSEND, rsend, MPI_Rsend)
F_SEND(BSEND, bsend, MPI_Bsend)

// The calls of (buf, count, datatype, peer, tag, comm, request).
#define F_REQ(UP, lo, CALL)                                                                           \
	FORTRAN(UP, lo, (void *buf, F *count, F *dt, F *peer, F *tag, F *comm, F *req, F *ierr)) {       \
		MPI_Request r = MPI_REQUEST_NULL;                                                             \
		int rc = CALL(buf_f2c(buf), *count, TYPE(dt), *peer, *tag, COMM(comm), &r);                  \
		if (rc == MPI_SUCCESS) *req = PMPI_Request_c2f(r);                                            \
		SET_IERR(rc);                                                                                 \
	}

F_REQ(ISEND, isend, MPI_Isend)
F_REQ(ISSEND, issend, MPI_Issend)
F_REQ(IRSEND, irsend, MPI_Irsend)
F_REQ(IBSEND, ibsend, MPI_Ibsend)
F_REQ(SEND_INIT, send_init, MPI_Send_init)
F_REQ(SSEND_INIT, ssend_init, MPI_Ssend_init)
F_REQ(RSEND_INIT, rsend_init, MPI_Rsend_init)
F_REQ(BSEND_INIT, bsend_init, MPI_Bsend_init)
F_REQ(IRECV, irecv, MPI_Irecv)
F_REQ(RECV_INIT, recv_init, MPI_Recv_init)

FORTRAN(RECV, recv, (void *buf, F *count, F *dt, F *src, F *tag, F *comm, F *status, F *ierr)) {
	MPI_Status s;
	int rc = MPI_Recv(buf_f2c(buf), *count, TYPE(dt), *src, *tag, COMM(comm), status_f2c(status, &s));
	if (rc == MPI_SUCCESS) status_c2f(&s, status);
	SET_IERR(rc);
}

FORTRAN(SENDRECV, sendrecv, (void *sbuf, F *scount, F *sdt, F *dest, F *stag, void *rbuf, F *rcount, F *rdt,
		F *src, F *rtag, F *comm, F *status, F *ierr)) {
	MPI_Status s;
	int rc = MPI_Sendrecv(buf_f2c(sbuf), *scount, TYPE(sdt), *dest, *stag, buf_f2c(rbuf), *rcount, TYPE(rdt),
		*src, *rtag, COMM(comm), status_f2c(status, &s));
	if (rc == MPI_SUCCESS) status_c2f(&s, status);
	SET_IERR(rc);
}

FORTRAN(SENDRECV_REPLACE, sendrecv_replace, (void *buf, F *count, F *dt, F *dest, F *stag, F *src, F *rtag,
		F *comm, F *status, F *ierr)) {
	MPI_Status s;
	int rc = MPI_Sendrecv_replace(buf_f2c(buf), *count, TYPE(dt), *dest, *stag, *src, *rtag, COMM(comm),
		status_f2c(status, &s));
	if (rc == MPI_SUCCESS) status_c2f(&s, status);
	SET_IERR(rc);
}

FORTRAN(MPROBE, mprobe, (F *src, F *tag, F *comm, F *msg, F *status, F *ierr)) {
	MPI_Status s;
	MPI_Message m = MPI_MESSAGE_NULL;
	int rc = MPI_Mprobe(*src, *tag, COMM(comm), &m, status_f2c(status, &s));
	if (rc == MPI_SUCCESS) {
		*msg = PMPI_Message_c2f(m);
		status_c2f(&s, status);
	}
	SET_IERR(rc);
}

FORTRAN(IMPROBE, improbe, (F *src, F *tag, F *comm, F *flag, F *msg, F *status, F *ierr)) {
	MPI_Status s;
	MPI_Message m = MPI_MESSAGE_NULL;
	int fl = 0;
	int rc = MPI_Improbe(*src, *tag, COMM(comm), &fl, &m, status_f2c(status, &s));
	if (rc == MPI_SUCCESS) {
		*flag = logical_c2f(fl);
		if (fl) {
			*msg = PMPI_Message_c2f(m);
			status_c2f(&s, status);
		}
	}
	SET_IERR(rc);
}

FORTRAN(MRECV, mrecv, (void *buf, F *count, F *dt, F *msg, F *status, F *ierr)) {
	MPI_Status s;
	MPI_Message m = PMPI_Message_f2c(*msg);
	int rc = MPI_Mrecv(buf_f2c(buf), *count, TYPE(dt), &m, status_f2c(status, &s));
	if (rc == MPI_SUCCESS) {
		*msg = PMPI_Message_c2f(m);
		status_c2f(&s, status);
	}
	SET_IERR(rc);
}

FORTRAN(IMRECV, imrecv, (void *buf, F *count, F *dt, F *msg, F *req, F *ierr)) {
	MPI_Message m = PMPI_Message_f2c(*msg);
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Imrecv(buf_f2c(buf), *count, TYPE(dt), &m, &r);
	if (rc == MPI_SUCCESS) {
		*msg = PMPI_Message_c2f(m);
		*req = PMPI_Request_c2f(r);
	}
	SET_IERR(rc);
}

FORTRAN(START, start, (F *req, F *ierr)) {
	MPI_Request r = PMPI_Request_f2c(*req);
	SET_IERR(MPI_Start(&r));
}

FORTRAN(STARTALL, startall, (F *count, F *reqs, F *ierr)) {
	arrays a;
	int n = *count;
	int rc = arrays_get(&a, n, reqs, 0);
	if (rc == MPI_SUCCESS) {
		rc = MPI_Startall(n, a.r);
		arrays_put(&a);
	}
	SET_IERR(rc);
}

FORTRAN(REQUEST_FREE, request_free, (F *req, F *ierr)) {
	MPI_Request r = PMPI_Request_f2c(*req);
	int rc = MPI_Request_free(&r);
	if (rc == MPI_SUCCESS) *req = PMPI_Request_c2f(r);
	SET_IERR(rc);
}

// Completion. A completed request's handle becomes MPI_REQUEST_NULL's
// (a persistent one's stays), as MPI_Request_c2f of the C handle says.

FORTRAN(WAIT, wait, (F *req, F *status, F *ierr)) {
	MPI_Status s;
	MPI_Request r = PMPI_Request_f2c(*req);
	int rc = MPI_Wait(&r, status_f2c(status, &s));
	if (rc == MPI_SUCCESS) {
		*req = PMPI_Request_c2f(r);
		status_c2f(&s, status);
	}
	SET_IERR(rc);
}

FORTRAN(TEST, test, (F *req, F *flag, F *status, F *ierr)) {
	MPI_Status s;
	MPI_Request r = PMPI_Request_f2c(*req);
	int fl = 0;
	int rc = MPI_Test(&r, &fl, status_f2c(status, &s));
	if (rc == MPI_SUCCESS) {
		*flag = logical_c2f(fl);
		if (fl) {
			*req = PMPI_Request_c2f(r);
			status_c2f(&s, status);
		}
	}
	SET_IERR(rc);
}

// done writes back the n handles and the first k statuses of a
// completion over an array.
static void done(arrays *a, int n, F *reqs, F *statuses, int k) {
	for (int i = 0; i < n; i++) reqs[i] = PMPI_Request_c2f(a->r[i]);
	if (statuses == MPI_F_STATUSES_IGNORE) return;
	for (int i = 0; i < k; i++) PMPI_Status_c2f(&a->s[i], statuses + (size_t)i * STATUS_INTS);
}

FORTRAN(WAITALL, waitall, (F *count, F *reqs, F *statuses, F *ierr)) {
	arrays a;
	int n = *count;
	int rc = arrays_get(&a, n, reqs, statuses != MPI_F_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS) { SET_IERR(rc); return; }
	rc = MPI_Waitall(n, a.r, a.s);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) done(&a, n, reqs, statuses, n);
	arrays_put(&a);
	SET_IERR(rc);
}

FORTRAN(TESTALL, testall, (F *count, F *reqs, F *flag, F *statuses, F *ierr)) {
	arrays a;
	int n = *count, fl = 0;
	int rc = arrays_get(&a, n, reqs, statuses != MPI_F_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS) { SET_IERR(rc); return; }
	rc = MPI_Testall(n, a.r, &fl, a.s);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
		*flag = logical_c2f(fl);
		if (fl) done(&a, n, reqs, statuses, n);
	}
	arrays_put(&a);
	SET_IERR(rc);
}

// any finishes Waitany and Testany: idx is C's (0-based or MPI_UNDEFINED).
static void any(arrays *a, F *reqs, F *index, int idx, const MPI_Status *s, F *status) {
	if (idx == MPI_UNDEFINED) {
		*index = MPI_UNDEFINED;
	} else {
		reqs[idx] = PMPI_Request_c2f(a->r[idx]);
		*index = idx + 1;
	}
	status_c2f(s, status);
}

FORTRAN(WAITANY, waitany, (F *count, F *reqs, F *index, F *status, F *ierr)) {
	arrays a;
	MPI_Status s;
	int n = *count, idx = MPI_UNDEFINED;
	int rc = arrays_get(&a, n, reqs, 0);
	if (rc != MPI_SUCCESS) { SET_IERR(rc); return; }
	rc = MPI_Waitany(n, a.r, &idx, status_f2c(status, &s));
	if (rc == MPI_SUCCESS) any(&a, reqs, index, idx, &s, status);
	arrays_put(&a);
	SET_IERR(rc);
}

FORTRAN(TESTANY, testany, (F *count, F *reqs, F *index, F *flag, F *status, F *ierr)) {
	arrays a;
	MPI_Status s;
	int n = *count, idx = MPI_UNDEFINED, fl = 0;
	int rc = arrays_get(&a, n, reqs, 0);
	if (rc != MPI_SUCCESS) { SET_IERR(rc); return; }
	rc = MPI_Testany(n, a.r, &idx, &fl, status_f2c(status, &s));
	if (rc == MPI_SUCCESS) {
		*flag = logical_c2f(fl);
		if (fl) any(&a, reqs, index, idx, &s, status);
		else *index = MPI_UNDEFINED;
	}
	arrays_put(&a);
	SET_IERR(rc);
}

// some finishes Waitsome and Testsome: the indices become 1-based.
static void some_done(arrays *a, int n, F *reqs, int out, F *indices, F *statuses) {
	if (out == MPI_UNDEFINED) return;
	done(a, n, reqs, statuses, out);
	for (int k = 0; k < out; k++) indices[k]++;
}

FORTRAN(WAITSOME, waitsome, (F *incount, F *reqs, F *outcount, F *indices, F *statuses, F *ierr)) {
	arrays a;
	int n = *incount, out = MPI_UNDEFINED;
	int rc = arrays_get(&a, n, reqs, statuses != MPI_F_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS) { SET_IERR(rc); return; }
	rc = MPI_Waitsome(n, a.r, &out, indices, a.s);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
		*outcount = out;
		some_done(&a, n, reqs, out, indices, statuses);
	}
	arrays_put(&a);
	SET_IERR(rc);
}

FORTRAN(TESTSOME, testsome, (F *incount, F *reqs, F *outcount, F *indices, F *statuses, F *ierr)) {
	arrays a;
	int n = *incount, out = MPI_UNDEFINED;
	int rc = arrays_get(&a, n, reqs, statuses != MPI_F_STATUSES_IGNORE);
	if (rc != MPI_SUCCESS) { SET_IERR(rc); return; }
	rc = MPI_Testsome(n, a.r, &out, indices, a.s);
	if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {
		*outcount = out;
		some_done(&a, n, reqs, out, indices, statuses);
	}
	arrays_put(&a);
	SET_IERR(rc);
}

// Collectives, blocking and non-blocking: a non-blocking one's request
// comes before ierr.

#define IREQ                                                      \
	if (rc == MPI_SUCCESS) *req = PMPI_Request_c2f(r);          \
	SET_IERR(rc);

FORTRAN(BCAST, bcast, (void *buf, F *count, F *dt, F *root, F *comm, F *ierr)) {
	SET_IERR(MPI_Bcast(buf_f2c(buf), *count, TYPE(dt), *root, COMM(comm)));
}

FORTRAN(IBCAST, ibcast, (void *buf, F *count, F *dt, F *root, F *comm, F *req, F *ierr)) {
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Ibcast(buf_f2c(buf), *count, TYPE(dt), *root, COMM(comm), &r);
	IREQ
}

FORTRAN(REDUCE, reduce, (void *s, void *r, F *count, F *dt, F *op, F *root, F *comm, F *ierr)) {
	SET_IERR(MPI_Reduce(buf_f2c(s), buf_f2c(r), *count, TYPE(dt), OP(op), *root, COMM(comm)));
}

FORTRAN(IREDUCE, ireduce, (void *s, void *rb, F *count, F *dt, F *op, F *root, F *comm, F *req, F *ierr)) {
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Ireduce(buf_f2c(s), buf_f2c(rb), *count, TYPE(dt), OP(op), *root, COMM(comm), &r);
	IREQ
}

// The reductions of (sendbuf, recvbuf, count, datatype, op, comm).
#define F_REDUCTION(UP, lo, CALL, IUP, ilo, ICALL)                                                        \
	FORTRAN(UP, lo, (void *s, void *rb, F *count, F *dt, F *op, F *comm, F *ierr)) {                     \
		SET_IERR(CALL(buf_f2c(s), buf_f2c(rb), *count, TYPE(dt), OP(op), COMM(comm)));                    \
	}                                                                                                     \
	FORTRAN(IUP, ilo, (void *s, void *rb, F *count, F *dt, F *op, F *comm, F *req, F *ierr)) {           \
		MPI_Request r = MPI_REQUEST_NULL;                                                                 \
		int rc = ICALL(buf_f2c(s), buf_f2c(rb), *count, TYPE(dt), OP(op), COMM(comm), &r);                \
		IREQ                                                                                              \
	}

F_REDUCTION(ALLREDUCE, allreduce, MPI_Allreduce, IALLREDUCE, iallreduce, MPI_Iallreduce)
F_REDUCTION(SCAN, scan, MPI_Scan, ISCAN, iscan, MPI_Iscan)
F_REDUCTION(EXSCAN, exscan, MPI_Exscan, IEXSCAN, iexscan, MPI_Iexscan)

FORTRAN(REDUCE_SCATTER_BLOCK, reduce_scatter_block, (void *s, void *r, F *count, F *dt, F *op, F *comm, F *ierr)) {
	SET_IERR(MPI_Reduce_scatter_block(buf_f2c(s), buf_f2c(r), *count, TYPE(dt), OP(op), COMM(comm)));
}

FORTRAN(REDUCE_SCATTER, reduce_scatter, (void *s, void *r, F *counts, F *dt, F *op, F *comm, F *ierr)) {
	SET_IERR(MPI_Reduce_scatter(buf_f2c(s), buf_f2c(r), counts, TYPE(dt), OP(op), COMM(comm)));
}

// (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm).
#define F_ROOTED(UP, lo, CALL, IUP, ilo, ICALL)                                                           \
	FORTRAN(UP, lo, (void *s, F *sc, F *sdt, void *rb, F *rc_, F *rdt, F *root, F *comm, F *ierr)) {     \
		SET_IERR(CALL(buf_f2c(s), *sc, TYPE(sdt), buf_f2c(rb), *rc_, TYPE(rdt), *root, COMM(comm)));      \
	}                                                                                                     \
	FORTRAN(IUP, ilo, (void *s, F *sc, F *sdt, void *rb, F *rc_, F *rdt, F *root, F *comm, F *req,       \
			F *ierr)) {                                                                                   \
		MPI_Request r = MPI_REQUEST_NULL;                                                                 \
		int rc = ICALL(buf_f2c(s), *sc, TYPE(sdt), buf_f2c(rb), *rc_, TYPE(rdt), *root, COMM(comm), &r);  \
		IREQ                                                                                              \
	}

F_ROOTED(GATHER, gather, MPI_Gather, IGATHER, igather, MPI_Igather)
F_ROOTED(SCATTER, scatter, MPI_Scatter, ISCATTER, iscatter, MPI_Iscatter)

// (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm).
#define F_ALL(UP, lo, CALL, IUP, ilo, ICALL)                                                              \
	FORTRAN(UP, lo, (void *s, F *sc, F *sdt, void *rb, F *rc_, F *rdt, F *comm, F *ierr)) {              \
		SET_IERR(CALL(buf_f2c(s), *sc, TYPE(sdt), buf_f2c(rb), *rc_, TYPE(rdt), COMM(comm)));             \
	}                                                                                                     \
	FORTRAN(IUP, ilo, (void *s, F *sc, F *sdt, void *rb, F *rc_, F *rdt, F *comm, F *req, F *ierr)) {    \
		MPI_Request r = MPI_REQUEST_NULL;                                                                 \
		int rc = ICALL(buf_f2c(s), *sc, TYPE(sdt), buf_f2c(rb), *rc_, TYPE(rdt), COMM(comm), &r);         \
		IREQ                                                                                              \
	}

F_ALL(ALLGATHER, allgather, MPI_Allgather, IALLGATHER, iallgather, MPI_Iallgather)
F_ALL(ALLTOALL, alltoall, MPI_Alltoall, IALLTOALL, ialltoall, MPI_Ialltoall)

FORTRAN(GATHERV, gatherv, (void *s, F *sc, F *sdt, void *rb, F *rcs, F *displs, F *rdt, F *root, F *comm,
		F *ierr)) {
	SET_IERR(MPI_Gatherv(buf_f2c(s), *sc, TYPE(sdt), buf_f2c(rb), rcs, displs, TYPE(rdt), *root, COMM(comm)));
}

FORTRAN(IGATHERV, igatherv, (void *s, F *sc, F *sdt, void *rb, F *rcs, F *displs, F *rdt, F *root, F *comm,
		F *req, F *ierr)) {
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Igatherv(buf_f2c(s), *sc, TYPE(sdt), buf_f2c(rb), rcs, displs, TYPE(rdt), *root, COMM(comm), &r);
	IREQ
}

FORTRAN(SCATTERV, scatterv, (void *s, F *scs, F *displs, F *sdt, void *rb, F *rc_, F *rdt, F *root, F *comm,
		F *ierr)) {
	SET_IERR(MPI_Scatterv(buf_f2c(s), scs, displs, TYPE(sdt), buf_f2c(rb), *rc_, TYPE(rdt), *root, COMM(comm)));
}

FORTRAN(ISCATTERV, iscatterv, (void *s, F *scs, F *displs, F *sdt, void *rb, F *rc_, F *rdt, F *root, F *comm,
		F *req, F *ierr)) {
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Iscatterv(buf_f2c(s), scs, displs, TYPE(sdt), buf_f2c(rb), *rc_, TYPE(rdt), *root, COMM(comm), &r);
	IREQ
}

FORTRAN(ALLGATHERV, allgatherv, (void *s, F *sc, F *sdt, void *rb, F *rcs, F *displs, F *rdt, F *comm, F *ierr)) {
	SET_IERR(MPI_Allgatherv(buf_f2c(s), *sc, TYPE(sdt), buf_f2c(rb), rcs, displs, TYPE(rdt), COMM(comm)));
}

FORTRAN(IALLGATHERV, iallgatherv, (void *s, F *sc, F *sdt, void *rb, F *rcs, F *displs, F *rdt, F *comm,
		F *req, F *ierr)) {
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Iallgatherv(buf_f2c(s), *sc, TYPE(sdt), buf_f2c(rb), rcs, displs, TYPE(rdt), COMM(comm), &r);
	IREQ
}

FORTRAN(ALLTOALLV, alltoallv, (void *s, F *scs, F *sds, F *sdt, void *rb, F *rcs, F *rds, F *rdt, F *comm,
		F *ierr)) {
	SET_IERR(MPI_Alltoallv(buf_f2c(s), scs, sds, TYPE(sdt), buf_f2c(rb), rcs, rds, TYPE(rdt), COMM(comm)));
}

FORTRAN(IALLTOALLV, ialltoallv, (void *s, F *scs, F *sds, F *sdt, void *rb, F *rcs, F *rds, F *rdt, F *comm,
		F *req, F *ierr)) {
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_Ialltoallv(buf_f2c(s), scs, sds, TYPE(sdt), buf_f2c(rb), rcs, rds, TYPE(rdt), COMM(comm), &r);
	IREQ
}
