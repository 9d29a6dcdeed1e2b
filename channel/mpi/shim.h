#include <mpi.h>
#include <stdlib.h>

int sc_init(int *provided, int *rank, int *size);
int sc_finalize(void);
int sc_leaders(int *leaders);
int sc_idup(MPI_Comm *c, MPI_Request *r);
void sc_errors_return(MPI_Comm c);
int sc_comm_free(MPI_Comm *c);
MPI_Request sc_null_request(void);
int sc_test(MPI_Request *r, int *done, int *source, int *count, int *err);
int sc_testsome(int n, MPI_Request *r, int *outcount, int *idx, int *err);
int sc_isend(void *buf, int n, int dst, int tag, MPI_Comm c, MPI_Request *r);
int sc_irecv(void *buf, int n, int src, int tag, MPI_Comm c, MPI_Request *r);
int sc_cancel(MPI_Request *r);
int sc_drain(int src, int tag, MPI_Comm c, void *scratch, int n, int *got);
int sc_ibarrier(MPI_Comm c, MPI_Request *r);
int sc_ibcast(void *buf, int n, int root, MPI_Comm c, MPI_Request *r);
int sc_iallgather(void *send, void *recv, int n, MPI_Comm c, MPI_Request *r);
void sc_error_string(int code, char *buf);
void sc_yield(void);
int sc_max_error_string(void);
