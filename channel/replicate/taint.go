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

// SentMap says, for each virtual rank and step, whether its replica
// `replica` sent a copy that a receiver found corrupt in that step (by
// vote, or against the reference replica with WithDetectOnly): the
// "sent corrupt data" half of the paper's taint, from every native
// rank's Stats.
func SentMap(stats []Stats, m Map, replica, steps int) [][]bool {
	sent := make([][]bool, m.Virtual())
	for v := range sent {
		sent[v] = make([]bool, steps)
	}
	for _, st := range stats {
		for _, e := range st.Steps {
			if e.Step < 0 || e.Step >= steps {
				continue
			}
			for _, p := range e.Blamed {
				if p.Replica == replica && p.Virtual >= 0 && p.Virtual < len(sent) {
					sent[p.Virtual][e.Step] = true
				}
			}
		}
	}
	return sent
}
