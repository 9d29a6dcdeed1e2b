//go:build mpi

// Repair: a sender keeps a copy of what it sends, and a receiver that
// finds a message corrupt asks the sender for it again before its receive
// returns.
//
// The copy is taken in the pass that takes the checksum (csum's fused
// copy and XXH3), after the message has been started, so it costs about
// what the checksum alone would and overlaps the transfer. Copies live in
// a ring of SIGCHECK_KEEP MiB (16 by default), the oldest overwritten
// first; a message larger than the ring, or overwritten before its
// receiver checked it, cannot be repaired, and the report says so.
//
// Waiting for the receiver's verdict instead, as merkle-mpi does, needs no
// copy; but a send would then complete only when its receiver has checked
// it, which a receiver does in its own Wait or Test. Two ranks that each
// wait for their send before their receive (legal: a rendezvous send
// completes without its receiver's Wait) would wait for each other.
// Asks are answered by a thread of the library's, which needs MPI to
// run at MPI_THREAD_MULTIPLE: in repair mode the library asks for it,
// and tells the application the level it asked for.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sc.h"
#include "_cgo_export.h"

#define SC_TAG_ASK 2
#define SC_TAG_ANSWER 3
#define SC_ENTRIES 65536

int sc_real_multi;
static MPI_Comm repair_comm = MPI_COMM_NULL;
static pthread_t server;
static volatile int stopping;
static int started;

// The ring.
static pthread_mutex_t keep_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *ring;
static size_t ringcap, pos;
static struct entry { int world; uint64_t msgid; size_t off, len; } *ents;
static size_t first, nents; // ents[first..first+nents) mod SC_ENTRIES, oldest first
static uint64_t next_msgid;

static size_t keep_bytes(void) {
	const char *v = getenv("SIGCHECK_KEEP");
	long mib = v ? strtol(v, NULL, 10) : 16;
	if (mib < 1) mib = 1;
	if (mib > 4096) mib = 4096;
	return (size_t)mib << 20;
}

// A copy of no bytes holds the one byte reserve gave it, so that room
// starting where it stands evicts it.
static int overlaps(const struct entry *e, size_t off, size_t len) {
	size_t elen = e->len ? e->len : 1;
	return e->off < off + len && off < e->off + elen;
}

// reserve returns room for len bytes, evicting the oldest copies that
// are in the way. Copies are laid out in the order they were kept, lap
// after lap, so the oldest are the front of the queue: at a wrap, what is
// left of the last lap beyond pos; then whatever overlaps the new room.
// Each copy is evicted once. Keep lock held.
static unsigned char *reserve(size_t len, size_t *off) {
	if (!ring) {
		ringcap = keep_bytes();
		ring = malloc(ringcap);
		ents = malloc(SC_ENTRIES * sizeof *ents);
		if (!ring || !ents) { free(ring); free(ents); ring = NULL; ents = NULL; return NULL; }
		// Touched now, a byte a page, so that repair's memory is its whole
		// cost from the first message on, not a growth per message until
		// the ring is full. (A memset to 0 would do, but a compiler may
		// fold malloc and memset into calloc, which touches nothing.)
		for (size_t i = 0; i < ringcap; i += 4096) ((volatile unsigned char *)ring)[i] = 1;
		for (size_t i = 0; i < SC_ENTRIES * sizeof *ents; i += 4096) ((volatile unsigned char *)ents)[i] = 1;
	}
	if (len > ringcap) return NULL;
	if (pos + len > ringcap) {
		while (nents && ents[first].off >= pos) {
			first = (first + 1) % SC_ENTRIES;
			nents--;
		}
		pos = 0;
	}
	while (nents && (nents == SC_ENTRIES || overlaps(&ents[first], pos, len))) {
		first = (first + 1) % SC_ENTRIES;
		nents--;
	}
	*off = pos;
	pos += len;
	return ring + *off;
}

