//go:build mpi

// SIGCHECK_ENCRYPT=1, the C side: MPI_Allgather between nodes goes
// through the encrypted all-gather (encgather.go), with its datatypes
// packed and unpacked when their bytes are not one run; every other
// collective on a communicator that spans nodes, and every point-to-point
// message to another node, is counted as sent in the clear. And the MPI
// calls that the Go side makes: its messages, its shared-memory window.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc.h"
#include "_cgo_export.h"

int sc_enc_on;
int *sc_enc_node;                     // the node of each world rank (worldNodes)
MPI_Comm sc_enc_world = MPI_COMM_NULL; // our duplicate of MPI_COMM_WORLD, for the key agreement
sc_enc_counters sc_enc_count;
static int keyval = MPI_KEYVAL_INVALID;
static int finalizing;

// What the library knows of a communicator, as its attribute: the Go
// group's handle (0 when it has none: an intercommunicator, a member
// outside MPI_COMM_WORLD) and whether its ranks are on several nodes.
// Kept as an attribute, not in a table keyed by handle, so that MPI frees
// it with the communicator (whichever call made it) and a handle reused
// for another communicator never finds it.
typedef struct {
	uintptr_t h;
	int spans;
} encattr;

static int del_attr(MPI_Comm c, int kv, void *val, void *extra) {
	(void)c; (void)kv; (void)extra;
	encattr *a = val;
	if (a->h) scGoEncFree(a->h, finalizing);
	free(a);
	return MPI_SUCCESS;
}

static encattr *attr_of(MPI_Comm comm) {
	encattr *a = NULL;
	int flag = 0;
	if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL) return NULL;
	if (PMPI_Comm_get_attr(comm, keyval, &a, &flag) == MPI_SUCCESS && flag) return a;
	a = calloc(1, sizeof *a);
	if (!a) return NULL;
	int inter = 0, spans = 1;
	PMPI_Comm_test_inter(comm, &inter);
	// An intercommunicator's two groups are taken to be on two nodes:
	// its collectives are counted as in the clear.
	if (!inter) a->h = scGoEncComm(comm, &spans);
	a->spans = spans;
	if (PMPI_Comm_set_attr(comm, keyval, a) != MPI_SUCCESS) {
		if (a->h) scGoEncFree(a->h, 1);
		free(a);
		return NULL;
	}
	return a;
}

static void count(uint64_t *n) {
	if (sc_multi) __atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
	else (*n)++;
}

// sc_enc_note counts a collective on a communicator that spans nodes as
// sent in the clear. MPI_Allgather counts itself (sc_allgather).
void sc_enc_note(MPI_Comm comm, int call, const char *name) {
	if (!sc_enc_on || !sc_active || strcmp(name, "MPI_Allgather") == 0) return;
	encattr *a = attr_of(comm);
	if (a && a->spans) count(&sc_enc_count.clear[call]);
}

// sc_enc_p2p counts a point-to-point message to world rank w. Lock held.
void sc_enc_p2p(int w, int call) {
	if (!sc_enc_node || w < 0 || w >= sc_world_size) return;
	if (sc_enc_node[w] != sc_enc_node[sc_world_rank]) count(&sc_enc_count.clear[call]);
}

// The most an encrypted all-gather moves in all, p·m (maxEncTotal).
#define SC_ENC_MAX ((int64_t)1 << 30)

// dense says whether count copies of dt are their data bytes in order
// from the buffer's start, so that the all-gather can use the buffer as
// it is.
static int dense(MPI_Datatype dt) {
	SC_LOCK();
	sc_type *t = sc_type_get(dt);
	int d = t && t->id && t->contig;
	SC_UNLOCK();
	return d;
}

