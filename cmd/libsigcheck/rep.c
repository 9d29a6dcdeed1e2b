//go:build mpi

// Replication: the set-up at MPI_Init, the communicators, replica 0's
// answers to the other replicas, and the waits.
//
// At MPI_Init the world of R·n processes is split twice: into R replica
// worlds of n processes (color = replica, key = application rank), each
// of which the application sees as its MPI_COMM_WORLD, and into n replica
// sets of R processes (color = application rank), on which the replicas of
// one rank agree on what must not differ between them (rep_ctl), repair a
// message (rep_fix) and vote on a collective's result (rep_vote). Each
// communicator of the application has a twin over all its replicas (x),
// whose rank replica·size + rank is that rank's replica: the hashes
// (MsgPlusHash) or copies (All-to-all) of its messages go there, with the
// message's own tag, so that they never meet the application's messages.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" // MPI_Attr_get, which programs still call
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "repint.h"
#include "_cgo_export.h"

int sc_rep_on;
_Thread_local int sc_rep_in;
MPI_Comm sc_rep_world = MPI_COMM_NULL;
sc_rep_counters sc_rep_count;
sc_rep_cfg sc_rep_conf;
int sc_rep_replica, sc_rep_app, sc_rep_n;
MPI_Comm rep_set = MPI_COMM_NULL, rep_ctl = MPI_COMM_NULL, rep_fix = MPI_COMM_NULL, rep_vote = MPI_COMM_NULL;

static int universe; // MPI_UNIVERSE_SIZE as the application sees it

#define TAG_CTL 1

void rep_fail(void) { sc_fail(); }

// The thread inside the layer. Two at once would make each replica's calls
// interleave as its threads happen to run, and no vote could agree: the
// job ends, saying why, with the status of a bad setting (2), for the
// program is not wrong.
static uintptr_t owner;

void rep_own(void) {
	uintptr_t me = (uintptr_t)pthread_self(), was = 0;
	if (__atomic_compare_exchange_n(&owner, &was, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) || was == me) return;
	static const char msg[] = "sigcheck: SIGCHECK_REPLICATE: two threads of the application called MPI at once; "
		"replicas take the same path only if MPI is called from one thread at a time (MPI_THREAD_SERIALIZED)\n";
	if (write(2, msg, sizeof msg - 1) < 0) {}
	PMPI_Abort(MPI_COMM_WORLD, 2);
}

void rep_disown(void) { __atomic_store_n(&owner, 0, __ATOMIC_RELEASE); }

// The communicators the layer follows, by handle (open addressing, as
// comm.c's table).
static rep_comm **tab;
static size_t tabcap, tablen;
static int next_id;

static size_t slot_of(void *h, size_t cap) {
	uint64_t x = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 20) & (cap - 1);
}

static rep_comm *lookup(MPI_Comm c, size_t *at) {
	if (!tabcap) { *at = 0; return NULL; }
	size_t j = slot_of(c, tabcap);
	while (tab[j]) {
		if (tab[j]->vc == c) { *at = j; return tab[j]; }
		j = (j + 1) & (tabcap - 1);
	}
	*at = j;
	return NULL;
}

static int grow(void) {
	size_t ncap = tabcap ? tabcap * 2 : 64;
	rep_comm **n = calloc(ncap, sizeof *n);
	if (!n) return -1;
	for (size_t i = 0; i < tabcap; i++) {
		rep_comm *e = tab[i];
		if (!e) continue;
		size_t j = slot_of(e->vc, ncap);
		while (n[j]) j = (j + 1) & (ncap - 1);
		n[j] = e;
	}
	free(tab);
	tab = n;
	tabcap = ncap;
	return 0;
}

