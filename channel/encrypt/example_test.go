package encrypt_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/encrypt"
)

// Four ranks on two nodes; in a real job each node is a process holding
// its ranks, each with one tcp.Connect.
func Example() {
	ctx := context.Background()
	p, n := 4, 2
	eps, _ := channel.NewLocal(p)
	lay, _ := encrypt.NewLayout(p, n, encrypt.Block) // or LayoutFrom(c): a transport that knows its nodes
	var wg sync.WaitGroup
	for k := range lay.Nodes() {
		node := encrypt.NewNode(lay, k) // one per process: the memory its ℓ ranks share
		for _, r := range lay.Ranks(k) {
			ep := eps[r]
			wg.Go(func() {
				send, recv := []byte{byte('a' + r)}, make([]byte, p)
				g, err := encrypt.New(ctx, ep, ep, lay, node) // every rank; ep (*channel.Endpoint) gives the link keys
				if err != nil {
					fmt.Println(err)
					return
				}
				counts, err := g.Run(ctx, encrypt.HS2, send, recv) // or g.Allgather(ctx, send, recv): Auto
				if err == nil && r == 0 {
					fmt.Println(string(recv), counts)
				}
			})
		}
	}
	wg.Wait()
	// Output: abcd r_c=1 s_c=2 r_e=1 s_e=1 r_d=1 s_d=1
}
