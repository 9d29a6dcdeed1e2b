package replicate

// Taint is a replica's state at one application step, in the paper's
// words (§VII-A): clean; tainted directly (a fault was injected into its
// memory at or before this step); or tainted indirectly (it received a
// corrupt copy at or before this step, from a sender tainted before it).
type Taint uint8

const (
	Clean Taint = iota
	Indirect
	Direct
)

func (t Taint) String() string {
	switch t {
	case Direct:
		return "direct"
	case Indirect:
		return "indirect"
	}
	return "clean"
}

// TaintMap is the paper's picture of how corruption spreads: for each
// virtual rank, the state of its replica `replica` at each of steps
// steps, from the Stats of every native rank (indexed by native rank, as
// m places them). Taint is sticky: memory once corrupt stays so. Bad
// counts the corrupt copies that replica set received in each step.
func TaintMap(stats []Stats, m Map, replica, steps int) (taint [][]Taint, bad []int) {
	taint = make([][]Taint, m.Virtual())
	bad = make([]int, steps)
	for v := range taint {
		taint[v] = make([]Taint, steps)
		st := stats[m.Native(v, replica)]
		state := Clean
		i := 0
		for s := range steps {
			for i < len(st.Steps) && st.Steps[i].Step <= s {
				e := st.Steps[i]
				if e.Step == s {
					bad[s] += e.Tainted
				}
				if e.Injected > 0 {
					state = Direct
				} else if e.Tainted > 0 && state == Clean {
					state = Indirect
				}
				i++
			}
			taint[v][s] = state
		}
	}
	return taint, bad
}