int sc_allgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm) {
	if (!sc_enc_on || !sc_active) return PMPI_Allgather(s, sc, sdt, r, rc, rdt, comm);
	encattr *a = attr_of(comm);
	if (!a || !a->h) {
		count(&sc_enc_count.ag_foreign);
		return PMPI_Allgather(s, sc, sdt, r, rc, rdt, comm);
	}
	if (!a->spans) {
		count(&sc_enc_count.ag_onenode);
		return PMPI_Allgather(s, sc, sdt, r, rc, rdt, comm);
	}
	int p = 0, me = 0, ssize = 0, rsize = 0;
	MPI_Aint lb = 0, rext = 0;
	int inplace = s == MPI_IN_PLACE;
	MPI_Datatype st = inplace ? rdt : sdt;
	int scount = inplace ? rc : sc;
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &me);
	if (PMPI_Type_size(st, &ssize) != MPI_SUCCESS || PMPI_Type_size(rdt, &rsize) != MPI_SUCCESS ||
			PMPI_Type_get_extent(rdt, &lb, &rext) != MPI_SUCCESS)
		return PMPI_Allgather(s, sc, sdt, r, rc, rdt, comm); // MPI says what is wrong
	int64_t m = (int64_t)ssize * scount;
	// Every rank of a correct program has the same m: these decisions
	// are the same everywhere.
	if (m <= 0) return PMPI_Allgather(s, sc, sdt, r, rc, rdt, comm); // no data crosses
	if ((int64_t)p * m > SC_ENC_MAX) {
		count(&sc_enc_count.ag_large);
		return PMPI_Allgather(s, sc, sdt, r, rc, rdt, comm);
	}
	const char *sbase = inplace ? (const char *)r + (MPI_Aint)me * rc * rext : s;
	int64_t rbytes = (int64_t)rsize * rc;
	const void *sendp = sbase;
	void *recvp = r, *sbuf = NULL, *rbuf = NULL;
	int packed = 0, rcode = 0;
	if (!dense(st)) {
		int pos = 0, room = 0;
		if (PMPI_Pack_size(scount, st, comm, &room) != MPI_SUCCESS || room < m) room = (int)m;
		sbuf = malloc((size_t)room);
		if (!sbuf || PMPI_Pack(sbase, scount, st, sbuf, room, &pos, comm) != MPI_SUCCESS || pos != m) {
			rcode = scGoEncFail("cannot pack the send buffer into one of its size");
			goto out;
		}
		sendp = sbuf;
		packed = 1;
	}
	if (!dense(rdt) || rbytes != m) {
		rbuf = malloc((size_t)(p * m));
		if (!rbuf) {
			rcode = scGoEncFail("no memory for the receive buffer");
			goto out;
		}
		recvp = rbuf;
		packed = 1;
	}
	rcode = scGoEncAllgather(a->h, (void *)sendp, m, recvp, packed);
	if (rcode == 0 && rbuf && rbytes == m) {
		for (int i = 0; i < p && rcode == 0; i++) {
			int pos = (int)(i * m);
			if (PMPI_Unpack(rbuf, (int)(p * m), &pos, (char *)r + (MPI_Aint)i * rc * rext, rc, rdt, comm) != MPI_SUCCESS)
				rcode = scGoEncFail("cannot unpack a received block into the receive buffer");
		}
	}
out:
	free(sbuf);
	free(rbuf);
	if (rcode != 0) sc_fail();
	if (rbytes != m) {
		// An erroneous program: the receive does not hold what each rank
		// sends. The types check has said so; MPI's error handler decides.
		return PMPI_Comm_call_errhandler(comm, MPI_ERR_TRUNCATE);
	}
	return MPI_SUCCESS;
}

// sc_enc_start reads the settings and agrees the keys, at MPI_Init;
// nonzero ends the job (the reason printed).
int sc_enc_start(void) {
	int on = scGoEncConfig(sc_world_rank);
	if (on < 0) return 2;
	if (!on) return 0;
	MPI_Comm node;
	int leader = sc_world_rank, *real = calloc((size_t)sc_world_size, sizeof(int));
	sc_enc_node = calloc((size_t)sc_world_size, sizeof(int));
	if (!real || !sc_enc_node) return 2;
	// A machine is named by its first world rank.
	if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, sc_world_rank, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
			PMPI_Bcast(&leader, 1, MPI_INT, 0, node) != MPI_SUCCESS ||
			PMPI_Comm_free(&node) != MPI_SUCCESS ||
			sc_shadow_of(MPI_COMM_WORLD, &sc_enc_world) != MPI_SUCCESS ||
			PMPI_Allgather(&leader, 1, MPI_INT, real, 1, MPI_INT, sc_enc_world) != MPI_SUCCESS) {
		free(real);
		return 2;
	}
	PMPI_Comm_set_errhandler(sc_enc_world, MPI_ERRORS_RETURN);
	PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_attr, &keyval, NULL);
	int rc = scGoEncStart(sc_world_rank, sc_world_size, real, sc_enc_node);
	free(real);
	if (rc != 0) return rc;
	sc_enc_on = 1;
	return 0;
}

// sc_enc_finalize frees the groups' MPI objects while MPI still runs;
// attributes deleted later free only memory.
void sc_enc_finalize(void) {
	if (!sc_enc_on) return;
	scGoEncFinalize();
	finalizing = 1;
}

// The Go side's MPI calls. Each is on a communicator of the library's
// own, whose errors return (MPI_ERRORS_RETURN): the Go side reports them.

int sc_enc_members(MPI_Comm c, int *world, int n) {
	MPI_Group g, wg;
	int rc = PMPI_Comm_group(c, &g);
	if (rc != MPI_SUCCESS) return rc;
	PMPI_Comm_group(MPI_COMM_WORLD, &wg);
	int *ranks = malloc(sizeof(int) * (size_t)n);
	if (!ranks) rc = MPI_ERR_NO_MEM;
	else {
		for (int i = 0; i < n; i++) ranks[i] = i;
		rc = PMPI_Group_translate_ranks(g, n, ranks, wg, world);
	}
	free(ranks);
	PMPI_Group_free(&g);
	PMPI_Group_free(&wg);
	return rc;
}

