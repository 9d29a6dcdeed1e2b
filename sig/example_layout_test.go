// Where a float64 is aligned to 8 bytes, as on every 64-bit platform Go
// supports. On 386, arm, mips and mipsle it is aligned to 4, so a Go
// struct's layout (and these examples' output) differs there; the
// signatures, which do not depend on the layout, match all the same.

//go:build !(386 || arm || mips || mipsle)

package sig_test

import (
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/sig"
)

// The datatype of a Go struct, at the offsets Go lays it out.
func ExampleFromValue() {
	type particle struct {
		ID  int32
		Pos [3]float64
	}
	dt, _ := sig.FromValue(particle{})
	fmt.Println(dt)
	// Output: resized(0, 32, struct([1, 1], [0, 8], [int32_t, contiguous(3, double)]))
}

// A C sender's struct {int id; double pos[3];}, received into a Go
// struct. cgo's C.int is an int32, which is int32_t to MPI unless a tag
// (or As, or CNames) says it stands for C's int. This is the README's
// example.
func ExampleFromValue_cTypes() {
	type Particle struct {
		ID  int32 `sig:"int"`
		Pos [3]float64
	}
	send := sig.Must(sig.ParseDatatype("struct([1, 3], [0, 8], [int, double])"))
	recv, _ := sig.FromValue(Particle{}) // a Go struct, at Go's offsets
	fmt.Println(recv)
	fmt.Println(sig.Match(sig.Default(), send, 1000, recv, 1000, sig.PointToPoint))

	st, _ := sig.NewStamp(sig.Default(), send, 1000) // 27 bytes for the wire
	fmt.Println(st.Check(sig.Default(), recv, 1000, sig.PointToPoint))

	untagged, _ := sig.FromValue(struct {
		ID  int32
		Pos [3]float64
	}{})
	err := sig.Match(sig.Default(), send, 1000, untagged, 1000, sig.PointToPoint)
	var m *sig.MismatchError
	if errors.As(err, &m) {
		fmt.Println(m.Index, m.Send.Type.Name(), m.Recv.Type.Name(), m.Send.Path)
	}
	// Output:
	// resized(0, 32, struct([1, 1], [0, 8], [int, contiguous(3, double)]))
	// <nil>
	// <nil>
	// 0 int int32_t item 0 → struct member 0
}
