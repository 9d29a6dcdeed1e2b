package manifest

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/klauspost/reedsolomon"

	"github.com/sigcheck/sigcheck/gf"
)

// A code is the parity's erasure code: how the data segments of a stripe
// make its parity segments, and how lost data segments come back from
// the rest. Every byte position (every 64-byte group for Leopard) is a
// codeword of its own, so both work on any aligned range of the segments
// alike: a stripe is encoded and rebuilt a column at a time, and a damaged
// chunk of parity costs only the columns it covers.
type code interface {
	name() string
	// fits says whether a stripe of width data segments and parity
	// parity segments is one codeword.
	fits(width, parity int) error
	// shardSize returns the bytes of a parity segment for segments of
	// segment bytes; columns start at multiples of align.
	shardSize(segment int) int
	align() int
	// chunkSize returns the bytes of parity per checksum for n parity
	// segments of shard bytes.
	chunkSize(n int64, shard int) int
	// encode sets parity (all of the stripe's rows) from data, slices of
	// one length.
	encode(data, parity [][]byte) error
	// rebuild sets data[k] for each k of lost from the other data and the
	// parity rows named by rows (at least len(lost) of them; the others
	// may be nil).
	rebuild(data [][]byte, lost []int, parity [][]byte, rows []int) error
}

// codeLeopard16 is version 3's code: Leopard's Reed–Solomon code over
// GF(2^16) (klauspost/reedsolomon's WithLeopardGF16), whose encoding and
// decoding cost O(n log n) per byte column, so that a stripe can hold tens
// of thousands of segments and any of them be rebuilt: what par2 does
// with one code over the whole set, without its cost of a multiply-add
// per data block and recovery block.
type codeLeopard16 struct{}

// codeLeopard16ID is its number in the main block.
const codeLeopard16ID = 1

func (codeLeopard16) name() string { return "Leopard GF(2^16)" }

// maxShards is the field's order: data and parity segments of a stripe.
const maxShards = 1 << 16

func (codeLeopard16) fits(width, parity int) error {
	if width < 1 || parity < 1 || width+parity > maxShards {
		return fmt.Errorf("a stripe of %d data and %d parity segments: at most %d in all", width, parity, maxShards)
	}
	// Leopard rounds the parity up to a power of two, m, and needs the
	// data rounded up to a multiple of m, plus m, to fit the field.
	m := 1 << bits.Len(uint(parity-1))
	if (width+m-1)/m*m+m > maxShards {
		return fmt.Errorf("a stripe of %d data and %d parity segments does not fit Leopard's GF(2^16) code", width, parity)
	}
	return nil
}

func (codeLeopard16) shardSize(segment int) int { return (segment + 63) / 64 * 64 }
func (codeLeopard16) align() int                { return 64 }

func (codeLeopard16) chunkSize(n int64, shard int) int {
	c := 1024
	for n*int64((shard+c-1)/c) > maxSums && c < shard {
		c *= 2
	}
	return c
}

// leopards caches encoders by shape: a set's stripes have at most two
// widths.
var leopards sync.Map // [2]int{data, parity} → reedsolomon.Encoder

func leopard(data, parity int) (reedsolomon.Encoder, error) {
	key := [2]int{data, parity}
	if e, ok := leopards.Load(key); ok {
		return e.(reedsolomon.Encoder), nil
	}
	e, err := reedsolomon.New(data, parity, reedsolomon.WithLeopardGF16(true))
	if err != nil {
		return nil, fmt.Errorf("manifest: a code of %d+%d segments: %w", data, parity, err)
	}
	leopards.Store(key, e)
	return e, nil
}

func (codeLeopard16) encode(data, parity [][]byte) error {
	enc, err := leopard(len(data), len(parity))
	if err != nil {
		return err
	}
	shards := headers(len(data) + len(parity))
	defer putHeaders(shards)
	copy(*shards, data)
	copy((*shards)[len(data):], parity)
	return enc.Encode(*shards)
}

// headers lends a slice of n slice headers, for the shards of one call:
// a stripe of 65536 segments takes 1.5 MiB of them, a call a column.
func headers(n int) *[][]byte {
	p, _ := headerPool.Get().(*[][]byte)
	if p == nil || cap(*p) < n {
		s := make([][]byte, n)
		return &s
	}
	*p = (*p)[:n]
	return p
}

func putHeaders(p *[][]byte) {
	clear(*p)
	headerPool.Put(p)
}

var headerPool sync.Pool

