//go:build mpi

// The datatype cache: one entry per handle, decoded by Go on first use and
// dropped on MPI_Type_free. The signature of count copies is memoised per
// entry, so a program that sends the same count again pays no Go call.
#include <stdlib.h>
#include <string.h>
#include "sc.h"
#include "_cgo_export.h"

static struct { MPI_Datatype dt; const char *name; } predef[64];
static int npredef;

#define P(h, n) do { predef[npredef].dt = (h); predef[npredef].name = (n); npredef++; } while (0)

void sc_types_init(void) {
	npredef = 0;
	P(MPI_CHAR, "char"); P(MPI_SIGNED_CHAR, "signed_char"); P(MPI_UNSIGNED_CHAR, "unsigned_char");
	P(MPI_SHORT, "short"); P(MPI_UNSIGNED_SHORT, "unsigned_short"); P(MPI_INT, "int");
	P(MPI_UNSIGNED, "unsigned"); P(MPI_LONG, "long"); P(MPI_UNSIGNED_LONG, "unsigned_long");
	P(MPI_LONG_LONG, "long_long"); P(MPI_UNSIGNED_LONG_LONG, "unsigned_long_long");
	P(MPI_FLOAT, "float"); P(MPI_DOUBLE, "double"); P(MPI_LONG_DOUBLE, "long_double");
	P(MPI_WCHAR, "wchar"); P(MPI_C_BOOL, "c_bool");
	P(MPI_INT8_T, "int8_t"); P(MPI_INT16_T, "int16_t"); P(MPI_INT32_T, "int32_t"); P(MPI_INT64_T, "int64_t");
	P(MPI_UINT8_T, "uint8_t"); P(MPI_UINT16_T, "uint16_t"); P(MPI_UINT32_T, "uint32_t"); P(MPI_UINT64_T, "uint64_t");
	P(MPI_C_FLOAT_COMPLEX, "c_float_complex"); P(MPI_C_DOUBLE_COMPLEX, "c_double_complex");
	P(MPI_C_LONG_DOUBLE_COMPLEX, "c_long_double_complex");
	P(MPI_BYTE, "byte"); P(MPI_PACKED, "packed"); P(MPI_AINT, "aint"); P(MPI_OFFSET, "offset"); P(MPI_COUNT, "count");
	P(MPI_FLOAT_INT, "float_int"); P(MPI_DOUBLE_INT, "double_int"); P(MPI_LONG_INT, "long_int");
	P(MPI_2INT, "2int"); P(MPI_SHORT_INT, "short_int"); P(MPI_LONG_DOUBLE_INT, "long_double_int");
	// Fortran's (fortran.c), each a type of its own: MPI_INTEGER is not MPI_INT.
	P(MPI_INTEGER, "integer"); P(MPI_REAL, "real"); P(MPI_DOUBLE_PRECISION, "double_precision");
	P(MPI_COMPLEX, "complex"); P(MPI_DOUBLE_COMPLEX, "double_complex"); P(MPI_LOGICAL, "logical");
	P(MPI_CHARACTER, "character");
	P(MPI_INTEGER1, "integer1"); P(MPI_INTEGER2, "integer2"); P(MPI_INTEGER4, "integer4"); P(MPI_INTEGER8, "integer8");
	P(MPI_REAL4, "real4"); P(MPI_REAL8, "real8");
	P(MPI_2INTEGER, "2integer"); P(MPI_2REAL, "2real"); P(MPI_2DOUBLE_PRECISION, "2double_precision");
}

const char *sc_type_name_of(MPI_Datatype dt) {
	for (int i = 0; i < npredef; i++)
		if (predef[i].dt == dt) return predef[i].name;
	return NULL;
}

// Open addressing over pointers to entries, so that an entry stays where it
// is when the table grows.
static sc_type **tab;
static size_t tabcap, tablen;

static size_t slot_of(void *h, size_t cap) {
	uint64_t x = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 20) & (cap - 1);
}

static void grow(void) {
	size_t ncap = tabcap ? tabcap * 2 : 256;
	sc_type **n = calloc(ncap, sizeof *n);
	if (!n) return;
	for (size_t i = 0; i < tabcap; i++) {
		sc_type *e = tab[i];
		if (!e) continue;
		size_t j = slot_of(e->dt, ncap);
		while (n[j]) j = (j + 1) & (ncap - 1);
		n[j] = e;
	}
	free(tab);
	tab = n;
	tabcap = ncap;
}