// sc_keep takes the checksum of a message's data bytes and, in repair
// mode, keeps a copy for its destination; *kept says whether it did.
uint64_t sc_keep(const void *buf, int count, MPI_Datatype dt, uint64_t bytes, sc_type *t, int world, uint64_t *msgid, int *kept) {
	*kept = 0;
	if (sc_mode < SC_REPAIR || world < 0) return sc_checksum(buf, count, dt, bytes, t);
	pthread_mutex_lock(&keep_mu);
	*msgid = ++next_msgid;
	size_t off;
	unsigned char *dst = reserve(bytes ? bytes : 1, &off);
	uint64_t sum;
	if (!dst) {
		pthread_mutex_unlock(&keep_mu);
		return sc_checksum(buf, count, dt, bytes, t);
	}
	if (t && t->contig) {
		sum = scGoCopyHash(dst, (void *)buf, bytes);
	} else {
		int pos2 = 0, n = count;
		if (t && t->size > 0) {
			uint64_t need = (bytes + (uint64_t)t->size - 1) / (uint64_t)t->size;
			if (need < (uint64_t)n) n = (int)need;
		}
		int size = 0;
		PMPI_Pack_size(n, dt, MPI_COMM_WORLD, &size);
		if ((uint64_t)size > bytes) { // pack whole instances elsewhere, keep the prefix
			unsigned char *tmp = malloc((size_t)size);
			if (tmp) PMPI_Pack(buf, n, dt, tmp, size, &pos2, MPI_COMM_WORLD), memcpy(dst, tmp, bytes);
			free(tmp);
		} else if (bytes) {
			PMPI_Pack(buf, n, dt, dst, size, &pos2, MPI_COMM_WORLD);
		}
		sum = scGoHash(dst, bytes);
	}
	struct entry *e = &ents[(first + nents) % SC_ENTRIES];
	*e = (struct entry){world, *msgid, off, bytes};
	nents++;
	*kept = 1;
	pthread_mutex_unlock(&keep_mu);
	return sum;
}

// answer sends back the copy that world rank w asked for: an 8-byte
// status (1: here it is, 0: gone), then the bytes.
static void answer(int w, uint64_t msgid) {
	pthread_mutex_lock(&keep_mu);
	struct entry *e = NULL;
	for (size_t i = 0; i < nents; i++) {
		struct entry *x = &ents[(first + i) % SC_ENTRIES];
		if (x->world == w && x->msgid == msgid) { e = x; break; }
	}
	size_t len = e ? e->len : 0;
	unsigned char *out = malloc(8 + len);
	if (out) {
		uint64_t ok = e != NULL;
		memcpy(out, &ok, 8);
		if (e) memcpy(out + 8, ring + e->off, len);
	}
	pthread_mutex_unlock(&keep_mu);
	if (!out) {
		uint64_t gone = 0;
		PMPI_Send(&gone, 8, MPI_BYTE, w, SC_TAG_ANSWER, repair_comm);
		return;
	}
	PMPI_Send(out, (int)(8 + len), MPI_BYTE, w, SC_TAG_ANSWER, repair_comm);
	free(out);
}

// serve answers asks until the library stops. It polls with a pause
// rather than blocking in MPI, whose blocking calls spin a core, and the
// pause grows while no ask comes (to SC_PAUSE_MAX_US), since every wake
// takes a core from ranks that are spinning in MPI: a repair may wait
// that long for its answer.
#define SC_PAUSE_MIN_US 100
#define SC_PAUSE_MAX_US 5000
static void *serve(void *arg) {
	(void)arg;
	long us = SC_PAUSE_MIN_US;
	while (!stopping) {
		int flag = 0;
		MPI_Status st;
		PMPI_Iprobe(MPI_ANY_SOURCE, SC_TAG_ASK, repair_comm, &flag, &st);
		if (!flag) {
			struct timespec pause = {0, us * 1000};
			nanosleep(&pause, NULL);
			us = us * 2 < SC_PAUSE_MAX_US ? us * 2 : SC_PAUSE_MAX_US;
			continue;
		}
		us = SC_PAUSE_MIN_US;
		uint64_t msgid = 0;
		PMPI_Recv(&msgid, 8, MPI_BYTE, st.MPI_SOURCE, SC_TAG_ASK, repair_comm, MPI_STATUS_IGNORE);
		answer(st.MPI_SOURCE, msgid);
	}
	return NULL;
}

