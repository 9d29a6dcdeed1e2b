# The example in mpi4py: rank 0 sends ten int32 (MPI_INT), rank 1
# receives them into a float32 array (MPI_FLOAT), with tag 7. One report:
# the MPI_Recv on rank 1, from rank 0, tag 7, element 0.
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
if comm.rank == 0:
    comm.Send(np.arange(10, dtype=np.int32), dest=1, tag=7)
elif comm.rank == 1:
    f = np.zeros(10, dtype=np.float32)
    comm.Recv(f, source=0, tag=7)
    print(f[:3])
