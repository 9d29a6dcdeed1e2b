package replicate_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/replicate"
	"github.com/sigcheck/sigcheck/channel/replicate/jacobi"
)

// Four ranks of a stencil, each run as three replicas over twelve native
// ranks in this process (over TCP: one process per native rank, the same
// code). Replica 0 of every rank has a bit flipped in one message in 50;
// the answer is the fault-free one on every replica of rank 0.
func Example() {
	ctx := context.Background()
	natives, _ := channel.NewLocal(4 * 3)
	inj := replicate.Injector{Rate: 0.02, Seed: 1, Replica: 0, Rank: replicate.Every, Step: replicate.Every}
	hashes := make([]uint64, len(natives))
	errs := make([]error, len(natives))
	var wg sync.WaitGroup
	for i, native := range natives {
		wg.Go(func() {
			c, _ := replicate.New(native, 3, replicate.WithInjector(inj)) // every native rank, the same r and options
			defer c.Close()
			res, err := jacobi.Run(ctx, c, jacobi.Config{N: 256, Steps: 100, Check: 10})
			// Send, Recv, Isend/Irecv and channel's collectives on c: every copy voted on
			hashes[i], errs[i] = res.Hash, err
		})
	}
	wg.Wait()
	plain, _, _ := jacobi.RunPlain(ctx, "local", 4, jacobi.Config{N: 256, Steps: 100, Check: 10})
	for k := range 3 {
		fmt.Printf("rank 0, replica %d: same as the unreplicated run: %v\n", k, hashes[k*4] == plain.Hash)
	}
	for _, err := range errs {
		if err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// rank 0, replica 0: same as the unreplicated run: true
	// rank 0, replica 1: same as the unreplicated run: true
	// rank 0, replica 2: same as the unreplicated run: true
}