int sc_enc_split(MPI_Comm c, int color, int key, MPI_Comm *out) {
	int rc = PMPI_Comm_split(c, color, key, out);
	if (rc == MPI_SUCCESS) PMPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
	return rc;
}

int sc_enc_comm_free(MPI_Comm *c) { return *c == MPI_COMM_NULL ? MPI_SUCCESS : PMPI_Comm_free(c); }

int sc_enc_bcast(void *buf, int n, int root, MPI_Comm c) { return PMPI_Bcast(buf, n, MPI_BYTE, root, c); }

int sc_enc_allgather_bytes(void *in, int n, void *out, MPI_Comm c) {
	return PMPI_Allgather(in, n, MPI_BYTE, out, n, MPI_BYTE, c);
}

int sc_enc_scatter_bytes(void *in, int n, void *out, MPI_Comm c) {
	return PMPI_Scatter(in, n, MPI_BYTE, out, n, MPI_BYTE, 0, c);
}

static int received(MPI_Status *st, int *n) {
	int c = 0;
	PMPI_Get_count(st, MPI_BYTE, &c);
	*n = c;
	return MPI_SUCCESS;
}

int sc_enc_sendrecv(void *out, int nout, int dst, void *in, int nin, int src, int tag, MPI_Comm c, int *n) {
	MPI_Status st;
	int rc = PMPI_Sendrecv(out, nout, MPI_BYTE, dst, tag, in, nin, MPI_BYTE, src, tag, c, &st);
	return rc == MPI_SUCCESS ? received(&st, n) : rc;
}

int sc_enc_send(void *out, int n, int dst, int tag, MPI_Comm c) { return PMPI_Send(out, n, MPI_BYTE, dst, tag, c); }

int sc_enc_recv(void *in, int nin, int src, int tag, MPI_Comm c, int *n) {
	MPI_Status st;
	int rc = PMPI_Recv(in, nin, MPI_BYTE, src, tag, c, &st);
	return rc == MPI_SUCCESS ? received(&st, n) : rc;
}

int sc_enc_node_barrier(MPI_Comm node, MPI_Win w, int has);

// The node's shared memory: one window on the node's communicator, all
// of it at the node's first rank, every rank given its address.
int sc_enc_win_alloc(MPI_Comm node, size_t size, void **base, MPI_Win *w) {
	int local = 0;
	PMPI_Comm_rank(node, &local);
	void *mine = NULL;
	int rc = PMPI_Win_allocate_shared(local == 0 ? (MPI_Aint)size : 0, 1, MPI_INFO_NULL, node, &mine, w);
	if (rc != MPI_SUCCESS) return rc;
	MPI_Aint got = 0;
	int unit = 0;
	rc = PMPI_Win_shared_query(*w, 0, &got, &unit, base);
	if (rc == MPI_SUCCESS && (size_t)got < size) rc = MPI_ERR_NO_MEM;
	if (rc == MPI_SUCCESS && local == 0) memset(*base, 0, size);
	if (rc == MPI_SUCCESS) rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, *w);
	if (rc == MPI_SUCCESS) rc = sc_enc_node_barrier(node, *w, 1); // zeroed before anyone reads it
	if (rc != MPI_SUCCESS) PMPI_Win_free(w);
	return rc;
}

int sc_enc_win_free(MPI_Win *w) {
	PMPI_Win_unlock_all(*w);
	return PMPI_Win_free(w);
}

int sc_enc_node_barrier(MPI_Comm node, MPI_Win w, int has) {
	if (has) PMPI_Win_sync(w);
	int rc = PMPI_Barrier(node);
	if (has) PMPI_Win_sync(w);
	return rc;
}

// sc_enc_hint reads the algorithm a communicator's MPI_Info asks for
// (MPI_Comm_dup_with_info), into buf; 0 when it asks none.
int sc_enc_hint(MPI_Comm c, char *buf, int n) {
	MPI_Info info;
	int flag = 0;
	if (PMPI_Comm_get_info(c, &info) != MPI_SUCCESS) return 0;
	PMPI_Info_get(info, "sigcheck_encrypt_alg", n - 1, buf, &flag);
	PMPI_Info_free(&info);
	return flag;
}

void sc_enc_comm_name(MPI_Comm c, char *buf, int n) {
	SC_LOCK();
	sc_comm_name(sc_comm_get(c), buf, n);
	SC_UNLOCK();
}

void sc_enc_error_string(int code, char *buf, int n) {
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (PMPI_Error_string(code, s, &len) == MPI_SUCCESS) snprintf(buf, (size_t)n, "%s", s);
	else snprintf(buf, (size_t)n, "MPI error %d", code);
}
