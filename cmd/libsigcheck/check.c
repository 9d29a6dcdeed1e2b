//go:build mpi

// The check of one received message against its header.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc.h"
#include "_cgo_export.h"

void sc_comm_name(sc_comm *c, char *buf, int size);

double sc_inject_rate;
static uint64_t rng;

void sc_rng_seed(uint64_t s) { rng = s ? s : 1; }

// splitmix64: a seeded, reproducible stream per rank.
static uint64_t next_rand(void) {
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// A scratch buffer for packing non-contiguous data, kept between calls.
static void *scratch;
static size_t scratchcap;

static void *scratch_of(size_t n) {
	if (n > scratchcap) {
		void *p = realloc(scratch, n);
		if (!p) return NULL;
		scratch = p;
		scratchcap = n;
	}
	return scratch;
}

// packed returns the first bytes data bytes of count copies of dt at buf,
// in order, packing them when they are not one run. NULL if it cannot.
static const void *packed(const void *buf, int count, MPI_Datatype dt, uint64_t bytes, sc_type *t, int *was_packed) {
	*was_packed = 0;
	if (bytes == 0) return buf;
	if (t && t->contig) {
		// One run starting at buf (lb 0): the data bytes are the buffer's.
		return buf;
	}
	int n = count;
	if (t && t->size > 0) {
		uint64_t need = (bytes + (uint64_t)t->size - 1) / (uint64_t)t->size;
		if (need < (uint64_t)n) n = (int)need;
	}
	int size = 0;
	if (PMPI_Pack_size(n, dt, MPI_COMM_WORLD, &size) != MPI_SUCCESS || size < 0) return NULL;
	void *p = scratch_of((size_t)size + 1);
	if (!p) return NULL;
	int pos = 0;
	if (PMPI_Pack(buf, n, dt, p, size, &pos, MPI_COMM_WORLD) != MPI_SUCCESS) return NULL;
	if ((uint64_t)pos < bytes) return NULL;
	*was_packed = n;
	return p;
}

// sc_checksum hashes the data bytes of a message about to be sent.
uint64_t sc_checksum(const void *buf, int count, MPI_Datatype dt, uint64_t bytes, sc_type *t) {
	if (bytes == 0) return scGoHash(NULL, 0); // the buffer may be NULL
	int was;
	const void *p = packed(buf, count, dt, bytes, t, &was);
	if (!p) return 0;
	return scGoHash((void *)p, (size_t)bytes);
}

static uint64_t received_bytes(const MPI_Status *st) {
	MPI_Count n = 0;
	PMPI_Get_elements_x(st, MPI_BYTE, &n);
	return n < 0 ? 0 : (uint64_t)n;
}

// sc_received_csum hashes the data bytes a receive delivered, after
// flipping one bit of them with the injection probability.
uint64_t sc_received_csum(void *buf, int count, MPI_Datatype dt, const MPI_Status *st, int may_inject, int *injected) {
	*injected = 0;
	uint64_t bytes = received_bytes(st);
	if (bytes == 0) return scGoHash(NULL, 0); // nothing to flip, and buf may be NULL
	sc_type *t = sc_type_get(dt);
	int was;
	const void *p = packed(buf, count, dt, bytes, t, &was);
	if (!p) return 0;
	if (may_inject && sc_inject_rate > 0 && bytes > 0 && (double)(next_rand() >> 11) / 9007199254740992.0 < sc_inject_rate) {
		uint64_t bit = next_rand() % (bytes * 8);
		((unsigned char *)p)[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		if (was) { // put the flipped bit where the application reads it
			int pos = 0, size = 0;
			PMPI_Pack_size(was, dt, MPI_COMM_WORLD, &size);
			PMPI_Unpack(p, size, &pos, buf, was, dt, MPI_COMM_WORLD);
		}
		*injected = 1;
		sc_count.injected++;
	}
	return scGoHash((void *)p, (size_t)bytes);
}


// typed_ok applies MPI's point-to-point rule to a header and count copies
// of t: the sent signature is a prefix of the receive's, or, for byte and
// packed data, the sizes fit.
static int typed_ok(const sc_hdr *h, sc_type *t, uint64_t count) {
	sc_hdr r;
	sc_stamp(t, count, &r);
	if (h->class != SC_TYPED || r.class != SC_TYPED) return h->bytes <= r.bytes;
	if (h->elems > r.elems) return 0;
	uint64_t p;
	if (sc_prefix(t, h->elems, &p) != 0) return 1; // cannot say: not a finding
	return p == h->sig;
}

// sc_check_now reads the header of a message that arrived from
// st->MPI_SOURCE with st->MPI_TAG and checks the message against it. Lock
// held. have_csum says the checksum of the delivered data was taken
// already (a deferred check).
void sc_check_now(void *buf, int count, MPI_Datatype dt, MPI_Comm comm, const MPI_Status *st, int call, const char *name,
		int have_csum, uint64_t csum, int injected) {
	sc_comm *c = sc_comm_get(comm);
	if (!c) { sc_count.unchecked[call][SC_WHY_COMM]++; return; }
	sc_hdr h;
	MPI_Status hs;
	int rc = PMPI_Recv(&h, sizeof h, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, c->shadow, &hs);
	int n = 0;
	PMPI_Get_count(&hs, MPI_BYTE, &n);
	if (rc != MPI_SUCCESS || n != (int)sizeof h || h.magic != SC_HDR_MAGIC) {
		sc_count.unchecked[call][SC_WHY_NOHDR]++;
		return;
	}
	// The descriptions this header announces are read now, whatever
	// comes of the check, so that none waits unread.
	sc_desc_catch_up(sc_world_of(c, st->MPI_SOURCE), h.desc_total);
	if (h.flags & SC_HDR_UNCHECKED) { sc_count.unchecked[call][SC_WHY_NOHDR]++; return; }
	sc_type *t = sc_type_get(dt);
	if (!t || !t->id) { sc_count.unchecked[call][SC_WHY_TYPE]++; return; }
	sc_count.checked[call]++;
	char cname[MPI_MAX_OBJECT_NAME + 32];
	int me = -1;
	PMPI_Comm_rank(comm, &me);
	if (!typed_ok(&h, t, count < 0 ? 0 : (uint64_t)count)) {
		sc_count.mismatches++;
		const char *text = NULL;
		int len = sc_desc_get(sc_world_of(c, st->MPI_SOURCE), h.typeid, &text, 0);
		sc_comm_name(c, cname, sizeof cname);
		scGoMismatch((char *)name, cname, me, st->MPI_SOURCE, sc_world_of(c, st->MPI_SOURCE), st->MPI_TAG, &h, (char *)text,
			len < 0 ? 0 : len, t->id, count < 0 ? 0 : (uint64_t)count, 0);
		if (sc_abort) sc_fail();
		return;
	}
	if (sc_mode < SC_CHECKSUM || !(h.flags & SC_HDR_CSUM)) return;
	if (!have_csum) csum = sc_received_csum(buf, count, dt, st, 1, &injected);
	if (csum == h.csum) return;
	sc_count.corrupt++;
	int wsrc = sc_world_of(c, st->MPI_SOURCE);
	int how = 0; // 0: checksum mode; 1 repaired; -1 gone; -2 still wrong; -3 too late
	if (sc_mode == SC_REPAIR) {
		// A deferred check runs after the receive returned: the
		// application may have written the buffer since, so it is not
		// repaired then.
		how = have_csum ? -3 : sc_repair(buf, count, dt, wsrc, &h);
		if (how == 0) {
			how = 1;
			sc_count.repaired++;
		} else if (how == -3) {
			sc_count.unrepaired_late++;
		} else {
			sc_count.unrepaired_gone++;
		}
	}
	sc_comm_name(c, cname, sizeof cname);
	scGoCorrupt((char *)name, cname, me, st->MPI_SOURCE, wsrc, st->MPI_TAG, h.bytes, h.csum, csum, injected, how);
	if (how != 1 && sc_abort) sc_fail();
}
