//go:build mpi

package mpi_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/mpi"
)

// Every rank of an mpirun job joins, protects its messages with a Merkle
// layer, and passes a message round the ring. (Compiled, not run: it
// needs mpirun; the package's tests run under it.)
func Example() {
	ctx := context.Background()
	ep, err := mpi.Connect(ctx) // every rank, in the same order: MPI_Init, MPI_Comm_idup
	if err != nil {
		log.Fatal(err)
	}
	c, _ := channel.WithMerkle(ep) // as over any endpoint
	defer mpi.Finalize()           // once, after ep.Close()
	defer ep.Close()
	right, left := (c.Rank()+1)%c.Size(), (c.Rank()-1+c.Size())%c.Size()
	in := make([]byte, 64)
	r := channel.Irecv(ctx, c, left, 0, in)
	if err := c.Send(ctx, right, 0, []byte(fmt.Sprintf("hello from rank %d", c.Rank()))); err != nil {
		log.Fatal(err)
	}
	st, err := r.Wait()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("rank %d: %s\n", c.Rank(), in[:st.Len])
	if err := channel.Flush(ctx, c); err != nil { // the eager send verified before closing
		log.Fatal(err)
	}
}
