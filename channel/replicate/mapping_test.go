package replicate

import (
	"errors"
	"testing"
)

func TestFormula(t *testing.T) {
	m := Formula(4, 3)
	for v := range 4 {
		for k := range 3 {
			if n := m.Native(v, k); n != k*4+v || m.Place(n) != (Place{v, k}) {
				t.Errorf("virtual %d replica %d: native %d", v, k, n)
			}
		}
	}
}

func TestNewMapRefuses(t *testing.T) {
	for _, places := range [][]Place{
		{{0, 0}, {0, 0}},         // twice
		{{0, 0}, {1, 0}, {0, 1}}, // not a multiple of 2
		{{0, 0}, {0, 2}},         // replica out of range
		{{0, 0}, {-1, 1}},        // virtual out of range
	} {
		if _, err := NewMap(places, 2); !errors.Is(err, ErrMap) {
			t.Errorf("%v: %v", places, err)
		}
	}
	m, err := NewMap([]Place{{1, 1}, {0, 0}, {1, 0}, {0, 1}}, 2)
	if err != nil || m.Native(1, 1) != 0 || m.Native(0, 1) != 3 {
		t.Errorf("%v %+v", err, m)
	}
}

// Spread keeps the replicas of every virtual rank on distinct nodes,
// however the launcher ordered the ranks, and says so when it cannot.
func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		nodes []string
		r     int
	}{
		{[]string{"a", "a", "b", "b", "c", "c"}, 3},
		{[]string{"a", "b", "a", "b", "a", "b"}, 2},
		{[]string{"x", "y", "x", "z", "y", "z", "x", "y", "z"}, 3},
		{[]string{"a", "a", "a", "a", "b", "b", "b", "b"}, 2},
	} {
		m, err := Spread(tc.nodes, tc.r)
		if err != nil {
			t.Fatalf("%v: %v", tc.nodes, err)
		}
		for v := range m.Virtual() {
			seen := map[string]int{}
			for k := range tc.r {
				node := tc.nodes[m.Native(v, k)]
				if j, ok := seen[node]; ok {
					t.Errorf("%v: replicas %d and %d of rank %d both on %s", tc.nodes, j, k, v, node)
				}
				seen[node] = k
			}
		}
	}
	if _, err := Spread([]string{"a", "a", "a", "b"}, 2); !errors.Is(err, ErrMap) {
		t.Errorf("three ranks of four on one node, two replicas each: %v", err)
	}
}

// A user's map (here Spread's, for nodes a launcher filled alternately)
// carries the traffic as the formula does.
func TestUserMapCarries(t *testing.T) {
	m, err := Spread([]string{"a", "b", "c", "a", "b", "c"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	cs := world(t, "local", 2, 3, WithMap(m))
	msg := pattern(300, 1)
	got, errs := exchange(t, cs, msg, fault{300, []int{2}, []int{9}}, 1)
	for k := range 3 {
		if errs[k] != nil || string(got[k]) != string(msg) {
			t.Errorf("replica %d: %v", k, errs[k])
		}
	}
	if _, err := New(natives(t, "local", 6)[0], 2, WithMap(m)); !errors.Is(err, ErrMap) {
		t.Errorf("a map of 3 replicas given for 2: %v", err)
	}
}

// WithNodes places replicas on distinct nodes as a Noder transport would.
func TestWithNodes(t *testing.T) {
	nodes := []string{"a", "a", "b", "b", "c", "c"} // a launcher that fills each node in turn
	nat := natives(t, "local", 6)
	for i, c := range nat {
		x, err := New(c, 3, WithNodes(NodeFunc(func(r int) string { return nodes[r] })))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		m := x.Map()
		if m.Place(i) != x.Map().Place(x.Native()) {
			t.Fatal("native rank")
		}
		for v := range 2 {
			if nodes[m.Native(v, 0)] == nodes[m.Native(v, 1)] || nodes[m.Native(v, 1)] == nodes[m.Native(v, 2)] || nodes[m.Native(v, 0)] == nodes[m.Native(v, 2)] {
				t.Fatalf("rank %d has two replicas on one node", v)
			}
		}
	}
	if _, err := New(nat[0], 2, WithNodes(NodeFunc(func(int) string { return "one" }))); !errors.Is(err, ErrMap) {
		t.Errorf("six ranks on one node, two replicas each: %v", err)
	}
}
