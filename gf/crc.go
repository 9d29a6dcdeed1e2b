package gf

import (
	"fmt"
	"math/bits"
)

// CRC is the algebra of one CRC, in the parameters of Williams' Rocksoft
// model: how the CRCs of two pieces give the CRC of their concatenation,
// and the CRC of k copies of a piece, without the data. It does not
// compute CRCs of data (hash/crc32, hash/crc64 and table loops do that).
//
// With r the CRC register before the final reflection and XOR,
//
//	r(A‖B) = (r(A) + init)·x^(8|B|) + r(B)   (mod p),
//
// because the register is linear in its initial value and in the data:
// zlib's crc32_combine, generalized to any init and xorout. x^(8n) is a
// product over the bits of n of precomputed powers (Ring.XPow), so Combine
// costs O(log n) multiplications, and Repeat doubles the block while it
// squares the power, O(log k).
type CRC struct {
	ring   *Ring
	w      uint
	mask   uint64
	init   uint64 // the register's initial value, unreflected as the model gives it
	xorout uint64
	ref    bool // reflected input and output (refin = refout)
}

// NewCRC returns the algebra of the CRC of width w (1 to 64) with
// generator poly (its x^w term implicit), initial register init, final XOR
// xorout, and reflected input and output if reflected. Models with refin ≠
// refout are rare and not supported.
func NewCRC(w uint, poly, init, xorout uint64, reflected bool) (*CRC, error) {
	r, err := NewRing(w, poly)
	if err != nil {
		return nil, err
	}
	mask := ^uint64(0) >> (64 - w)
	if init&^mask != 0 || xorout&^mask != 0 {
		return nil, fmt.Errorf("gf: CRC init %#x or xorout %#x wider than %d bits", init, xorout, w)
	}
	return &CRC{ring: r, w: w, mask: mask, init: init, xorout: xorout, ref: reflected}, nil
}

// W returns the width of the CRC.
func (c *CRC) W() uint { return c.w }

// Value returns the published CRC of a register.
func (c *CRC) Value(reg uint64) uint64 {
	if c.ref {
		reg = bits.Reverse64(reg) >> (64 - c.w)
	}
	return reg ^ c.xorout
}

// Register returns the register that yields a published CRC value: the
// inverse of Value.
func (c *CRC) Register(value uint64) uint64 {
	r := (value ^ c.xorout) & c.mask
	if c.ref {
		r = bits.Reverse64(r) >> (64 - c.w)
	}
	return r
}

// Init returns the initial register.
func (c *CRC) Init() uint64 { return c.init }

// Empty returns the CRC of no data.
func (c *CRC) Empty() uint64 { return c.Value(c.init) }

// Ring returns the polynomial ring of the CRC.
func (c *CRC) Ring() *Ring { return c.ring }

// Shift returns x^(8n) mod p, the factor that moves a register past n bytes.
func (c *CRC) Shift(n uint64) uint64 {
	p := c.ring.XPow(n) // (x^n)^8: n may be up to 2^64-1, 8n would overflow
	p = c.ring.Mul(p, p)
	p = c.ring.Mul(p, p)
	return c.ring.Mul(p, p)
}

// Combine returns the CRC of A‖B from the CRCs of A and B and the length
// of B in bytes.
func (c *CRC) Combine(a, b, lenB uint64) uint64 {
	ra := c.ring.Mul(c.Register(a)^c.init, c.Shift(lenB))
	return c.Value(ra ^ c.Register(b))
}

// Repeat returns the CRC of k copies of A from the CRC of A and its length
// in bytes; k = 0 gives Empty.
func (c *CRC) Repeat(a, lenA, k uint64) uint64 {
	acc := c.init        // register of the copies so far (none)
	blk := c.Register(a) // register of the current block of 2^i copies
	pow := c.Shift(lenA) // x^(8·|block|)
	for k != 0 {
		if k&1 == 1 {
			acc = c.ring.Mul(acc^c.init, pow) ^ blk
		}
		k >>= 1
		if k == 0 {
			break
		}
		blk = c.ring.Mul(blk^c.init, pow) ^ blk
		pow = c.ring.Mul(pow, pow)
	}
	return c.Value(acc)
}