// rebuild rebuilds the lost data segments. Leopard's decoder costs the
// same whatever the number lost: O(n log n) over the whole stripe, n the
// power of two above its segments. For a few lost segments of a wide
// stripe, solving for them costs less: encoding the stripe with them
// zeroed (O(n log m), m the power of two above the parity) leaves, in each
// parity row, what they contributed, and an e×e system over GF(2^16)
// gives them back with e² multiply-adds a byte.
func (c codeLeopard16) rebuild(data [][]byte, lost []int, parity [][]byte, rows []int) error {
	if len(lost) == 0 {
		return nil
	}
	if len(rows) < len(lost) {
		return fmt.Errorf("%w: %d lost, %d parity rows", ErrTooManyFaults, len(lost), len(rows))
	}
	enc, err := leopard(len(data), len(parity))
	if err != nil {
		return err
	}
	if e := len(lost); e <= maxSolved && e*e <= len(data) {
		return c.solve(enc, data, lost, parity, rows[:e])
	}
	hs := headers(len(data) + len(parity))
	defer putHeaders(hs)
	shards := *hs
	copy(shards, data)
	for _, k := range lost {
		shards[k] = data[k][:0] // rebuilt in place: its capacity is reused
	}
	for _, r := range rows {
		shards[len(data)+r] = parity[r]
	}
	if err := enc.ReconstructData(shards); err != nil {
		return fmt.Errorf("manifest: rebuilding %d segments: %w", len(lost), err)
	}
	for _, k := range lost {
		if &shards[k][0] != &data[k][0] {
			copy(data[k], shards[k]) // reedsolomon allocated after all
		}
	}
	return nil
}

// maxSolved bounds the lost segments solved for as a system (its
// inversion costs e³ multiplications).
const maxSolved = 128

// solve rebuilds the lost segments from e parity rows by their syndromes.
// The parity slots are overwritten.
func (codeLeopard16) solve(enc reedsolomon.Encoder, data [][]byte, lost []int, parity [][]byte, rows []int) error {
	e, n := len(lost), len(data[0])
	syn := make([][]byte, e)
	for a, r := range rows {
		syn[a] = append([]byte(nil), parity[r]...)
	}
	for _, k := range lost {
		clear(data[k])
	}
	hs := headers(len(data) + len(parity))
	copy(*hs, data)
	copy((*hs)[len(data):], parity)
	err := enc.Encode(*hs)
	putHeaders(hs)
	if err != nil {
		return err
	}
	for a, r := range rows {
		xorInto(syn[a], parity[r])
	}
	// The coefficients of the lost segments in the rows: the parity of the
	// identity at one symbol of each lost segment, zero elsewhere.
	chunks := (e + 31) / 32
	unit := make([][]byte, len(data)+len(parity))
	for k := range unit {
		unit[k] = make([]byte, 64*chunks)
	}
	one := gf16One()
	for b, k := range lost {
		unit[k][b/32*64+b%32] = byte(one)
		unit[k][b/32*64+32+b%32] = byte(one >> 8)
	}
	if err := enc.Encode(unit); err != nil {
		return err
	}
	a := make([][]uint16, e)
	for x, r := range rows {
		a[x] = make([]uint16, e)
		p := unit[len(data)+r]
		for b := range lost {
			a[x][b] = uint16(p[b/32*64+b%32]) | uint16(p[b/32*64+32+b%32])<<8
		}
	}
	inv, err := invert(a, gf16One(), lowLevel.GF16Mul, gf16Inv)
	if err != nil {
		return err
	}
	for b, k := range lost {
		out := data[k][:n]
		for x := range e {
			lowLevel.GF16MulSliceXor(inv[b][x], syn[x], out)
		}
	}
	return nil
}

func xorInto(dst, src []byte) {
	for i := range dst {
		dst[i] ^= src[i]
	}
}

// gf16One is the multiplicative identity of Leopard's GF(2^16), in its
// representation (a Cantor basis, where 1 is not 0x0001).
var gf16One = sync.OnceValue(func() uint16 {
	for x := uint16(1); x != 0; x++ {
		if lowLevel.GF16Mul(x, 0x1234) == 0x1234 && lowLevel.GF16Mul(x, 0xbeef) == 0xbeef {
			return x
		}
	}
	panic("manifest: GF(2^16) has no identity") // cannot happen
})

// gf16Inv returns 1/x, x^(2^16-2).
func gf16Inv(x uint16) uint16 {
	r, p := gf16One(), x
	for e := uint32(1<<16 - 2); e > 0; e >>= 1 {
		if e&1 == 1 {
			r = lowLevel.GF16Mul(r, p)
		}
		p = lowLevel.GF16Mul(p, p)
	}
	return r
}

