package tree

import (
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/reedsolomon"

	"github.com/sigcheck/sigcheck/gf"
)

// The manifests' parity is a systematic Reed–Solomon code over GF(2^8)
// whose parity rows form a Cauchy matrix: parity segment k of a stripe is
// Σ_i C[k][i]·d_i with C[k][i] = 1/(x_k + y_i), x_k = 255-k and y_i = i
// (the data segments are i < 256-P, the parity rows k < P, so no x equals
// a y). Every square submatrix of a Cauchy matrix is invertible, so any
// e ≤ P lost data segments of a stripe come back from any e intact parity
// segments by solving an e×e system: decoding costs e multiply-adds per
// surviving segment and an e×e inversion, where a general decoder inverts
// the whole W×W matrix (tens of milliseconds at W = 252, for every stripe
// with its own pattern of losses). The coefficients do not depend on the
// stripe's width, so a short last stripe is the same code.
//
// The field is klauspost/reedsolomon's (polynomial 0x11D), whose SIMD
// kernels do the multiply-adds over whole segments.

var gf8 = sync.OnceValue(func() *gf.Field {
	f, err := gf.New(8, 0x11D)
	if err != nil {
		panic(err) // a constant polynomial: cannot happen
	}
	return f
})

// cauchy[k][i] is C[k][i].
var cauchy = sync.OnceValue(func() *[MaxParity][256]byte {
	var c [MaxParity][256]byte
	f := gf8()
	for k := range MaxParity {
		for i := range 256 - k - 1 {
			c[k][i] = byte(f.Inv(uint32(byte(255-k) ^ byte(i))))
		}
	}
	return &c
})

var lowLevel reedsolomon.LowLevel

// mulAdd sets out ^= c·in, elementwise in GF(2^8).
func mulAdd(c byte, in, out []byte) {
	if c != 0 {
		lowLevel.GalMulSliceXor(c, in, out)
	}
}

// addParity adds data segment i of a stripe (padded to the segment size)
// into the stripe's P parity segments.
func addParity(parity [][]byte, i int, d []byte) {
	c := cauchy()
	for k, p := range parity {
		mulAdd(c[k][i], d, p)
	}
}

var errSingular = errors.New("tree: singular system (cannot happen with a Cauchy matrix)")

// invert inverts the e×e matrix a over GF(2^8) in place (Gauss–Jordan).
func invert(a [][]byte) error {
	f := gf8()
	e := len(a)
	inv := make([][]byte, e)
	for r := range inv {
		inv[r] = make([]byte, e)
		inv[r][r] = 1
	}
	for col := range e {
		p := -1
		for r := col; r < e; r++ {
			if a[r][col] != 0 {
				p = r
				break
			}
		}
		if p < 0 {
			return errSingular
		}
		a[col], a[p] = a[p], a[col]
		inv[col], inv[p] = inv[p], inv[col]
		s := uint32(f.Inv(uint32(a[col][col])))
		for c := range e {
			a[col][c] = byte(f.Mul(uint32(a[col][c]), s))
			inv[col][c] = byte(f.Mul(uint32(inv[col][c]), s))
		}
		for r := range e {
			if r == col || a[r][col] == 0 {
				continue
			}
			m := uint32(a[r][col])
			for c := range e {
				a[r][c] ^= byte(f.Mul(m, uint32(a[col][c])))
				inv[r][c] ^= byte(f.Mul(m, uint32(inv[col][c])))
			}
		}
	}
	copy(a, inv)
	return nil
}

// solveStripe rebuilds the lost data segments of one stripe. data holds
// its W data segments (each padded to the segment size; the lost ones are
// overwritten), lost their indices, parity its P parity segments, nil
// where damaged. It needs as many intact parity segments as lost ones.
func solveStripe(data [][]byte, lost []int, parity [][]byte) error {
	var rows []int
	for k, p := range parity {
		if p != nil && len(rows) < len(lost) {
			rows = append(rows, k)
		}
	}
	if len(rows) < len(lost) {
		return fmt.Errorf("%w: %d lost, %d intact parity segments", ErrTooManyFaults, len(lost), len(rows))
	}
	if len(lost) == 0 {
		return nil
	}
	return solveRange(data, lost, parity, rows, 0, len(data[0]))
}

// solveRange rebuilds bytes [c0, c1) of the lost data segments from the
// parity rows given, one per lost segment, each intact over the range:
// every byte position is a codeword of its own, so a range can be solved
// with rows that are damaged elsewhere.
func solveRange(data [][]byte, lost []int, parity [][]byte, rows []int, c0, c1 int) error {
	e := len(lost)
	if e == 0 {
		return nil
	}
	if len(rows) != e {
		return fmt.Errorf("%w: %d lost, %d parity rows", ErrTooManyFaults, e, len(rows))
	}
	isLost := make([]bool, len(data))
	for _, i := range lost {
		isLost[i] = true
	}
	c := cauchy()
	// Syndromes: what the lost segments contribute to each parity row used.
	syn := make([][]byte, e)
	for a, k := range rows {
		syn[a] = append([]byte(nil), parity[k][c0:c1]...)
		for i, d := range data {
			if !isLost[i] {
				mulAdd(c[k][i], d[c0:c1], syn[a])
			}
		}
	}
	m := make([][]byte, e)
	for a, k := range rows {
		m[a] = make([]byte, e)
		for b, i := range lost {
			m[a][b] = c[k][i]
		}
	}
	if err := invert(m); err != nil {
		return err
	}
	for b, i := range lost {
		clear(data[i][c0:c1])
		for a := range e {
			mulAdd(m[b][a], syn[a], data[i][c0:c1])
		}
	}
	return nil
}