// add follows vc, with x its twin over the replicas (or MPI_COMM_NULL).
static rep_comm *add(MPI_Comm vc, MPI_Comm x) {
	size_t at;
	rep_comm *e = lookup(vc, &at);
	if (e) return e;
	if ((tablen + 1) * 2 > tabcap && grow() != 0) return NULL;
	lookup(vc, &at);
	e = calloc(1, sizeof *e);
	if (!e) return NULL;
	e->vc = vc;
	e->x = x;
	e->id = next_id++;
	PMPI_Comm_test_inter(vc, &e->inter);
	if (e->inter) PMPI_Comm_remote_size(vc, &e->size);
	else PMPI_Comm_size(vc, &e->size);
	PMPI_Comm_rank(vc, &e->me);
	if (x != MPI_COMM_NULL) e->seq = calloc((size_t)e->size, sizeof *e->seq);
	tab[at] = e;
	tablen++;
	return e;
}

// rep_comm_get returns what the layer knows of vc. A communicator it did
// not see made (MPI_Comm_idup, spawn, accept) is followed from its first
// use, with no twin: its messages are not compared, but replica 0 still
// resolves its wildcards.
rep_comm *rep_comm_get(MPI_Comm vc) {
	if (vc == MPI_COMM_NULL) return NULL;
	size_t at;
	rep_comm *e = lookup(vc, &at);
	return e ? e : add(vc, MPI_COMM_NULL);
}

// rep_comm_derive makes the twin of n, which the application made from
// parent in a collective call that every replica of every rank of parent
// makes too: the split of parent's twin by n's first rank (as a rank of
// parent), keyed replica·size + rank. If the replicas did not make the
// same communicator (MPI_Comm_split_type groups by machine, and replicas
// may sit on different ones), the twin's size says so, and n's messages
// go uncompared on every replica alike.
void rep_comm_derive(MPI_Comm parent, MPI_Comm n) {
	rep_comm *p = rep_comm_get(parent);
	int inter = 0;
	if (n != MPI_COMM_NULL) PMPI_Comm_test_inter(n, &inter);
	if (!p || p->x == MPI_COMM_NULL || p->inter) {
		rep_comm *e = n != MPI_COMM_NULL ? add(n, MPI_COMM_NULL) : NULL;
		if (e && p) e->differs = p->differs;
		return;
	}
	int color = MPI_UNDEFINED, key = 0, size = 0, me = 0;
	if (n != MPI_COMM_NULL && !inter) {
		MPI_Group gn, gp;
		int zero = 0;
		PMPI_Comm_group(n, &gn);
		PMPI_Comm_group(parent, &gp);
		PMPI_Group_translate_ranks(gn, 1, &zero, gp, &color);
		PMPI_Group_free(&gn);
		PMPI_Group_free(&gp);
		PMPI_Comm_size(n, &size);
		PMPI_Comm_rank(n, &me);
		key = sc_rep_replica * size + me;
	}
	MPI_Comm x = MPI_COMM_NULL;
	int differs = 0;
	if (PMPI_Comm_split(p->x, color, key, &x) != MPI_SUCCESS) x = MPI_COMM_NULL;
	if (x != MPI_COMM_NULL) {
		int v[2] = {size, -size}, w[2] = {0, 0}, xs = 0;
		PMPI_Allreduce(v, w, 2, MPI_INT, MPI_MAX, x);
		PMPI_Comm_size(x, &xs);
		if (w[0] != -w[1] || xs != sc_rep_conf.r * size) {
			PMPI_Comm_free(&x);
			differs = 1;
		}
	}
	if (n != MPI_COMM_NULL) {
		rep_comm *e = add(n, x);
		if (e) e->differs = differs;
	} else if (x != MPI_COMM_NULL) {
		PMPI_Comm_free(&x);
	}
}