int sc_keep_start(void) {
	if (sc_mode < SC_REPAIR) return 0;
	if (!sc_real_multi) return -1;
	sc_shadow_of(MPI_COMM_WORLD, &repair_comm);
	if (pthread_create(&server, NULL, serve, NULL) != 0) return -1;
	started = 1;
	return 0;
}

// sc_keep_finalize answers asks until every rank has reached
// MPI_Finalize (and so checked everything it received), then stops.
void sc_keep_finalize(void) {
	if (!started) return;
	MPI_Request r;
	PMPI_Ibarrier(repair_comm, &r);
	struct timespec pause = {0, 100 * 1000};
	for (;;) {
		int done = 0;
		PMPI_Test(&r, &done, MPI_STATUS_IGNORE);
		if (done) break;
		nanosleep(&pause, NULL);
	}
	stopping = 1;
	pthread_join(server, NULL);
	started = 0;
}

// sc_repair asks world rank w for its copy of the message h describes and
// puts it in buf, as the receive count×dt lays it out. It returns 0 when
// the data now hashes to the sender's checksum, -1 if the copy is gone
// (or was never kept), -2 if it still does not match.
int sc_repair(void *buf, int count, MPI_Datatype dt, int w, const sc_hdr *h) {
	if (!started || w < 0 || !(h->flags & SC_HDR_KEPT)) return -1;
	uint64_t msgid = h->msgid;
	PMPI_Send(&msgid, 8, MPI_BYTE, w, SC_TAG_ASK, repair_comm);
	MPI_Status st;
	MPI_Message m;
	PMPI_Mprobe(w, SC_TAG_ANSWER, repair_comm, &m, &st);
	int n = 0;
	PMPI_Get_count(&st, MPI_BYTE, &n);
	unsigned char *in = malloc(n > 0 ? (size_t)n : 1);
	if (!in) { PMPI_Mrecv(NULL, 0, MPI_BYTE, &m, MPI_STATUS_IGNORE); return -1; }
	PMPI_Mrecv(in, n, MPI_BYTE, &m, MPI_STATUS_IGNORE);
	uint64_t ok = 0;
	if (n >= 8) memcpy(&ok, in, 8);
	if (!ok || (uint64_t)n != 8 + h->bytes) { free(in); return -1; }
	sc_type *t = sc_type_get(dt);
	if (t && t->contig) {
		memcpy(buf, in + 8, h->bytes);
	} else if (t && t->size > 0) {
		// Whole instances are unpacked; a last partial one is merged
		// with what the buffer already holds, repacked.
		uint64_t whole = h->bytes / (uint64_t)t->size, rest = h->bytes % (uint64_t)t->size;
		int pos2 = 0;
		if (whole) PMPI_Unpack(in + 8, (int)(whole * (uint64_t)t->size), &pos2, buf, (int)whole, dt, MPI_COMM_WORLD);
		if (rest) {
			int size = 0;
			PMPI_Pack_size(1, dt, MPI_COMM_WORLD, &size);
			unsigned char *tmp = malloc((size_t)size);
			char *inst = (char *)buf + whole * (uint64_t)t->extent;
			if (tmp) {
				int p = 0;
				PMPI_Pack(inst, 1, dt, tmp, size, &p, MPI_COMM_WORLD);
				memcpy(tmp, in + 8 + whole * (uint64_t)t->size, rest);
				p = 0;
				PMPI_Unpack(tmp, size, &p, inst, 1, dt, MPI_COMM_WORLD);
				free(tmp);
			}
		}
	}
	free(in);
	int injected = 0;
	MPI_Status fake;
	memset(&fake, 0, sizeof fake);
	PMPI_Status_set_elements_x(&fake, MPI_BYTE, (MPI_Count)h->bytes);
	uint64_t sum = sc_received_csum(buf, count, dt, &fake, 0, &injected);
	return sum == h->csum ? 0 : -2;
}
