package tree_test

import (
	"bytes"
	"fmt"

	"github.com/sigcheck/sigcheck/tree"
)

// A receiver finds every corrupted segment by asking the sender for the
// children of the nodes that differ, one level per round, then rebuilds
// them from parity and checks them against the hashes it was sent.
func ExampleDescent() {
	sent := bytes.Repeat([]byte("all work and no play "), 10_000) // 210 000 bytes
	sender, _ := tree.Build(sent)
	parity, _ := tree.NewParity(sent, tree.DefaultSegment, 2)

	got := bytes.Clone(sent)
	got[5_000] ^= 1   // segment 2
	got[150_000] ^= 1 // segment 73
	receiver, _ := tree.Build(got)

	d := tree.NewDescent(receiver, sender.Root()) // the root crossed: 11 bytes
	for {
		req, more := d.Request()
		if !more {
			break
		}
		ans, _ := sender.Answer(req) // on the wire: req.AppendBinary, ans.AppendBinary
		if err := d.Answer(ans); err != nil {
			fmt.Println(err) // a corrupted answer: ask again
		}
	}
	fmt.Println("corrupted:", d.Faulty(), "in", d.Rounds(), "rounds,", d.Received(), "hashes")

	err := parity.Repair(got, receiver, d.Faulty(), d.Expected)
	fmt.Println("repaired:", err == nil, bytes.Equal(got, sent), receiver.Root() == sender.Root())
	// Output:
	// corrupted: [2 73] in 7 rounds, 24 hashes
	// repaired: true true true
}

func ExampleTree_Prove() {
	data := []byte("a segment can be proven against the root alone, with its siblings")
	t, _ := tree.Build(data, tree.Segment(8))
	p, _ := t.Prove(3)
	off, n := t.SegmentRange(3)
	fmt.Println(len(p.Siblings), "siblings")
	fmt.Println(tree.VerifyProof(t.Hash(), t.Root(), p, data[off:off+n]))
	fmt.Println(tree.VerifyProof(t.Hash(), t.Root(), p, []byte("forgery!")) != nil)
	// Output:
	// 3 siblings
	// <nil>
	// true
}