void rep_comm_drop(MPI_Comm vc) {
	size_t at;
	rep_comm *e = lookup(vc, &at);
	if (!e) return;
	tab[at] = NULL;
	tablen--;
	size_t j = (at + 1) & (tabcap - 1);
	while (tab[j]) {
		rep_comm *m = tab[j];
		tab[j] = NULL;
		size_t k = slot_of(m->vc, tabcap);
		while (tab[k]) k = (k + 1) & (tabcap - 1);
		tab[k] = m;
		j = (j + 1) & (tabcap - 1);
	}
	if (e->x != MPI_COMM_NULL) PMPI_Comm_free(&e->x);
	free(e->seq);
	free(e);
}

void rep_comm_name(rep_comm *c, char *buf, int size) {
	char name[MPI_MAX_OBJECT_NAME];
	int len = 0;
	name[0] = 0;
	if (c) PMPI_Comm_get_name(c->vc, name, &len);
	if (len > 0) snprintf(buf, (size_t)size, "%s", name);
	else if (c) snprintf(buf, (size_t)size, "communicator #%d", c->id);
	else snprintf(buf, (size_t)size, "an unknown communicator");
}

// Waits. Every wait of the layer is for another replica's message, which
// a replica that runs the same program sends; a replica that took another
// path never does, so each wait ends after SIGCHECK_REPLICATE_WAIT
// seconds with a report. The loop yields the core while it waits: the
// replicas of a job on one machine share its cores.
void rep_timeout(const char *what) {
	char detail[256];
	snprintf(detail, sizeof detail, "waited %.0f s for %s; the replicas no longer make the same calls, or one of them is gone",
		sc_rep_conf.wait, what);
	scGoRepFinding(5, "", "", -1, -1, -1, detail);
	rep_fail();
}

void rep_wait_req(MPI_Request *r, MPI_Status *st, const char *what) {
	int done = 0;
	double deadline = 0;
	for (unsigned spins = 0;; spins++) {
		PMPI_Test(r, &done, st);
		if (done) return;
		if (spins < 64) continue;
		if ((spins & 255) == 0) {
			double now = PMPI_Wtime();
			if (deadline == 0) deadline = now + sc_rep_conf.wait;
			else if (now > deadline) rep_timeout(what);
		}
		sched_yield();
	}
}

void rep_recv_bounded(void *buf, int n, int src, int tag, MPI_Comm c, MPI_Status *st, const char *what) {
	MPI_Request r;
	MPI_Status tmp;
	PMPI_Irecv(buf, n, MPI_BYTE, src, tag, c, &r);
	rep_wait_req(&r, st ? st : &tmp, what);
}

// rep_progress lets MPI move this replica's own messages on while it
// follows replica 0's "not yet" without calling MPI for the application.
void rep_progress(void) {
	int flag = 0;
	PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, rep_ctl, &flag, MPI_STATUS_IGNORE);
}

void rep_send_bounded(const void *buf, int n, int dst, int tag, MPI_Comm c, const char *what) {
	MPI_Request r;
	PMPI_Isend(buf, n, MPI_BYTE, dst, tag, c, &r);
	rep_wait_req(&r, MPI_STATUS_IGNORE, what);
}

// Replica 0's answers: one stream from replica 0 to each other replica
// of its rank, in the order the application makes the calls, which is
// the same in every replica. Each carries its kind: a replica that reads
// another kind than it expects has left the others' path.
typedef struct {
	int32_t kind, len;
} ctl_hdr;

#define CTL_MAX 4096

static const char *kind_name(int k) {
	static const char *names[] = {"", "MPI_Wtime", "MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall",
		"MPI_Waitany", "MPI_Waitsome", "MPI_Probe", "MPI_Iprobe", "MPI_Mprobe", "MPI_Improbe",
		"a wildcard receive", "MPI_Sendrecv", "MPI_Get_processor_name", "MPI_Request_get_status"};
	return k > 0 && k < (int)(sizeof names / sizeof *names) ? names[k] : "an unknown call";
}

