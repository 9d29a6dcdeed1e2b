! Correct Fortran program: calls on MPI_COMM_WORLD that Open MPI's Fortran
! bindings pass to PMPI_ directly (MPI_Comm_idup, MPI_Alltoallw, MPI_Pack):
! under replication they must see the application's world, not every
! replica's.
program f_rep_world
  use mpi
  implicit none
  integer :: ierr, rank, size, dup, req, dsize, i, pos, total
  integer :: sc(16), sd(16), st(16), rc(16), rd(16), rt(16), sbuf(16), rbuf(16)
  character :: packed(64)
  integer(kind=MPI_ADDRESS_KIND) :: ub
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_idup(MPI_COMM_WORLD, dup, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Comm_size(dup, dsize, ierr)
  do i = 1, size
    sc(i) = 1; sd(i) = (i-1)*4; st(i) = MPI_INTEGER
    rc(i) = 1; rd(i) = (i-1)*4; rt(i) = MPI_INTEGER
    sbuf(i) = rank*100 + i
  end do
  call MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD, ierr)
  pos = 0
  call MPI_Pack(rbuf, size, MPI_INTEGER, packed, 64, pos, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(sum(rbuf(1:size)), total, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,16i6)', 'rank ', rank, ' idup size ', dsize, ' packed ', pos, ' alltoallw ', rbuf(1:size)
  if (rank == 0) print '(a,i0)', 'total ', total
  ! No entry point of the library: passed on to Open MPI's, and counted.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, ub, flag, ierr)
  if (rank == 0) print '(a,l1)', 'tag_ub ', flag .and. ub >= 32767
  call MPI_Comm_free(dup, ierr)
  call MPI_Finalize(ierr)
end program
