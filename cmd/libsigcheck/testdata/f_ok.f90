! A correct program (use mpi) that makes every kind of call the library's
! Fortran entry points cover, on three ranks. Each rank folds what it
! receives into a checksum; rank 0 prints them all, so the output does not
! depend on the order of ranks' lines.
program f_ok
  use mpi
  implicit none
  integer, parameter :: n = 5
  integer :: ierr, rank, np, next, prev, i, k, cnt, idx, outc
  integer :: a(n), b(n), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4)
  integer :: reqs(4), idxs(4), msg, vec, sub, dup, cart, line
  integer :: wgroup, grp, part, inter, merged, graph, dgraph
  integer :: counts(3), displs(3), big(15), big2(15), all(3), all6(6), pair(2), pairs(2)
  integer(kind=8) :: sum8, got8
  double precision :: m(4, 4), row(4), x, y
  real :: r(n), rs(n)
  complex :: c(2)
  double complex :: z(2)
  logical :: flag, lflag(2)
  character(len=6) :: word
  integer :: bsbuf(100)
  integer :: check, abs_t
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  integer :: checks(3)

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  check = 0
  a = [(rank * 100 + i, i = 1, n)]

  ! Blocking send and receive with a status, and get_count on it.
  if (rank == 0) then
    call mpi_send(a, n, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
    call mpi_ssend(a, n, MPI_INTEGER, 1, 2, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call mpi_recv(b, n, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, st, ierr)
    call mpi_get_count(st, MPI_INTEGER, cnt, ierr)
    check = check + sum(b) + cnt + st(MPI_SOURCE) + st(MPI_TAG)
    call mpi_recv(b, n, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    check = check + sum(b)
  end if

  ! A ring with sendrecv and sendrecv_replace.
  call mpi_sendrecv(a, n, MPI_INTEGER, next, 3, b, n, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, st, ierr)
  check = check + sum(b) + st(MPI_SOURCE)
  b = a
  call mpi_sendrecv_replace(b, n, MPI_INTEGER, next, 4, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  check = check + 2 * sum(b)

  ! Non-blocking: irecv and isend, waitall with statuses, then with none.
  call mpi_irecv(b, n, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_irecv(r, n, MPI_REAL, next, 6, MPI_COMM_WORLD, reqs(2), ierr)
  call mpi_isend(a, n, MPI_INTEGER, next, 5, MPI_COMM_WORLD, reqs(3), ierr)
  rs = real(a)
  call mpi_issend(rs, n, MPI_REAL, prev, 6, MPI_COMM_WORLD, reqs(4), ierr)
  call mpi_waitall(4, reqs, sts, ierr)
  check = check + sum(b) + int(sum(r)) + sts(MPI_SOURCE, 1) + sts(MPI_TAG, 2)
  if (any(reqs /= MPI_REQUEST_NULL)) check = check + 1000000
  call mpi_irecv(b, n, MPI_INTEGER, prev, 7, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(a, n, MPI_INTEGER, next, 7, MPI_COMM_WORLD, reqs(2), ierr)
  call mpi_waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  check = check + sum(b)

  ! waitany, waitsome, test, testany, testall, testsome.
  call mpi_irecv(b, n, MPI_INTEGER, prev, 8, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(a, n, MPI_INTEGER, next, 8, MPI_COMM_WORLD, reqs(2), ierr)
  do k = 1, 2
    call mpi_waitany(2, reqs, idx, st, ierr)
    check = check + idx
  end do
  check = check + sum(b)
  call mpi_irecv(b, n, MPI_INTEGER, prev, 9, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(a, n, MPI_INTEGER, next, 9, MPI_COMM_WORLD, reqs(2), ierr)
  k = 0
  do while (k < 2)
    call mpi_waitsome(2, reqs, outc, idxs, sts, ierr)
    k = k + outc
  end do
  check = check + sum(b)
  call mpi_irecv(b, n, MPI_INTEGER, prev, 10, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(a, n, MPI_INTEGER, next, 10, MPI_COMM_WORLD, reqs(2), ierr)
  flag = .false.
  do while (.not. flag)
    call mpi_test(reqs(1), flag, st, ierr)
  end do
  check = check + sum(b) + st(MPI_TAG)
  call mpi_wait(reqs(2), MPI_STATUS_IGNORE, ierr)
  call mpi_irecv(b, n, MPI_INTEGER, prev, 11, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(a, n, MPI_INTEGER, next, 11, MPI_COMM_WORLD, reqs(2), ierr)
  flag = .false.
  do while (.not. flag)
    call mpi_testall(2, reqs, flag, sts, ierr)
  end do
  check = check + sum(b)
  call mpi_irecv(b, n, MPI_INTEGER, prev, 12, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(a, n, MPI_INTEGER, next, 12, MPI_COMM_WORLD, reqs(2), ierr)
  k = 0
  do while (k < 2)
    call mpi_testany(2, reqs, idx, flag, MPI_STATUS_IGNORE, ierr)
    if (flag .and. idx /= MPI_UNDEFINED) k = k + 1
  end do
  check = check + sum(b)
  call mpi_irecv(b, n, MPI_INTEGER, prev, 13, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(a, n, MPI_INTEGER, next, 13, MPI_COMM_WORLD, reqs(2), ierr)
  k = 0
  do while (k < 2)
    call mpi_testsome(2, reqs, outc, idxs, MPI_STATUSES_IGNORE, ierr)
    if (outc /= MPI_UNDEFINED) k = k + outc
  end do
  check = check + sum(b)

  ! Persistent requests, started twice, then freed.
  call mpi_recv_init(b, n, MPI_INTEGER, prev, 14, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_send_init(a, n, MPI_INTEGER, next, 14, MPI_COMM_WORLD, reqs(2), ierr)
  do k = 1, 2
    call mpi_startall(2, reqs, ierr)
    call mpi_waitall(2, reqs, sts, ierr)
    check = check + sum(b)
  end do
  call mpi_start(reqs(1), ierr)
  call mpi_start(reqs(2), ierr)
  call mpi_wait(reqs(1), st, ierr)
  call mpi_wait(reqs(2), st, ierr)
  check = check + sum(b)
  call mpi_request_free(reqs(1), ierr)
  call mpi_request_free(reqs(2), ierr)

  ! Ready and buffered sends.
  call mpi_irecv(b, n, MPI_INTEGER, prev, 15, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_barrier(MPI_COMM_WORLD, ierr)
  call mpi_rsend(a, n, MPI_INTEGER, next, 15, MPI_COMM_WORLD, ierr)
  call mpi_wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  check = check + sum(b)
  call mpi_buffer_attach(bsbuf, 400, ierr)
  call mpi_bsend(a, n, MPI_INTEGER, next, 16, MPI_COMM_WORLD, ierr)
  call mpi_recv(b, n, MPI_INTEGER, prev, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call mpi_buffer_detach(bsbuf, cnt, ierr)
  check = check + sum(b)

  ! Probes: plain (passed through), matched, and immediate matched.
  call mpi_send(a, n, MPI_INTEGER, next, 17, MPI_COMM_WORLD, ierr)
  call mpi_probe(prev, 17, MPI_COMM_WORLD, st, ierr)
  call mpi_get_count(st, MPI_INTEGER, cnt, ierr)
  call mpi_recv(b, cnt, MPI_INTEGER, prev, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  check = check + sum(b)
  call mpi_send(a, n, MPI_INTEGER, next, 18, MPI_COMM_WORLD, ierr)
  call mpi_mprobe(prev, 18, MPI_COMM_WORLD, msg, st, ierr)
  call mpi_mrecv(b, n, MPI_INTEGER, msg, st, ierr)
  check = check + sum(b) + st(MPI_SOURCE)
  if (msg /= MPI_MESSAGE_NULL) check = check + 1000000
  call mpi_isend(a, n, MPI_INTEGER, next, 19, MPI_COMM_WORLD, reqs(2), ierr)
  flag = .false.
  do while (.not. flag)
    call mpi_improbe(prev, 19, MPI_COMM_WORLD, flag, msg, st, ierr)
  end do
  call mpi_imrecv(b, n, MPI_INTEGER, msg, reqs(1), ierr)
  call mpi_waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  check = check + sum(b)

  ! A derived type: one row of a column-major 4x4 matrix, received as
  ! four contiguous DOUBLE PRECISION.
  m = reshape([(dble(rank * 16 + i), i = 1, 16)], [4, 4])
  call mpi_type_vector(4, 1, 4, MPI_DOUBLE_PRECISION, vec, ierr)
  call mpi_type_commit(vec, ierr)
  call mpi_sendrecv(m(2, 1), 1, vec, next, 20, row, 4, MPI_DOUBLE_PRECISION, prev, 20, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  check = check + int(sum(row))
  call mpi_type_free(vec, ierr)
  if (vec /= MPI_DATATYPE_NULL) check = check + 1000000

  ! Absolute addresses, sent from MPI_BOTTOM.
  call mpi_get_address(a, addr(1), ierr)
  call mpi_type_create_hindexed(1, [n], addr, MPI_INTEGER, abs_t, ierr)
  call mpi_type_commit(abs_t, ierr)
  call mpi_sendrecv(MPI_BOTTOM, 1, abs_t, next, 28, b, n, MPI_INTEGER, prev, 28, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  check = check + sum(b)
  call mpi_type_free(abs_t, ierr)

  ! Other basic types.
  c = [cmplx(rank, 1), cmplx(2, rank)]
  z = [dcmplx(rank, 3), dcmplx(4, rank)]
  lflag = [rank == 0, rank /= 0]
  word = 'abcdef'
  call mpi_sendrecv_replace(c, 2, MPI_COMPLEX, next, 21, prev, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call mpi_sendrecv_replace(z, 2, MPI_DOUBLE_COMPLEX, next, 22, prev, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call mpi_sendrecv_replace(lflag, 2, MPI_LOGICAL, next, 23, prev, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call mpi_sendrecv_replace(word, 6, MPI_CHARACTER, next, 24, prev, 24, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  sum8 = rank
  call mpi_sendrecv(sum8, 1, MPI_INTEGER8, next, 25, got8, 1, MPI_INTEGER8, prev, 25, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  check = check + int(real(c(1))) + int(dble(z(2))) + count(lflag) + iachar(word(6:6)) + int(got8)

  ! Collectives.
  b = 0
  if (rank == 0) b = a
  call mpi_bcast(b, n, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  check = check + sum(b)
  lflag = rank == 0
  call mpi_bcast(lflag, 2, MPI_LOGICAL, 0, MPI_COMM_WORLD, ierr)
  if (lflag(1)) check = check + 1
  call mpi_reduce(a, b, n, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) check = check + sum(b)
  call mpi_allreduce(a, b, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  check = check + sum(b)
  b = a
  call mpi_allreduce(MPI_IN_PLACE, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + sum(b)
  x = rank + 0.5d0
  call mpi_allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + int(x)
  pair = [rank * 7 - rank * rank, rank]
  call mpi_allreduce(pair, pairs, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  check = check + pairs(1) + pairs(2)
  call mpi_scan(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + sum(b)
  b = 0
  call mpi_exscan(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) check = check + sum(b)
  big = [(rank + i, i = 1, 15)]
  call mpi_reduce_scatter_block(big, b, 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + sum(b)
  counts = [4, 5, 6]
  call mpi_reduce_scatter(big, big2, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  check = check + sum(big2(1:counts(rank + 1)))
  call mpi_gather(a, n, MPI_INTEGER, big, n, MPI_INTEGER, 1, MPI_COMM_WORLD, ierr)
  if (rank == 1) check = check + sum(big)
  big = 0
  if (rank == 0) big(1:n) = a
  if (rank == 0) then
    call mpi_gather(MPI_IN_PLACE, n, MPI_INTEGER, big, n, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    check = check + sum(big)
  else
    call mpi_gather(a, n, MPI_INTEGER, big, n, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  end if
  counts = [1, 2, 3]
  displs = [0, 1, 3]
  call mpi_gatherv(a, rank + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, 2, MPI_COMM_WORLD, ierr)
  if (rank == 2) check = check + sum(big(1:6))
  big = [(i, i = 1, 15)]
  call mpi_scatter(big, n, MPI_INTEGER, b, n, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  check = check + sum(b)
  b = 0
  call mpi_scatterv(big, counts, displs, MPI_INTEGER, b, rank + 1, MPI_INTEGER, 1, MPI_COMM_WORLD, ierr)
  check = check + sum(b)
  call mpi_allgather(a, n, MPI_INTEGER, big, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  check = check + sum(big)
  big = 0
  call mpi_allgatherv(a, rank + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  check = check + sum(big(1:6))
  big = [(rank * 10 + i, i = 1, 15)]
  ! Two INTEGERs match one MPI_2INTEGER: the same type signature.
  call mpi_alltoall(big, 2, MPI_INTEGER, all6, 1, MPI_2INTEGER, MPI_COMM_WORLD, ierr)
  check = check + sum(all6)
  call mpi_alltoall(big, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  check = check + sum(all)
  counts = 1
  displs = [0, 1, 2]
  call mpi_alltoallv(big, counts, displs, MPI_INTEGER, all, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  check = check + sum(all)

  ! Non-blocking collectives.
  b = a
  call mpi_ibcast(b, n, MPI_INTEGER, 2, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  check = check + sum(b)
  y = rank
  call mpi_iallreduce(MPI_IN_PLACE, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  flag = .false.
  do while (.not. flag)
    call mpi_test(reqs(1), flag, MPI_STATUS_IGNORE, ierr)
  end do
  check = check + int(y)
  big = [(rank * 10 + i, i = 1, 15)]
  call mpi_igather(a, n, MPI_INTEGER, big2, n, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_ialltoall(big, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, reqs(2), ierr)
  call mpi_waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  if (rank == 0) check = check + sum(big2)
  check = check + sum(all)

  ! Communicators: split, dup, a periodic line and its sub-communicator.
  call mpi_comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub, ierr)
  call mpi_comm_dup(sub, dup, ierr)
  call mpi_allreduce(rank, k, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  check = check + k
  call mpi_comm_size(sub, k, ierr)
  if (k == 2) then
    call mpi_comm_rank(sub, i, ierr)
    call mpi_sendrecv(a, n, MPI_INTEGER, 1 - i, 26, b, n, MPI_INTEGER, 1 - i, 26, sub, MPI_STATUS_IGNORE, ierr)
    check = check + sum(b)
  end if
  call mpi_comm_free(dup, ierr)
  call mpi_comm_free(sub, ierr)
  if (sub /= MPI_COMM_NULL) check = check + 1000000
  call mpi_cart_create(MPI_COMM_WORLD, 1, [np], [.true.], .false., cart, ierr)
  call mpi_cart_shift(cart, 0, 1, i, k, ierr)
  call mpi_sendrecv(a, n, MPI_INTEGER, k, 27, b, n, MPI_INTEGER, i, 27, cart, MPI_STATUS_IGNORE, ierr)
  check = check + sum(b)
  call mpi_cart_sub(cart, [.true.], line, ierr)
  call mpi_bcast(k, 1, MPI_INTEGER, 0, line, ierr)
  check = check + k
  call mpi_comm_free(line, ierr)
  call mpi_comm_free(cart, ierr)
  ! Ranks 1 and 2 by comm_create_group; rank 0 against them by an
  ! intercommunicator, merged back into one.
  call mpi_comm_group(MPI_COMM_WORLD, wgroup, ierr)
  call mpi_group_incl(wgroup, 2, [1, 2], grp, ierr)
  if (rank > 0) then
    call mpi_comm_create_group(MPI_COMM_WORLD, grp, 29, part, ierr)
    call mpi_allreduce(rank, k, 1, MPI_INTEGER, MPI_SUM, part, ierr)
    check = check + k
    call mpi_intercomm_create(part, 0, MPI_COMM_WORLD, 0, 30, inter, ierr)
    call mpi_comm_free(part, ierr)
  else
    call mpi_intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 1, 30, inter, ierr)
  end if
  call mpi_intercomm_merge(inter, rank > 0, merged, ierr)
  call mpi_allreduce(rank, k, 1, MPI_INTEGER, MPI_MAX, merged, ierr)
  check = check + k
  call mpi_comm_free(merged, ierr)
  call mpi_comm_free(inter, ierr)
  call mpi_group_free(grp, ierr)
  call mpi_group_free(wgroup, ierr)
  ! A ring as a graph and as an unweighted distributed graph.
  call mpi_graph_create(MPI_COMM_WORLD, 3, [2, 4, 6], [1, 2, 0, 2, 0, 1], .false., graph, ierr)
  call mpi_sendrecv(a, n, MPI_INTEGER, next, 31, b, n, MPI_INTEGER, prev, 31, graph, MPI_STATUS_IGNORE, ierr)
  check = check + sum(b)
  call mpi_comm_free(graph, ierr)
  call mpi_dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [prev], MPI_UNWEIGHTED, 1, [next], MPI_UNWEIGHTED, &
                                      MPI_INFO_NULL, .false., dgraph, ierr)
  call mpi_sendrecv(a, n, MPI_INTEGER, next, 32, b, n, MPI_INTEGER, prev, 32, dgraph, MPI_STATUS_IGNORE, ierr)
  check = check + sum(b)
  call mpi_comm_free(dgraph, ierr)

  call mpi_gather(check, 1, MPI_INTEGER, checks, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, 3i10)', 'checks', checks
  call mpi_finalize(ierr)
end program
