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
