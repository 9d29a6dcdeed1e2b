/* Attribute callbacks run as many times as the program's own calls say:
 * the library's shadow communicators must not copy or delete attributes. */
#include <mpi.h>
#include <stdio.h>
static int copies, deletes;
static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
	(void)c; (void)k; (void)extra;
	copies++;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int k, void *val, void *extra) {
	(void)c; (void)k; (void)val; (void)extra;
	deletes++;
	return MPI_SUCCESS;
}
int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, key; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_create_keyval(copy_fn, delete_fn, &key, NULL);
	MPI_Comm a, b, c;
	MPI_Comm_dup(MPI_COMM_WORLD, &a);
	MPI_Comm_set_attr(a, key, &copies);
	MPI_Comm_dup(a, &b);
	MPI_Comm_split(a, 0, rank, &c);
	MPI_Comm_free(&c);
	MPI_Comm_free(&b);
	MPI_Comm_free(&a);
	if (rank == 0) printf("copies %d deletes %d\n", copies, deletes);
	MPI_Comm_free_keyval(&key);
	MPI_Finalize();
	return 0;
}