void rep_ctl_send(int kind, const void *p, int n) {
	char stackbuf[256];
	size_t total = sizeof(ctl_hdr) + (size_t)n;
	char *b = total <= sizeof stackbuf ? stackbuf : malloc(total);
	if (!b) rep_fail();
	ctl_hdr h = {kind, n};
	memcpy(b, &h, sizeof h);
	if (n) memcpy(b + sizeof h, p, (size_t)n);
	for (int j = 1; j < sc_rep_conf.r; j++) rep_send_bounded(b, (int)total, j, TAG_CTL, rep_ctl, "another replica to take replica 0's answer");
	if (b != stackbuf) free(b);
	sc_rep_count.agreed++;
}

// rep_ctl_recv reads replica 0's next answer, of kind and at most n
// bytes, into p.
void rep_ctl_recv(int kind, void *p, int n) {
	char stackbuf[256];
	size_t total = sizeof(ctl_hdr) + (size_t)n;
	char *b = total <= sizeof stackbuf ? stackbuf : malloc(total);
	if (!b) rep_fail();
	MPI_Status st;
	char what[96];
	snprintf(what, sizeof what, "replica 0's answer to %s", kind_name(kind));
	rep_recv_bounded(b, (int)total, 0, TAG_CTL, rep_ctl, &st, what);
	ctl_hdr h;
	memcpy(&h, b, sizeof h);
	int got = 0;
	PMPI_Get_count(&st, MPI_BYTE, &got);
	if (h.kind != kind || h.len > n || (size_t)got != sizeof h + (size_t)h.len) {
		char detail[256];
		snprintf(detail, sizeof detail, "replica 0 answered %s where this replica asked about %s",
			kind_name(h.kind), kind_name(kind));
		scGoRepFinding(4, "", "", -1, -1, -1, detail);
		rep_fail();
	}
	if (h.len) memcpy(p, b + sizeof h, (size_t)h.len);
	if (b != stackbuf) free(b);
	sc_rep_count.agreed++;
}

// Set-up.

static int place(void) {
	int size = sc_world_size, w = sc_world_rank;
	char *names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
	int *replica = malloc(sizeof(int) * (size_t)size), *app = malloc(sizeof(int) * (size_t)size);
	char mine[MPI_MAX_PROCESSOR_NAME];
	memset(mine, 0, sizeof mine);
	int len = 0;
	if (!names || !replica || !app) return -1;
	if (scGoRepHost(w, mine, MPI_MAX_PROCESSOR_NAME) < 0) PMPI_Get_processor_name(mine, &len);
	PMPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
	int rc = scGoRepPlace(names, MPI_MAX_PROCESSOR_NAME, size, sc_rep_conf.r, replica, app);
	if (rc == 0) {
		sc_rep_replica = replica[w];
		sc_rep_app = app[w];
	}
	free(names);
	free(replica);
	free(app);
	return rc;
}

// sc_rep_start sets replication up, after PMPI_Init and the checking
// layer's own set-up. It returns 0, or the status to end the job with.
int sc_rep_start(void) {
	int on = scGoRepInit(sc_world_rank, sc_world_size, &sc_rep_conf);
	if (on == 0) return 0;
	if (on < 0 || place() != 0) return 2;
	sc_rep_n = sc_world_size / sc_rep_conf.r;
	universe = sc_rep_n;
	PMPI_Comm_split(MPI_COMM_WORLD, sc_rep_replica, sc_rep_app, &sc_rep_world);
	PMPI_Comm_set_name(sc_rep_world, "MPI_COMM_WORLD");
	PMPI_Comm_split(MPI_COMM_WORLD, sc_rep_app, sc_rep_replica, &rep_set);
	PMPI_Comm_dup(rep_set, &rep_ctl);
	PMPI_Comm_dup(rep_set, &rep_fix);
	PMPI_Comm_dup(rep_set, &rep_vote);
	MPI_Comm xw = MPI_COMM_NULL, xs = MPI_COMM_NULL;
	PMPI_Comm_split(MPI_COMM_WORLD, 0, sc_rep_replica * sc_rep_n + sc_rep_app, &xw);
	PMPI_Comm_dup(rep_set, &xs);
	add(sc_rep_world, xw);
	add(MPI_COMM_SELF, xs);
	// The checking layer's shadow of the application's world.
	sc_comm_add(sc_rep_world);
	// Bytes a program sends without having written them (a buffer from
	// malloc, partly filled) hold what the heap held before, which differs
	// between replicas (freed chunks keep pointers, and addresses differ),
	// and their vote would disagree where nothing went wrong. glibc fills
	// memory malloc returns with one byte when asked (M_PERTURB, as
	// MALLOC_PERTURB_ does): a correct program never reads it, so its
	// results cannot change, and every replica sends the same.
	if (sc_rep_conf.perturb) mallopt(M_PERTURB, 0x5c);
	// One replica's output is the job's: the others' would repeat it.
	if (sc_rep_replica != 0) {
		fflush(stdout);
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
	}
	sc_rep_on = 1;
	return 0;
}