static sc_type *lookup(MPI_Datatype dt, size_t *at) {
	if (!tabcap) { *at = 0; return NULL; }
	size_t j = slot_of(dt, tabcap);
	while (tab[j]) {
		if (tab[j]->dt == dt) { *at = j; return tab[j]; }
		j = (j + 1) & (tabcap - 1);
	}
	*at = j;
	return NULL;
}

// sc_type_get returns the entry of dt, decoding it first if it is new; its
// id is 0 when Go could not decode it. Call with the lock held.
sc_type *sc_type_get(MPI_Datatype dt) {
	size_t at;
	sc_type *e = lookup(dt, &at);
	if (e) return e;
	if ((tablen + 1) * 2 > tabcap) {
		grow();
		lookup(dt, &at);
		if (!tabcap) return NULL;
	}
	e = calloc(1, sizeof *e);
	if (!e) return NULL;
	e->dt = dt;
	e->memo_count = UINT64_MAX;
	e->memo_k = UINT64_MAX;
	scGoDecode(dt, e);
	tab[at] = e;
	tablen++;
	return e;
}

// sc_type_drop forgets dt, whose handle MPI may give to a new datatype.
void sc_type_drop(MPI_Datatype dt) {
	size_t at;
	sc_type *e = lookup(dt, &at);
	if (!e) return;
	if (e->id) scGoTypeFree(e->id);
	free(e->sentmap);
	free(e);
	tab[at] = NULL;
	tablen--;
	// Re-seat the cluster after the hole (linear probing deletion).
	size_t j = (at + 1) & (tabcap - 1);
	while (tab[j]) {
		sc_type *m = tab[j];
		tab[j] = NULL;
		size_t k = slot_of(m->dt, tabcap);
		while (tab[k]) k = (k + 1) & (tabcap - 1);
		tab[k] = m;
		j = (j + 1) & (tabcap - 1);
	}
}

// A datatype may be freed while a request that uses it is pending (MPI
// lets the request go on). The library still needs it when the request
// completes, to check and hash the message, so MPI_Type_free of a datatype
// that pending requests or deferred checks use only marks it, and the
// handle is freed in MPI when the last of them is done. The handle, still
// alive in MPI, is not given to another datatype meanwhile. Lock held.
void sc_type_ref(MPI_Datatype dt) {
	sc_type *e = sc_type_get(dt);
	if (e) e->refs++;
}

void sc_type_unref(MPI_Datatype dt) {
	size_t at;
	sc_type *e = lookup(dt, &at);
	if (!e || e->refs <= 0) return;
	if (--e->refs == 0 && e->freed) {
		MPI_Datatype h = e->dt;
		sc_type_drop(h);
		PMPI_Type_free(&h);
	}
}

// sc_type_free_held says whether MPI_Type_free of dt must wait, marking it
// so.
int sc_type_free_held(MPI_Datatype dt) {
	size_t at;
	sc_type *e = lookup(dt, &at);
	if (!e || e->refs <= 0) return 0;
	e->freed = 1;
	return 1;
}

// sc_stamp fills h with the stamp of count copies of t. It returns -1 when
// t could not be decoded or the count overflows.
int sc_stamp(sc_type *t, uint64_t count, sc_hdr *h) {
	memset(h, 0, sizeof *h);
	h->magic = SC_HDR_MAGIC;
	h->count = count;
	if (!t || !t->id) { h->flags = SC_HDR_UNCHECKED; return -1; }
	h->typeid = t->id;
	if (t->elems && count > UINT64_MAX / t->elems) { h->flags = SC_HDR_UNCHECKED; return -1; }
	h->elems = t->elems * count;
	h->bytes = (uint64_t)t->size * count;
	h->class = count ? t->class : SC_TYPED;
	if (count == 0 || t->elems == 0) { h->sig = 0; return 0; }
	if (count != t->memo_count) {
		uint64_t s;
		if (scGoOf(t->id, count, &s) != 0) { h->flags = SC_HDR_UNCHECKED; return -1; }
		t->memo_count = count;
		t->memo_sig = s;
	}
	h->sig = t->memo_sig;
	return 0;
}

// sc_prefix sets *sig to the signature of the first k elements of copies
// of t.
int sc_prefix(sc_type *t, uint64_t k, uint64_t *sig) {
	if (k == 0) { *sig = 0; return 0; }
	if (t->memo_count != UINT64_MAX && t->elems && k == t->memo_count * t->elems) { *sig = t->memo_sig; return 0; }
	if (k != t->memo_k) {
		uint64_t s;
		if (scGoPrefix(t->id, k, &s) != 0) return -1;
		t->memo_k = k;
		t->memo_prefix = s;
	}
	*sig = t->memo_prefix;
	return 0;
}
