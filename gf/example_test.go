package gf_test

import (
	"errors"
	"fmt"

	"github.com/sigcheck/sigcheck/gf"
)

func ExampleField() {
	f := gf.Default(8) // GF(2^8) on x^8+x^4+x^3+x^2+1 (0x11D)
	a, b := uint32(0x57), uint32(0x83)
	p := f.Mul(a, b)
	fmt.Printf("%#x·%#x = %#x, and back: %#x\n", a, b, p, f.Div(p, b))
	fmt.Println("α^8 =", f.Exp(8), "= α^263 =", f.Exp(263))
	fmt.Println("log 29 =", f.Log(29))
	// Output:
	// 0x57·0x83 = 0x31, and back: 0x57
	// α^8 = 29 = α^263 = 29
	// log 29 = 8
}

// A polynomial that is irreducible but not primitive, such as AES's, is refused.
func ExampleNew() {
	_, err := gf.New(8, 0x11B)
	fmt.Println(errors.Is(err, gf.ErrNotPrimitive))
	f, _ := gf.New(32, 0x400007) // GF-Complete's w=32 default, x^32 left implicit
	fmt.Printf("%#x\n", f.Poly())
	// Output:
	// true
	// 0x100400007
}

// CRC arithmetic: x^(8·9) mod the CRC-32 polynomial, the factor that shifts
// a CRC past nine bytes.
func ExampleRing() {
	r, _ := gf.NewRing(32, 0x04C11DB7)
	fmt.Printf("%#08x\n", r.XPow(72))
	// Output: 0x1b280d78
}

// Multiplying a whole buffer by a constant, as erasure codes do.
func ExampleField_MulSliceXor() {
	f := gf.Default(8)
	data := []byte{1, 2, 3, 4}
	parity := make([]byte, 4)
	f.MulSliceXor(7, data, parity)
	fmt.Println(parity)
	// Output: [7 14 9 28]
}

// Zech's logarithm: log(1 + α^n) in one lookup, the step that makes the
// checksum of k copies of a block O(1) (Langou et al.'s formula (9)).
func ExampleField_Zech() {
	f := gf.Default(8)
	z := f.Zech(5)
	fmt.Println(f.Exp(z) == 1^f.Exp(5))
	// Output: true
}
