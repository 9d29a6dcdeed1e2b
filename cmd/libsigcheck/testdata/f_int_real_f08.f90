! Ten INTEGERs received as ten REALs (use mpi_f08, no ierror arguments).
program f_int_real_f08
  use mpi_f08
  implicit none
  integer :: rank, i, a(10)
  real :: f(10)
  type(MPI_Status) :: st
  type(MPI_Request) :: req
  call mpi_init()
  call mpi_comm_rank(MPI_COMM_WORLD, rank)
  if (rank == 0) then
    a = [(i, i = 0, 9)]
    call mpi_isend(a, 10, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, req)
    call mpi_wait(req, MPI_STATUS_IGNORE)
  else if (rank == 1) then
    call mpi_recv(f, 10, MPI_REAL, 0, 7, MPI_COMM_WORLD, st)
    print '(3es12.4)', f(1:3)
  end if
  call mpi_finalize()
end program
