package sig

import (
	"math/bits"

	"github.com/sigcheck/sigcheck/gf"
)

// CRC signatures (Langou et al. §3.5) treat each basic element as one byte
// — the low byte of its type's code — so the signature of elements whose
// codes are bytes is exactly the catalogue CRC of those bytes.
//
// The paper concatenates CRCs in time proportional to the second part.
// Here Concat and Repeat are O(log n), by the combination rule of gf.CRC
// (zlib's crc32_combine, for any init and xorout).

// crcModel is a CRC in the parameters of Williams' Rocksoft model, as the
// CRC RevEng catalogue lists them.
type crcModel struct {
	name    string
	aliases []string
	w       uint
	poly    uint64
	init    uint64
	ref     bool // refin and refout (all the models here have them equal)
	xorout  uint64
	check   uint64 // the CRC of the ASCII bytes "123456789"
	// vanish: runs of any one element whose length is a multiple of it
	// all have one CRC (x^(8·vanish) ≡ 1 modulo the part of p that
	// matters); TestDescribe checks it.
	vanish uint64
}

// crcModels: parameters and check values from the CRC RevEng catalogue
// (Greg Cook, "Catalogue of parametrised CRC algorithms",
// reveng.sourceforge.io/crc-catalogue).
var crcModels = []crcModel{
	{"crc16-ccitt-false", []string{"crc-16/ccitt-false", "crc-16/ibm-3740", "crc16"}, 16, 0x1021, 0xFFFF, false, 0, 0x29B1, 65534},
	{"crc16-xmodem", []string{"crc-16/xmodem"}, 16, 0x1021, 0, false, 0, 0x31C3, 65534},
	{"crc16-arc", []string{"crc-16/arc"}, 16, 0x8005, 0, true, 0, 0xBB3D, 65534},
	{"crc32", []string{"crc-32", "crc-32/iso-hdlc"}, 32, 0x04C11DB7, 0xFFFFFFFF, true, 0xFFFFFFFF, 0xCBF43926, 1<<32 - 1},
	{"crc32-bzip2", []string{"crc-32/bzip2"}, 32, 0x04C11DB7, 0xFFFFFFFF, false, 0xFFFFFFFF, 0xFC891918, 1<<32 - 1},
	{"crc32c", []string{"crc-32c", "crc-32/iscsi"}, 32, 0x1EDC6F41, 0xFFFFFFFF, true, 0xFFFFFFFF, 0xE3069283, 1<<32 - 2},
}

type crcAlg struct {
	crcModel
	math *gf.CRC // Empty, Concat and Repeat
	mask uint64
	// tables[k][v] = v(x)·x^(w+8k) mod p. tables[0] is the classic
	// MSB-first byte step; all four fold four bytes at once ("slicing by
	// four"), which takes the dependency chain from one table lookup per
	// element to one per four.
	tables [4][256]uint64
}

func newCRC(m crcModel) *crcAlg {
	math, err := gf.NewCRC(m.w, m.poly, m.init, m.xorout, m.ref)
	if err != nil {
		panic("sig: bad CRC model " + m.name + ": " + err.Error())
	}
	ring := math.Ring()
	c := &crcAlg{crcModel: m, math: math, mask: ^uint64(0) >> (64 - m.w)}
	xw := ring.XPow(uint64(m.w)) // x^w mod p
	for k := range 4 {
		base := ring.Mul(xw, ring.XPow(uint64(8*k)))
		for v := range uint64(256) {
			// v(x)·base, bit by bit (v has 8 bits; each x^i·base is a ring product).
			var acc uint64
			for i := range 8 {
				if v>>i&1 == 1 {
					acc ^= ring.Mul(base, ring.XPow(uint64(i)))
				}
			}
			c.tables[k][v] = acc
		}
	}
	return c
}

func (c *crcAlg) String() string { return c.name }
func (c *crcAlg) Bits() int      { return int(c.w) }

func (c *crcAlg) update(reg uint64, b byte) uint64 {
	if c.ref {
		b = bits.Reverse8(b)
	}
	return reg<<8&c.mask ^ c.tables[0][byte(reg>>(c.w-8))^b]
}

func (c *crcAlg) Empty() Sig { return Sig{Value: c.math.Empty()} }

func (c *crcAlg) Basic(code uint64) Sig {
	return Sig{Value: c.math.Value(c.update(c.math.Init(), byte(code))), Count: 1}
}

func (c *crcAlg) Concat(a, b Sig) Sig {
	return Sig{Value: c.math.Combine(a.Value, b.Value, b.Count), Count: addCounts(a.Count, b.Count)}
}

func (c *crcAlg) Repeat(a Sig, k uint64) Sig {
	return Sig{Value: c.math.Repeat(a.Value, a.Count, k), Count: mulCount(a.Count, k)}
}

func (c *crcAlg) Append(s Sig, codes ...uint64) Sig {
	n := addCounts(s.Count, uint64(len(codes)))
	r := c.math.Register(s.Value)
	t := &c.tables
	for len(codes) >= 4 {
		// (r·x^32 + D)·x^w mod p for the 32-bit polynomial D of four
		// elements: fold r into the top of D, then each byte has its table.
		x := r<<(32-c.w) ^ uint64(c.in(codes[0]))<<24 ^ uint64(c.in(codes[1]))<<16 ^
			uint64(c.in(codes[2]))<<8 ^ uint64(c.in(codes[3]))
		r = t[3][x>>24&0xff] ^ t[2][x>>16&0xff] ^ t[1][x>>8&0xff] ^ t[0][x&0xff]
		codes = codes[4:]
	}
	for _, code := range codes {
		r = c.update(r, byte(code))
	}
	return Sig{Value: c.math.Value(r), Count: n}
}

// in returns the element byte of a code as the register sees it: the low
// byte, bit-reversed for reflected CRCs.
func (c *crcAlg) in(code uint64) byte {
	if c.ref {
		return bits.Reverse8(byte(code))
	}
	return byte(code)
}

// checkValue returns the CRC of "123456789" computed through Append, for
// comparison with the catalogue's check value.
func (c *crcAlg) checkValue() uint64 {
	codes := make([]uint64, 9)
	for i := range codes {
		codes[i] = uint64('1' + i)
	}
	return c.Append(c.Empty(), codes...).Value
}
