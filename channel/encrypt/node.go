package encrypt

import (
	"context"
	"fmt"
	"sync"
)

// Node is the memory that the ranks of one node share: a process that
// holds several ranks (goroutines, each with its own Comm) makes one Node
// for them and gives it to each rank's Gatherer. Messages between them
// go through it in the clear, as copies, never over the network; HS1 and
// HS2 keep their shared plaintext and ciphertext buffers in it. A process
// that simulates many nodes makes one Node for each (NewNodes).
type Node struct {
	id    int
	ranks []int
	local map[int]int

	mu      sync.Mutex
	cond    *sync.Cond
	gen     uint64 // barrier generation
	arrived int
	acc     Counts // the larger of the counts of the ranks arrived
	out     Counts // what the last barrier gave
	err     error  // a rank's failure, which ends every wait

	box     [][]chan []byte // box[to][from]: frames between local ranks
	claimed map[int]bool    // the ranks whose Gatherer uses it

	// HS1/HS2: double-buffered, by the parity of the all-gather's seq, so
	// that a rank may start the next one while another still copies out.
	plain  [2][]byte
	shared [2][]*piece // the ciphertexts the leader gathered
	own    [2][]*piece // HS2: each local rank's sealed block
}

// NewNode returns the shared memory of node k of l.
func NewNode(l Layout, k int) *Node {
	rs := l.Ranks(k)
	n := &Node{id: k, ranks: rs, local: make(map[int]int, len(rs)), box: make([][]chan []byte, len(rs))}
	n.cond = sync.NewCond(&n.mu)
	for i, r := range rs {
		n.local[r] = i
		n.box[i] = make([]chan []byte, len(rs))
		for j := range rs {
			// Schedules keep at most a few frames in flight between two
			// ranks; the room only lets a sender run ahead.
			n.box[i][j] = make(chan []byte, 16)
		}
	}
	return n
}

// NewNodes returns every node of l, for a process that runs all ranks.
func NewNodes(l Layout) []*Node {
	ns := make([]*Node, l.Nodes())
	for k := range ns {
		ns[k] = NewNode(l, k)
	}
	return ns
}

// post hands frame (which it now owns) from one local rank to another.
func (n *Node) post(ctx context.Context, from, to int, frame []byte) error {
	select {
	case n.box[n.local[to]][n.local[from]] <- frame:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// take waits for the next frame from one local rank to another.
func (n *Node) take(ctx context.Context, to, from int) ([]byte, error) {
	select {
	case f := <-n.box[n.local[to]][n.local[from]]:
		return f, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sync waits for every rank of the node and returns the larger of each
// of their counts: the node's ranks meet in shared memory, so each goes
// on from the slowest's critical path.
func (n *Node) sync(ctx context.Context, c Counts) (Counts, error) {
	if len(n.ranks) == 1 {
		return c, nil
	}
	stop := context.AfterFunc(ctx, func() {
		n.mu.Lock()
		n.cond.Broadcast()
		n.mu.Unlock()
	})
	defer stop()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		return c, n.err
	}
	gen := n.gen
	n.acc = n.acc.Max(c)
	n.arrived++
	if n.arrived == len(n.ranks) {
		n.out, n.acc, n.arrived = n.acc, Counts{}, 0
		n.gen++
		n.cond.Broadcast()
		return n.out, nil
	}
	for n.gen == gen && n.err == nil {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		n.cond.Wait()
	}
	if n.gen == gen {
		return c, n.err
	}
	return n.out, nil
}

// fail ends the waits of the other local ranks: one of them failed, and
// the node's shared state is no longer what they expect.
func (n *Node) fail(rank int, err error) {
	n.mu.Lock()
	if n.err == nil {
		n.err = fmt.Errorf("encrypt: rank %d of node %d failed: %w", rank, n.id, err)
	}
	n.cond.Broadcast()
	n.mu.Unlock()
}

// claim gives the node to rank r's Gatherer: one Gatherer a rank, since
// their barriers and buffers would mix.
func (n *Node) claim(r int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.claimed == nil {
		n.claimed = map[int]bool{}
	}
	if n.claimed[r] {
		return fmt.Errorf("%w: node %d already serves a Gatherer of rank %d (make a Node for each)", ErrLayout, n.id, r)
	}
	n.claimed[r] = true
	return nil
}

// has says whether rank r is on this node.
func (n *Node) has(r int) bool { _, ok := n.local[r]; return ok }
