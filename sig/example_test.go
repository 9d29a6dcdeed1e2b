package sig_test

import (
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/sig"
)

// The signature of a billion-block vector, from its description.
func ExampleOf() {
	v := sig.Must(sig.Vector(1e9, 3, 5, sig.Double))
	alg, _ := sig.ParseAlgebra("gfd:w=8,m=2")
	s, _ := sig.Of(alg, v, 1)
	fmt.Printf("%#04x over %d elements\n", s.Value, s.Count)
	// Output: 0xf5ac over 3000000000 elements
}

// A sender's struct {int; double[3]} received as {int; float[6]}: same
// size, different types.
func ExampleMatch() {
	send := sig.Must(sig.ParseDatatype("struct([1, 3], [0, 8], [int, double])"))
	recv := sig.Must(sig.ParseDatatype("struct([1, 6], [0, 8], [int, float])"))
	err := sig.Match(sig.Default(), send, 100, recv, 100, sig.PointToPoint)
	var e *sig.MismatchError
	if errors.As(err, &e) {
		fmt.Println(err)
		fmt.Println("sender:  ", e.SendMap)
		fmt.Println("receiver:", e.RecvMap)
	}
	// Output:
	// sig: point-to-point mismatch at element 1: sender has double (item 0 → struct member 1 → element 0, byte 8), receiver has float (item 0 → struct member 1 → element 0, byte 8)
	// sender:   int @0, [double] @8, double×2 @16, int @32, double×3 @40, int @64, … (+391 elements)
	// receiver: int @0, [float] @8, float×5 @12, int @32, float×6 @40, int @64, … (+685 elements)
}

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

// Concatenation and repetition agree with hashing the expanded sequence
// (here, the CRC-32 of "123123123", as zlib.crc32 computes it).
func ExampleAlgebra() {
	alg, _ := sig.ParseAlgebra("crc32")
	one := alg.Append(alg.Empty(), '1', '2', '3')
	fmt.Printf("%08x\n", alg.Repeat(one, 3).Value)
	fmt.Printf("%08x\n", alg.Append(alg.Empty(), '1', '2', '3', '1', '2', '3', '1', '2', '3').Value)
	// Output:
	// 0070f991
	// 0070f991
}
