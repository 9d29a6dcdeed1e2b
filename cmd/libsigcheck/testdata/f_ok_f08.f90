! A correct program (use mpi_f08, mostly without ierror) on three ranks:
! the f08 entry points share the bodies of the others, and this shows
! their handles, statuses, sentinels and optional ierror arrive right.
program f_ok_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 4
  integer :: rank, np, next, prev, i, k, idx, outc, provided, ierr, cnt
  integer :: a(n), b(n), c(n), idxs(2), check, checks(3)
  double precision :: m(3, 3), row(3), x
  type(MPI_Status) :: st, sts(2)
  type(MPI_Request) :: reqs(2)
  type(MPI_Datatype) :: vec
  type(MPI_Comm) :: sub
  type(MPI_Message) :: msg
  logical :: flag

  call mpi_init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank)
  call mpi_comm_size(MPI_COMM_WORLD, np)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  check = ierr
  a = [(rank * 10 + i, i = 1, n)]

  call mpi_sendrecv(a, n, MPI_INTEGER, next, 1, b, n, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, st)
  call mpi_get_count(st, MPI_INTEGER, cnt)
  check = check + sum(b) + st%MPI_SOURCE + st%MPI_TAG + cnt

  call mpi_irecv(b, n, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, reqs(1))
  call mpi_isend(a, n, MPI_INTEGER, next, 2, MPI_COMM_WORLD, reqs(2))
  call mpi_waitall(2, reqs, sts)
  check = check + sum(b) + sts(1)%MPI_SOURCE
  if (reqs(1) /= MPI_REQUEST_NULL) check = check + 1000000

  call mpi_irecv(b, n, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(1))
  call mpi_issend(a, n, MPI_INTEGER, next, 3, MPI_COMM_WORLD, reqs(2))
  do k = 1, 2
    call mpi_waitany(2, reqs, idx, st)
    check = check + idx
  end do
  check = check + sum(b)

  call mpi_irecv(b, n, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, reqs(1))
  call mpi_isend(a, n, MPI_INTEGER, next, 4, MPI_COMM_WORLD, reqs(2))
  k = 0
  do while (k < 2)
    call mpi_testsome(2, reqs, outc, idxs, MPI_STATUSES_IGNORE)
    if (outc /= MPI_UNDEFINED) k = k + outc
  end do
  check = check + sum(b)

  call mpi_send(a, n, MPI_INTEGER, next, 5, MPI_COMM_WORLD)
  call mpi_mprobe(prev, 5, MPI_COMM_WORLD, msg, st)
  call mpi_mrecv(b, n, MPI_INTEGER, msg, MPI_STATUS_IGNORE)
  check = check + sum(b)

  call mpi_recv_init(b, n, MPI_INTEGER, prev, 6, MPI_COMM_WORLD, reqs(1))
  call mpi_send_init(a, n, MPI_INTEGER, next, 6, MPI_COMM_WORLD, reqs(2))
  call mpi_startall(2, reqs)
  flag = .false.
  do while (.not. flag)
    call mpi_testall(2, reqs, flag, MPI_STATUSES_IGNORE)
  end do
  check = check + sum(b)
  call mpi_request_free(reqs(1))
  call mpi_request_free(reqs(2))

  m = reshape([(dble(rank * 9 + i), i = 1, 9)], [3, 3])
  call mpi_type_vector(3, 1, 3, MPI_DOUBLE_PRECISION, vec)
  call mpi_type_commit(vec)
  call mpi_sendrecv(m(3, 1), 1, vec, next, 7, row, 3, MPI_DOUBLE_PRECISION, prev, 7, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  check = check + int(sum(row))
  call mpi_type_free(vec)

  b = a
  call mpi_bcast(b, n, MPI_INTEGER, 1, MPI_COMM_WORLD)
  check = check + sum(b)
  c = a
  call mpi_allreduce(MPI_IN_PLACE, c, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  check = check + sum(c)
  x = rank
  call mpi_reduce(x, row(1), 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD)
  if (rank == 0) check = check + int(row(1))

  call mpi_comm_split(MPI_COMM_WORLD, 0, -rank, sub)
  call mpi_allreduce(rank, k, 1, MPI_INTEGER, MPI_SUM, sub)
  check = check + k
  call mpi_comm_free(sub)

  call mpi_gather(check, 1, MPI_INTEGER, checks, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) print '(a, i2, 3i8)', 'provided', provided, checks
  call mpi_finalize()
end program