// invert inverts a square matrix over a field of characteristic 2 (its
// sum is XOR), given its identity, product and inverse (Gauss–Jordan). a
// is consumed. The two codes' fields share it: GF(2^8) and Leopard's
// GF(2^16).
func invert[T uint8 | uint16](a [][]T, one T, mul func(x, y T) T, inverse func(T) T) ([][]T, error) {
	e := len(a)
	inv := make([][]T, e)
	for r := range inv {
		inv[r] = make([]T, e)
		inv[r][r] = one
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
			return nil, errSingular
		}
		a[col], a[p] = a[p], a[col]
		inv[col], inv[p] = inv[p], inv[col]
		s := inverse(a[col][col])
		for c := range e {
			a[col][c] = mul(a[col][c], s)
			inv[col][c] = mul(inv[col][c], s)
		}
		for r := range e {
			if r == col || a[r][col] == 0 {
				continue
			}
			m := a[r][col]
			for c := range e {
				a[r][c] ^= mul(m, a[col][c])
				inv[r][c] ^= mul(m, inv[col][c])
			}
		}
	}
	return inv, nil
}

// codeCauchy8 is version 2's code, kept to read and repair manifests made
// before version 3: a systematic Reed–Solomon code over GF(2^8) whose
// parity rows form a Cauchy matrix. Parity segment k of a stripe is
// Σ_i C[k][i]·d_i with C[k][i] = 1/(x_k + y_i), x_k = 255-k and y_i = i
// (the data segments are i < 256-P, the parity rows k < P, so no x equals
// a y). Every square submatrix of a Cauchy matrix is invertible, so any
// e ≤ P lost data segments of a stripe come back from any e intact parity
// segments by solving an e×e system. The field is klauspost/reedsolomon's
// (polynomial 0x11D), whose SIMD kernels do the multiply-adds.
type codeCauchy8 struct{}

// maxParity8 bounds version 2's parity segments per stripe.
const maxParity8 = 128

func (codeCauchy8) name() string { return "Cauchy GF(2^8)" }

func (codeCauchy8) fits(width, parity int) error {
	if width < 1 || parity < 1 || parity > maxParity8 || width+parity > 256 {
		return fmt.Errorf("a stripe of %d data and %d parity segments: version 2 takes at most %d parity, 256 in all", width, parity, maxParity8)
	}
	return nil
}

func (codeCauchy8) shardSize(segment int) int        { return segment }
func (codeCauchy8) align() int                       { return 1 }
func (codeCauchy8) chunkSize(n int64, shard int) int { return 1024 }

var gf8 = sync.OnceValue(func() *gf.Field {
	f, err := gf.New(8, 0x11D)
	if err != nil {
		panic(err) // a constant polynomial: cannot happen
	}
	return f
})

// cauchy[k][i] is C[k][i].
var cauchy = sync.OnceValue(func() *[maxParity8][256]byte {
	var c [maxParity8][256]byte
	f := gf8()
	for k := range maxParity8 {
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

func (codeCauchy8) encode(data, parity [][]byte) error {
	c := cauchy()
	for _, p := range parity {
		clear(p)
	}
	for i, d := range data {
		for k, p := range parity {
			mulAdd(c[k][i], d, p)
		}
	}
	return nil
}

var errSingular = errors.New("manifest: singular system (cannot happen with an MDS code)")

// mul8 and inv8 are GF(2^8)'s product and inverse.
func mul8(x, y byte) byte { return byte(gf8().Mul(uint32(x), uint32(y))) }
func inv8(x byte) byte    { return byte(gf8().Inv(uint32(x))) }

// rebuild solves the e×e system of the first e rows given: the lost
// segments' contributions to each row (its syndrome) are the row less what
// the other segments contribute.
func (codeCauchy8) rebuild(data [][]byte, lost []int, parity [][]byte, rows []int) error {
	e := len(lost)
	if e == 0 {
		return nil
	}
	if len(rows) < e {
		return fmt.Errorf("%w: %d lost, %d parity rows", ErrTooManyFaults, e, len(rows))
	}
	rows = rows[:e]
	isLost := make([]bool, len(data))
	for _, i := range lost {
		isLost[i] = true
	}
	c := cauchy()
	syn := make([][]byte, e)
	for a, k := range rows {
		syn[a] = append([]byte(nil), parity[k]...)
		for i, d := range data {
			if !isLost[i] {
				mulAdd(c[k][i], d, syn[a])
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
	inv, err := invert(m, 1, mul8, inv8)
	if err != nil {
		return err
	}
	for b, i := range lost {
		clear(data[i])
		for a := range e {
			mulAdd(inv[b][a], syn[a], data[i])
		}
	}
	return nil
}
