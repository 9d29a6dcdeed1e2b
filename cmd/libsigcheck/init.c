//go:build mpi

// Start and end: the library does nothing until MPI_Init returns, so a
// process that never calls it (mpirun, a shell that system() starts) is
// left alone, and it calls into Go only after that.
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sc.h"
#include "_cgo_export.h"

int sc_active, sc_mode, sc_abort, sc_world_rank, sc_world_size, sc_multi;
MPI_Comm sc_world = MPI_COMM_NULL;
sc_counters sc_count;
pthread_mutex_t sc_mu = PTHREAD_MUTEX_INITIALIZER;

extern double sc_inject_rate;
void sc_rng_seed(uint64_t s);
void sc_desc_init(void);
void sc_reqs_finalize(void);

// The exit status of a job that sigcheck ends.
#define SC_EXIT 86

void sc_fail(void) {
	fflush(stdout);
	fflush(stderr);
	PMPI_Abort(MPI_COMM_WORLD, SC_EXIT);
}

// is_go_program says whether the executable has a .go.buildinfo section:
// two Go runtimes in one process are not supported.
static int is_go_program(void) {
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0) return 0;
	int found = 0;
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
			eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
			eh.e_shnum == 0 || eh.e_shnum > 4096 || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	Elf64_Shdr *sh = malloc(sizeof(Elf64_Shdr) * eh.e_shnum);
	if (!sh) goto out;
	if (pread(fd, sh, sizeof(Elf64_Shdr) * eh.e_shnum, (off_t)eh.e_shoff) != (ssize_t)(sizeof(Elf64_Shdr) * eh.e_shnum)) {
		free(sh);
		goto out;
	}
	Elf64_Shdr *str = &sh[eh.e_shstrndx];
	if (str->sh_size > 0 && str->sh_size < (1 << 20)) {
		char *names = malloc(str->sh_size + 1);
		if (names && pread(fd, names, str->sh_size, (off_t)str->sh_offset) == (ssize_t)str->sh_size) {
			names[str->sh_size] = 0;
			for (int i = 0; i < eh.e_shnum && !found; i++)
				if (sh[i].sh_name < str->sh_size && strcmp(names + sh[i].sh_name, ".go.buildinfo") == 0) found = 1;
		}
		free(names);
	}
	free(sh);
out:
	close(fd);
	return found;
}

__attribute__((constructor(101))) static void sc_load(void) {
	if (!is_go_program()) return;
	static const char msg[] =
		"sigcheck: libsigcheck.so is preloaded into a Go program, and two Go runtimes in one process are "
		"not supported: run Go programs without LD_PRELOAD (package channel has sigcheck's checks built in)\n";
	if (write(2, msg, sizeof msg - 1) < 0) {}
	_exit(2);
}

// repair_wanted says whether the environment asks for repair mode, which
// needs MPI_THREAD_MULTIPLE from MPI_Init (keep.c), before Go has read it.
static int repair_wanted(void) {
	const char *v = getenv("SIGCHECK_CHECK");
	return v && strcmp(v, "repair") == 0;
}

static int app_level = MPI_THREAD_SINGLE; // what the application was told

static void start(int provided, int real) {
	PMPI_Comm_rank(MPI_COMM_WORLD, &sc_world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &sc_world_size);
	sc_multi = provided == MPI_THREAD_MULTIPLE;
	sc_real_multi = real == MPI_THREAD_MULTIPLE;
	int abort_ = 1;
	double inject = 0;
	uint64_t seed = 1;
	sc_mode = scGoInit(sc_world_rank, sc_world_size, &abort_, &inject, &seed);
	if (!sc_mode) PMPI_Abort(MPI_COMM_WORLD, 2);
	sc_abort = abort_;
	sc_inject_rate = inject;
	sc_rng_seed(seed);
	sc_types_init();
	sc_desc_init();
	sc_shadow_of(MPI_COMM_WORLD, &sc_world);
	sc_comms_init();
	int enc = sc_enc_start();
	if (enc != 0) PMPI_Abort(MPI_COMM_WORLD, enc);
	int rep = sc_rep_start();
	if (rep != 0) PMPI_Abort(MPI_COMM_WORLD, rep);
	if (sc_keep_start() != 0) {
		if (sc_world_rank == 0) {
			static const char msg[] = "sigcheck: SIGCHECK_CHECK=repair needs MPI_THREAD_MULTIPLE, which this MPI "
				"does not provide: checking checksums without repair\n";
			if (write(2, msg, sizeof msg - 1) < 0) {}
		}
		sc_mode = SC_CHECKSUM;
	}
	sc_active = 1;
}

int MPI_Init(int *argc, char ***argv) {
	if (!repair_wanted()) {
		int rc = PMPI_Init(argc, argv);
		if (rc == MPI_SUCCESS) start(MPI_THREAD_SINGLE, MPI_THREAD_SINGLE);
		return rc;
	}
	int real = MPI_THREAD_SINGLE;
	int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &real);
	if (rc == MPI_SUCCESS) start(MPI_THREAD_SINGLE, real);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
	if (!repair_wanted()) {
		int rc = PMPI_Init_thread(argc, argv, required, provided);
		if (rc == MPI_SUCCESS) start(*provided, *provided);
		app_level = *provided;
		return rc;
	}
	int real = MPI_THREAD_SINGLE;
	int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &real);
	if (rc != MPI_SUCCESS) return rc;
	// The application is told what it asked for, or what MPI gave if less.
	*provided = required < real ? required : real;
	app_level = *provided;
	start(*provided, real);
	return rc;
}

int MPI_Query_thread(int *provided) {
	if (!sc_active || !repair_wanted()) return PMPI_Query_thread(provided);
	*provided = app_level;
	return MPI_SUCCESS;
}

int MPI_Finalize(void) {
	sc_rep_finalize();
	if (sc_active) {
		sc_reqs_finalize();
		sc_desc_finalize();
		sc_keep_finalize();
		sc_enc_finalize();
		sc_active = 0;
		scGoFinalize(&sc_count, sc_multi);
	}
	return PMPI_Finalize();
}

int MPI_Type_free(MPI_Datatype *dt) {
	if (sc_active && dt) {
		SC_LOCK();
		int held = sc_type_free_held(*dt);
		if (!held) sc_type_drop(*dt);
		SC_UNLOCK();
		if (held) { // freed in MPI when its last request is done (types.c)
			*dt = MPI_DATATYPE_NULL;
			return MPI_SUCCESS;
		}
	}
	return PMPI_Type_free(dt);
}
