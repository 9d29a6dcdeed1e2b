! MPI_Bcast of ten INTEGERs at the root into ten REALs elsewhere.
program f_bcast_int_real
  use mpi
  implicit none
  integer :: ierr, rank, i, a(10)
  real :: f(10)
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) then
    a = [(i, i = 0, 9)]
    call mpi_bcast(a, 10, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  else
    call mpi_bcast(f, 10, MPI_REAL, 0, MPI_COMM_WORLD, ierr)
  end if
  call mpi_finalize(ierr)
end program