void sc_rep_finalize(void) {
	if (!sc_rep_on) return;
	fflush(stdout);
	sc_rep_in = 1;
	rep_claims_finalize();
	sc_rep_on = 0;
	sc_rep_in = 0;
}

// Calls that reveal what differs between replicas, answered with replica
// 0's answer.

double MPI_Wtime(void) {
	if (!sc_rep_on || sc_rep_in) return PMPI_Wtime();
	REP_ENTER();
	double t = 0;
	if (sc_rep_replica == 0) {
		t = PMPI_Wtime();
		rep_ctl_send(CTL_WTIME, &t, sizeof t);
	} else {
		rep_ctl_recv(CTL_WTIME, &t, sizeof t);
	}
	REP_LEAVE();
	return t;
}

int MPI_Get_processor_name(char *name, int *len) {
	if (!sc_rep_on || sc_rep_in) return PMPI_Get_processor_name(name, len);
	char buf[MPI_MAX_PROCESSOR_NAME + 1];
	int n = 0;
	memset(buf, 0, sizeof buf);
	REP_ENTER();
	if (sc_rep_replica == 0) {
		PMPI_Get_processor_name(buf, &n);
		rep_ctl_send(CTL_NAME, buf, MPI_MAX_PROCESSOR_NAME);
	} else {
		rep_ctl_recv(CTL_NAME, buf, MPI_MAX_PROCESSOR_NAME);
		buf[MPI_MAX_PROCESSOR_NAME - 1] = 0;
		n = (int)strlen(buf);
	}
	REP_LEAVE();
	memcpy(name, buf, (size_t)n + 1);
	*len = n;
	return MPI_SUCCESS;
}

// MPI's predefined attributes are cached on MPI_COMM_WORLD only, not on
// the replica's world that stands for it: they are read from there, but
// MPI_UNIVERSE_SIZE counts the application's ranks.
static int predefined(int keyval) {
	return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
		keyval == MPI_APPNUM || keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE;
}

int MPI_Comm_get_attr(MPI_Comm c, int keyval, void *val, int *flag) {
	if (!sc_rep_on || c != MPI_COMM_WORLD || !predefined(keyval)) return PMPI_Comm_get_attr(sc_rep_vc(c), keyval, val, flag);
	int rc = PMPI_Comm_get_attr(c, keyval, val, flag);
	if (rc == MPI_SUCCESS && keyval == MPI_UNIVERSE_SIZE && *flag) *(int **)val = &universe;
	return rc;
}

int MPI_Attr_get(MPI_Comm c, int keyval, void *val, int *flag) {
	if (!sc_rep_on || c != MPI_COMM_WORLD || !predefined(keyval)) return PMPI_Attr_get(sc_rep_vc(c), keyval, val, flag);
	int rc = PMPI_Attr_get(c, keyval, val, flag);
	if (rc == MPI_SUCCESS && keyval == MPI_UNIVERSE_SIZE && *flag) *(int **)val = &universe;
	return rc;
}
