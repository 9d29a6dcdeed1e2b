package channel_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/sigcheck/sigcheck/channel"
)

// Two ranks in one process; rank 0 sends 1 MiB to rank 1 under the
// checksum layer, over a transport that flips a bit in a third of rank
// 0's frames. The receiver catches the damaged chunks and has only those
// sent again: what it receives is what was sent.
func Example() {
	ctx := context.Background()
	eps, err := channel.NewLocal(2, channel.WithInjector(&channel.Injector{Rate: 0.3, Seed: 1, Ranks: []int{0}}))
	if err != nil {
		panic(err)
	}
	sent := make([]byte, 1<<20)
	for i := range sent {
		sent[i] = byte(i * 7)
	}
	got := make([]byte, len(sent))
	var wg sync.WaitGroup
	for _, ep := range eps { // every rank runs the same code (SPMD)
		wg.Go(func() {
			defer ep.Close()
			c, err := channel.WithChecksum(ep) // or channel.WithMerkle(ep)
			if err != nil {
				panic(err)
			}
			if c.Rank() == 0 {
				err = c.Send(ctx, 1, 7, sent)
			} else {
				_, err = c.Recv(ctx, 0, 7, got)
			}
			if err == nil {
				err = channel.Flush(ctx, c) // small sends return early; Flush hears their verdicts
			}
			if err == nil {
				err = channel.Barrier(ctx, ep) // no rank closes before the other is done
			}
			if err != nil {
				panic(err)
			}
		})
	}
	wg.Wait()
	damaged := channel.StatsOf(eps[0]).Injected
	recv := channel.StatsOf(eps[1])
	fmt.Println("frames damaged on the way:", damaged > 0)
	fmt.Println("all caught and repaired:", recv.Detected >= damaged && recv.Repaired > 0)
	fmt.Println("received what was sent:", bytes.Equal(got, sent))
	// Output:
	// frames damaged on the way: true
	// all caught and repaired: true
	// received what was sent: true
}

// Four ranks gather every rank's block under the Merkle layer while one
// frame in a hundred is damaged: every rank ends with every block, byte
// for byte. (The README's example.)
func Example_allgather() {
	ctx := context.Background()
	blocks := make([][]byte, 4)
	for r := range blocks {
		blocks[r] = bytes.Repeat([]byte{byte('a' + r)}, 300_000)
	}
	want := bytes.Join(blocks, nil)
	right := make([]bool, len(blocks))
	var wg sync.WaitGroup
	eps, _ := channel.NewLocal(4, channel.WithInjector(&channel.Injector{Rate: 0.01, Seed: 1}))
	for r, ep := range eps { // or one ep per process: tcp.Connect(ctx, cfg)
		wg.Add(1)
		go func() { // every rank runs the same code
			defer wg.Done()
			defer ep.Close()
			all := make([]byte, len(eps)*len(blocks[r]))
			c, _ := channel.WithMerkle(ep)
			err := channel.Allgather(ctx, c, blocks[r], all) // all: every rank's block, byte for byte
			if err != nil {
				panic(err)
			}
			err = channel.Flush(ctx, c) // small sends return early: their verdicts
			if err == nil {
				err = channel.Barrier(ctx, ep)
			}
			if err != nil {
				panic(err)
			}
			right[r] = bytes.Equal(all, want)
		}()
	}
	wg.Wait()
	fmt.Println("every rank has every block:", right)
	// Output: every rank has every block: [true true true true]
}
