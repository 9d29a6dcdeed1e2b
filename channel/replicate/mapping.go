package replicate

import (
	"errors"
	"fmt"
)

// Place is where a native rank sits in the virtual world: which virtual
// rank it runs, as which replica.
type Place struct{ Virtual, Replica int }

// Map assigns the r·n native ranks of a transport to n virtual ranks of r
// replicas each (the paper's rank mapping, §III-A). Every rank of a job
// must build the same Map.
type Map struct {
	n, r    int
	places  []Place // by native rank
	natives []int   // natives[v*r+k]: the native rank of replica k of virtual rank v
}

// ErrMap: a rank map that does not describe r replicas of n virtual ranks
// (a place given twice or not at all, out of range), or that puts two
// replicas of one virtual rank on one node.
var ErrMap = errors.New("replicate: bad rank map")

// Formula is the paper's default map: native rank k·n+v runs replica k of
// virtual rank v, so each replica set is a contiguous block of native
// ranks (with a launcher that fills nodes in rank order, a replica set
// per group of nodes).
func Formula(n, r int) Map {
	if n < 1 || r < 1 {
		panic(fmt.Sprintf("replicate: Formula(%d, %d)", n, r))
	}
	places := make([]Place, n*r)
	for i := range places {
		places[i] = Place{Virtual: i % n, Replica: i / n}
	}
	m, err := NewMap(places, r)
	if err != nil {
		panic(err) // cannot happen
	}
	return m
}

// NewMap is a map given by the user: places[i] is native rank i's place.
// Each (virtual, replica) pair with 0 ≤ virtual < len(places)/r and
// 0 ≤ replica < r must appear exactly once.
func NewMap(places []Place, r int) (Map, error) {
	if r < 1 || len(places) == 0 || len(places)%r != 0 {
		return Map{}, fmt.Errorf("%w: %d native ranks are not a multiple of %d replicas", ErrMap, len(places), r)
	}
	n := len(places) / r
	m := Map{n: n, r: r, places: append([]Place(nil), places...), natives: make([]int, n*r)}
	for i := range m.natives {
		m.natives[i] = -1
	}
	for i, p := range places {
		if p.Virtual < 0 || p.Virtual >= n || p.Replica < 0 || p.Replica >= r {
			return Map{}, fmt.Errorf("%w: native rank %d placed at virtual rank %d replica %d, outside %d×%d", ErrMap, i, p.Virtual, p.Replica, n, r)
		}
		if j := m.natives[p.Virtual*r+p.Replica]; j >= 0 {
			return Map{}, fmt.Errorf("%w: native ranks %d and %d both placed at virtual rank %d replica %d", ErrMap, j, i, p.Virtual, p.Replica)
		}
		m.natives[p.Virtual*r+p.Replica] = i
	}
	return m, nil
}

// Noder is what a transport that knows the machine may implement: the
// name of the node (host) each of its ranks runs on. When the Comm given
// to New implements it (and no map is given), replicas of one virtual
// rank are placed on distinct nodes, so that one node's failure — its
// power, its memory — never takes two copies of the same data.
type Noder interface {
	Node(rank int) string
}

// Spread is the map that keeps the replicas of each virtual rank on
// distinct nodes: the native ranks are listed node by node (nodes in
// order of their first rank, ranks in order within a node), and the p-th
// of that list runs replica p/n of virtual rank p%n. Replicas of virtual
// rank v sit n apart in the list, so they share a node only if that node
// has more than n ranks, when no map can separate them: that is an error.
func Spread(nodes []string, r int) (Map, error) {
	if r < 1 || len(nodes) == 0 || len(nodes)%r != 0 {
		return Map{}, fmt.Errorf("%w: %d native ranks are not a multiple of %d replicas", ErrMap, len(nodes), r)
	}
	n := len(nodes) / r
	var order []string
	byNode := map[string][]int{}
	for i, name := range nodes {
		if _, ok := byNode[name]; !ok {
			order = append(order, name)
		}
		byNode[name] = append(byNode[name], i)
	}
	places := make([]Place, len(nodes))
	p := 0
	for _, name := range order {
		ranks := byNode[name]
		if len(ranks) > n && r > 1 {
			return Map{}, fmt.Errorf("%w: node %q holds %d ranks, more than the %d virtual ranks, so two replicas of one would share it", ErrMap, name, len(ranks), n)
		}
		for _, i := range ranks {
			places[i] = Place{Virtual: p % n, Replica: p / n}
			p++
		}
	}
	return NewMap(places, r)
}

// Virtual returns the number of virtual ranks n.
func (m Map) Virtual() int { return m.n }

// Degree returns the number of replicas r.
func (m Map) Degree() int { return m.r }

// Place returns native rank i's place.
func (m Map) Place(native int) Place { return m.places[native] }

// Native returns the native rank of replica k of virtual rank v.
func (m Map) Native(v, k int) int { return m.natives[v*m.r+k] }
