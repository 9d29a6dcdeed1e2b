# Correct: the same calls as mpi4py_int_float.py used rightly, and more of
# mpi4py: buffer sends and receives of numpy arrays (blocking,
# non-blocking, with a longer receive, with a wildcard source), pickled
# objects (comm.send/recv, isend/irecv, which mpi4py receives by matched
# probe), Sendrecv, and collectives on buffers and objects. Rank 0 prints
# what it got.
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
out = []

if rank == 0:
    comm.Send(np.arange(10, dtype=np.int32), dest=1, tag=7)
    comm.Send([np.linspace(0, 1, 5), MPI.DOUBLE], dest=1, tag=8)
    req = comm.Isend(np.arange(6, dtype=np.int64), dest=1, tag=9)
    req.Wait()
    comm.send({"a": 1, "b": [1, 2, 3]}, dest=1, tag=10)
    comm.isend(("tuple", 2.5), dest=1, tag=11).wait()
    back = np.zeros(10, dtype=np.int32)
    comm.Recv(back, source=MPI.ANY_SOURCE, tag=12)
    out.append(back.tolist())
elif rank == 1:
    a = np.zeros(10, dtype=np.int32)
    comm.Recv(a, source=0, tag=7)
    d = np.zeros(8)
    st = MPI.Status()
    comm.Recv([d, MPI.DOUBLE], source=0, tag=8, status=st)
    n = st.Get_count(MPI.DOUBLE)
    l = np.zeros(6, dtype=np.int64)
    comm.Irecv(l, source=0, tag=9).Wait()
    obj = comm.recv(source=0, tag=10)
    tup = comm.irecv(source=0, tag=11).wait()
    comm.Send(a * 2, dest=0, tag=12)

x = np.full(4, rank, dtype=np.int32)
y = np.zeros(4, dtype=np.int32)
comm.Sendrecv(x, dest=(rank + 1) % size, sendtag=20, recvbuf=y, source=(rank - 1) % size, recvtag=20)
s = np.zeros(3)
comm.Allreduce(np.full(3, rank + 1.0), s, op=MPI.SUM)
b = np.arange(4, dtype=np.int32) if rank == 0 else np.zeros(4, dtype=np.int32)
comm.Bcast(b, root=0)
g = comm.gather(rank * 10, root=0)
o = comm.bcast({"k": "v"} if rank == 0 else None, root=0)
allv = np.zeros(size, dtype=np.int32)
comm.Allgather(np.array([rank], dtype=np.int32), allv)
if rank == 0:
    out += [y.tolist(), s.tolist(), b.tolist(), g, o, allv.tolist()]
    print(out)
