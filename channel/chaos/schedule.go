package chaos

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Kind is what a fault does to the frame it hits.
type Kind int

const (
	Flip      Kind = iota // one bit of the payload (of the header, for a frame without one)
	Drop                  // the frame never arrives
	Truncate              // the header and half the payload
	Duplicate             // the frame twice
	Reorder               // the frame after the next one on its link
	Delay                 // the link stalls before the frame
	kinds
)

func (k Kind) String() string {
	return [...]string{"flip", "drop", "truncate", "duplicate", "reorder", "delay"}[k]
}

// Fault hits the Nth frame (from 0) of a class on the link Src → Dst.
type Fault struct {
	Kind     Kind
	Src, Dst int
	Control  bool // a control frame (verdict, ask, answer, trailer…), else a data frame
	Nth      int
}

// Op is one step every rank takes.
type Op struct {
	Coll string // "" for point to point, else "bcast" or "allgather"
	// Point to point: Msgs; a collective: Root and Size.
	Msgs []Msg
	Root int
	Size int
}

// Msg is one message of a point-to-point step.
type Msg struct {
	Src, Dst int
	Size     int
	Any      bool // received with AnySource
	Short    bool // the receiver's buffer is too short: it throws the message away
}

// Schedule is one job of the campaign.
type Schedule struct {
	Seed      uint64
	P         int
	Transport string // "local", "tcp" or "mpi"
	Layer     string // "none", "checksum", "merkle" or "typed" (datatype stamps over Merkle)
	Ops       []Op
	Faults    []Fault
	Kill      int // the rank that dies before op KillAt, or -1
	KillAt    int
	Strangers int // silent connections at rank 0 while the job forms (tcp)
}

func (s Schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: p=%d %s %s, %d ops", s.Seed, s.P, s.Transport, s.Layer, len(s.Ops))
	for _, f := range s.Faults {
		c := "data"
		if f.Control {
			c = "control"
		}
		fmt.Fprintf(&b, "; %s %s frame %d %d→%d", f.Kind, c, f.Nth, f.Src, f.Dst)
	}
	if s.Kill >= 0 {
		fmt.Fprintf(&b, "; rank %d dies before op %d", s.Kill, s.KillAt)
	}
	if s.Strangers > 0 {
		fmt.Fprintf(&b, "; %d strangers", s.Strangers)
	}
	return b.String()
}

// sizes a message may have: empty, small, eager, around the eager limit,
// large, more than a frame.
var sizes = []int{0, 1, 100, 4000, 40 << 10, 64 << 10, 64<<10 + 1, 200 << 10, 1<<20 + 3}

// Draw makes the schedule of a seed for a job in this process; tcp says
// whether TCP jobs may be drawn.
func Draw(seed uint64, tcp bool) Schedule {
	return draw(seed, 0, tcp, "")
}

// DrawMPI makes the schedule of a seed for a job of p processes over
// Open MPI (RunProcess): every process draws the same one. It has no
// strangers (mpirun forms the job).
func DrawMPI(seed uint64, p int) Schedule {
	return draw(seed, p, false, "mpi")
}

// draw makes the schedule of a seed: p ranks (0: drawn, 2 to 4) over
// transport ("": local, or TCP one time in three if tcp).
func draw(seed uint64, p int, tcp bool, transport string) Schedule {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	s := Schedule{Seed: seed, P: 2 + r.IntN(3), Transport: "local", Kill: -1}
	if tcp && r.IntN(3) == 0 {
		s.Transport = "tcp"
	}
	if p > 0 {
		s.P = p
	}
	if transport != "" {
		s.Transport = transport
	}
	s.Layer = []string{"none", "checksum", "merkle", "merkle", "typed"}[r.IntN(5)]
	size := func() int {
		n := sizes[r.IntN(len(sizes))]
		if n > 8 {
			n -= r.IntN(8) // not only round sizes
		}
		return n
	}
	for range 1 + r.IntN(5) {
		switch r.IntN(5) {
		case 0:
			s.Ops = append(s.Ops, Op{Coll: "bcast", Root: r.IntN(s.P), Size: size()})
		case 1:
			s.Ops = append(s.Ops, Op{Coll: "allgather", Size: min(size(), 200<<10)})
		default:
			var op Op
			for range 1 + r.IntN(2*s.P) {
				m := Msg{Src: r.IntN(s.P), Dst: r.IntN(s.P), Size: size(), Any: r.IntN(3) == 0}
				if m.Src == m.Dst {
					m.Dst = (m.Dst + 1) % s.P
				}
				m.Short = m.Size > 0 && r.IntN(12) == 0
				op.Msgs = append(op.Msgs, m)
			}
			s.Ops = append(s.Ops, op)
		}
	}
	for range r.IntN(4) {
		f := Fault{Kind: Kind(r.IntN(int(kinds))), Src: r.IntN(s.P), Dst: r.IntN(s.P), Control: r.IntN(3) == 0, Nth: r.IntN(4)}
		if f.Src == f.Dst {
			f.Dst = (f.Dst + 1) % s.P
		}
		s.Faults = append(s.Faults, f)
	}
	if r.IntN(15) == 0 {
		s.Kill, s.KillAt = r.IntN(s.P), r.IntN(len(s.Ops))
	}
	if s.Transport == "tcp" && r.IntN(4) == 0 {
		s.Strangers = 1 + r.IntN(3)
	}
	return s
}

// delay is how long a Delay fault stalls its link.
const delay = 30 * time.Millisecond
