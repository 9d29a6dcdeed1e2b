//go:build mpi

// The C side of package mpi: thin wrappers over Open MPI's C API, so
// that Go calls functions rather than macros, and the two blocking calls
// run with Go's signals blocked.

#include "shim.h"
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

// The signals Go's runtime sends its own threads (SIGURG: preemption;
// SIGPROF: the profiler) are blocked around the two calls that talk to
// Open MPI's daemon over sockets and start its threads (MPI_Init_thread,
// MPI_Finalize), so that neither sees EINTR and the threads Open MPI
// starts inherit the mask. Every other call this package makes is
// non-blocking; Go installs its handlers with SA_RESTART, and Open MPI's
// TCP path retries on EINTR.
static void sc_block(sigset_t *old) {
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGURG);
	sigaddset(&s, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

int sc_init(int *provided, int *rank, int *size) {
	sigset_t old;
	int initialized = 0;
	MPI_Initialized(&initialized);
	if (initialized) {
		return -1;
	}
	sc_block(&old);
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return MPI_SUCCESS;
}

int sc_finalize(void) {
	sigset_t old;
	sc_block(&old);
	int rc = MPI_Finalize();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

// sc_leaders gives every rank of the world the world rank of the first
// rank on its shared-memory node (MPI_Comm_split_type), in leaders[size].
int sc_leaders(int *leaders) {
	MPI_Comm node;
	int rank, leader, rc;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	rc = MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
	MPI_Comm_free(&node);
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	return MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
}

int sc_idup(MPI_Comm *c, MPI_Request *r) {
	return MPI_Comm_idup(MPI_COMM_WORLD, c, r);
}

void sc_errors_return(MPI_Comm c) { MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN); }
int sc_comm_free(MPI_Comm *c) { return MPI_Comm_free(c); }

MPI_Request sc_null_request(void) { return MPI_REQUEST_NULL; }

// sc_test tests one request; on completion (done) it reports the
// message's source, byte count and error.
int sc_test(uintptr_t req, uintptr_t out) {
	MPI_Request *r = (MPI_Request *)req;
	sc_out *o = (sc_out *)out;
	MPI_Status st;
	int rc = MPI_Test(r, &o->done, &st);
	// A single completion reports an error by its return value (MPI_ERROR
	// of the status is left undefined).
	if (o->done || rc != MPI_SUCCESS) {
		o->done = 1;
		o->src = st.MPI_SOURCE;
		o->err = rc;
		o->count = 0;
		if (rc == MPI_SUCCESS && MPI_Get_count(&st, MPI_BYTE, &o->count) != MPI_SUCCESS) {
			o->count = -1;
		}
	}
	return rc;
}

int sc_isend(void *buf, int n, int dst, int tag, MPI_Comm c, MPI_Request *r) {
	return MPI_Isend(buf, n, MPI_BYTE, dst, tag, c, r);
}

int sc_isend_go(uintptr_t buf, int n, int dst, int tag, MPI_Comm c, uintptr_t r) {
	return MPI_Isend((void *)buf, n, MPI_BYTE, dst, tag, c, (MPI_Request *)r);
}

int sc_irecv(void *buf, int n, int src, int tag, MPI_Comm c, MPI_Request *r) {
	return MPI_Irecv(buf, n, MPI_BYTE, src < 0 ? MPI_ANY_SOURCE : src, tag, c, r);
}

// sc_cancel withdraws a receive; the request must still be completed
// (sc_test) before its buffer is freed.
int sc_cancel(MPI_Request *r) { return MPI_Cancel(r); }

// sc_drain receives and throws away one message with tag from src, if
// one has come (a peer whose frames this rank no longer reads must not
// be left waiting for its large payloads to be taken).
int sc_drain(int src, int tag, MPI_Comm c, void *scratch, int n, int *got) {
	int flag = 0;
	MPI_Message m;
	MPI_Status st;
	int rc = MPI_Improbe(src, tag, c, &flag, &m, &st);
	*got = flag;
	if (rc != MPI_SUCCESS || !flag) {
		return rc;
	}
	MPI_Mrecv(scratch, n, MPI_BYTE, &m, &st); // a truncation error is fine: the message is gone
	return MPI_SUCCESS;
}

// sc_take_payload starts the receive of the next message with tag from
// src into buf (n bytes, Go memory: its address as an integer), once it
// has come and only if it is exactly n bytes long: MPI never receives a
// longer one into buf, nor writes past n. It returns 0 if no such message
// has come yet, 1 with the receive started (req), or -1 if the message
// is of another length (in o's count), which it then takes into scratch
// (C memory, sn bytes: a longer message is cut there), and an MPI error
// code as err.
int sc_take_payload(int src, int tag, MPI_Comm c, uintptr_t buf, int n, uintptr_t req, void *scratch, int sn, uintptr_t out) {
	sc_out *o = (sc_out *)out;
	int flag = 0;
	MPI_Message m;
	MPI_Status st;
	o->err = MPI_Improbe(src, tag, c, &flag, &m, &st);
	if (o->err != MPI_SUCCESS || !flag) {
		return 0;
	}
	o->count = -1;
	MPI_Get_count(&st, MPI_BYTE, &o->count);
	if (o->count != n) {
		MPI_Mrecv(scratch, sn, MPI_BYTE, &m, &st); // a truncation error is fine: the message is gone
		return -1;
	}
	o->err = MPI_Imrecv((void *)buf, n, MPI_BYTE, &m, (MPI_Request *)req);
	return 1;
}

int sc_ibarrier(MPI_Comm c, MPI_Request *r) { return MPI_Ibarrier(c, r); }
int sc_ibcast(void *buf, int n, int root, MPI_Comm c, MPI_Request *r) {
	return MPI_Ibcast(buf, n, MPI_BYTE, root, c, r);
}
int sc_iallgather(void *send, void *recv, int n, MPI_Comm c, MPI_Request *r) {
	return MPI_Iallgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, c, r);
}

void sc_error_string(int code, char *buf) {
	int n = 0;
	if (MPI_Error_string(code, buf, &n) != MPI_SUCCESS) {
		n = 0;
	}
	buf[n] = 0;
}

void sc_yield(void) { sched_yield(); }

// sc_cores is the number of processors online: the node's, whatever
// this process is bound to.
int sc_cores(void) { return (int)sysconf(_SC_NPROCESSORS_ONLN); }

int sc_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
