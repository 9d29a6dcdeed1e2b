package encrypt

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/channel"
)

// Mapping says how ranks are laid out on nodes.
type Mapping int

const (
	// Block puts consecutive ranks on a node: with p = 8 on N = 2,
	// ranks 0–3 on node 0 and 4–7 on node 1.
	Block Mapping = iota
	// Cyclic deals ranks out to nodes in turn: rank r on node r mod N.
	Cyclic
)

func (m Mapping) String() string {
	switch m {
	case Block:
		return "block"
	case Cyclic:
		return "cyclic"
	}
	return fmt.Sprintf("Mapping(%d)", int(m))
}

// ParseMapping reads "block" or "cyclic".
func ParseMapping(s string) (Mapping, error) {
	switch s {
	case "block":
		return Block, nil
	case "cyclic":
		return Cyclic, nil
	}
	return 0, fmt.Errorf("%w: mapping %q (block or cyclic)", ErrLayout, s)
}

// ErrLayout: a layout that cannot be (no ranks, a node without ranks),
// or ranks that disagree on it.
var ErrLayout = errors.New("encrypt: bad node layout")

// Layout says which node each of a job's p ranks is on. Nodes are
// numbered 0…N-1, each holds at least one rank, and their sizes may
// differ (p need not be a multiple of N).
type Layout struct {
	node  []int   // node of each rank
	ranks [][]int // ranks of each node, ascending
	local []int   // index of each rank among its node's
}

// NewLayout lays p ranks out on n nodes, 1 ≤ n ≤ p. When n does not
// divide p, Block gives the first p mod n nodes one rank more than the
// others, and Cyclic does so by its nature.
func NewLayout(p, n int, m Mapping) (Layout, error) {
	if p < 1 || n < 1 || n > p {
		return Layout{}, fmt.Errorf("%w: %d ranks on %d nodes", ErrLayout, p, n)
	}
	nodeOf := make([]int, p)
	q, rem := p/n, p%n
	for r := range p {
		switch m {
		case Block:
			if r < rem*(q+1) {
				nodeOf[r] = r / (q + 1)
			} else {
				nodeOf[r] = rem + (r-rem*(q+1))/q
			}
		case Cyclic:
			nodeOf[r] = r % n
		default:
			return Layout{}, fmt.Errorf("%w: unknown mapping %d", ErrLayout, int(m))
		}
	}
	return LayoutOf(nodeOf)
}

// LayoutOf makes the layout in which rank r is on node nodeOf[r]; the
// nodes must be numbered 0…N-1 with none empty.
func LayoutOf(nodeOf []int) (Layout, error) {
	if len(nodeOf) == 0 {
		return Layout{}, fmt.Errorf("%w: no ranks", ErrLayout)
	}
	n := 0
	for r, k := range nodeOf {
		if k < 0 || k >= len(nodeOf) {
			return Layout{}, fmt.Errorf("%w: rank %d on node %d of at most %d", ErrLayout, r, k, len(nodeOf))
		}
		n = max(n, k+1)
	}
	l := Layout{node: append([]int(nil), nodeOf...), ranks: make([][]int, n), local: make([]int, len(nodeOf))}
	for r, k := range nodeOf {
		l.local[r] = len(l.ranks[k])
		l.ranks[k] = append(l.ranks[k], r)
	}
	for k, rs := range l.ranks {
		if len(rs) == 0 {
			return Layout{}, fmt.Errorf("%w: node %d holds no rank", ErrLayout, k)
		}
	}
	return l, nil
}

// NodeLocator is what a transport may implement to say where its ranks
// run (over MPI, from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)):
// LayoutFrom then builds the layout from it.
type NodeLocator interface {
	// NodeOf returns the node of rank r, numbered from 0 with none empty.
	NodeOf(r int) int
}

// LayoutFrom returns the layout c's transport reports, if it implements
// NodeLocator.
func LayoutFrom(c channel.Comm) (Layout, bool, error) {
	nl, ok := c.(NodeLocator)
	if !ok {
		return Layout{}, false, nil
	}
	nodeOf := make([]int, c.Size())
	for r := range nodeOf {
		nodeOf[r] = nl.NodeOf(r)
	}
	l, err := LayoutOf(nodeOf)
	return l, true, err
}

// Size returns the number of ranks, p.
func (l Layout) Size() int { return len(l.node) }

// Nodes returns the number of nodes, N.
func (l Layout) Nodes() int { return len(l.ranks) }

// Node returns the node of rank r.
func (l Layout) Node(r int) int { return l.node[r] }

// Ranks returns the ranks of node k in ascending order (not to be
// modified).
func (l Layout) Ranks(k int) []int { return l.ranks[k] }

// Local returns rank r's index among the ranks of its node.
func (l Layout) Local(r int) int { return l.local[r] }

// PerNode returns the fewest and the most ranks a node holds (ℓ when
// they are equal).
func (l Layout) PerNode() (lo, hi int) {
	lo = len(l.node)
	for _, rs := range l.ranks {
		lo, hi = min(lo, len(rs)), max(hi, len(rs))
	}
	return lo, hi
}

func (l Layout) String() string {
	lo, hi := l.PerNode()
	if lo == hi {
		return fmt.Sprintf("p=%d N=%d ℓ=%d", l.Size(), l.Nodes(), lo)
	}
	return fmt.Sprintf("p=%d N=%d ℓ=%d–%d", l.Size(), l.Nodes(), lo, hi)
}

// digest identifies the layout, so that ranks can check they agree.
func (l Layout) digest() [32]byte {
	b := make([]byte, 0, 4*len(l.node))
	for _, k := range l.node {
		b = binary.LittleEndian.AppendUint32(b, uint32(k))
	}
	return sha256.Sum256(b)
}
