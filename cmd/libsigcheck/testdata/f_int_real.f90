! Ten INTEGERs received as ten REALs (use mpi).
program f_int_real
  use mpi
  implicit none
  integer :: ierr, rank, i, a(10)
  real :: f(10)
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) then
    a = [(i, i = 0, 9)]
    call mpi_send(a, 10, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call mpi_recv(f, 10, MPI_REAL, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    print '(3es12.4)', f(1:3)
  end if
  call mpi_finalize(ierr)
end program
