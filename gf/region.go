package gf

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/reedsolomon"
)

// Region operations multiply every element of a byte slice by one constant,
// the inner loop of erasure coding and of checksums over whole buffers.
//
// Elements are packed in the smallest whole number of bytes that holds w
// bits: one byte for w ≤ 8, two for w ≤ 16, four above; multi-byte
// elements are little-endian. Bits above w in an element are ignored.
//
// For GF(2^8) on 0x11D the work goes to the SIMD kernels of
// github.com/klauspost/reedsolomon (AVX2/AVX-512/GFNI/NEON, picked at run
// time), which implement this very field. Every other field uses a portable
// loop over split tables: c·v is the XOR of c·(each byte of v at its
// place), so one 256-entry table per byte of the element replaces the
// multiplication by a lookup per byte.

// rsPoly is the polynomial of reedsolomon's GF(2^8) (its generatingPolynomial 29, plus x^8).
const rsPoly = 0x11D

var rsLow reedsolomon.LowLevel

// ElemSize returns the number of bytes an element takes in the region operations.
func (f *Field) ElemSize() int {
	switch {
	case f.w <= 8:
		return 1
	case f.w <= 16:
		return 2
	}
	return 4
}

// MulSlice sets out[i] = c·in[i] for every element of in. It panics if
// len(in) is not a multiple of ElemSize or len(out) < len(in).
func (f *Field) MulSlice(c uint32, in, out []byte) {
	f.checkRegion("MulSlice", in, out)
	if f.w == 8 && f.poly == rsPoly {
		rsLow.GalMulSlice(byte(c), in, out)
		return
	}
	f.region(c, in, out, false)
}

// MulSliceXor adds c·in[i] into out[i] (out[i] ^= c·in[i]) for every element
// of in. It panics if len(in) is not a multiple of ElemSize or len(out) < len(in).
func (f *Field) MulSliceXor(c uint32, in, out []byte) {
	f.checkRegion("MulSliceXor", in, out)
	if f.w == 8 && f.poly == rsPoly {
		rsLow.GalMulSliceXor(byte(c), in, out)
		return
	}
	f.region(c, in, out, true)
}

func (f *Field) checkRegion(op string, in, out []byte) {
	if len(in)%f.ElemSize() != 0 {
		panic(fmt.Sprintf("gf: %s: len(in)=%d is not a multiple of the %d-byte element of GF(2^%d)",
			op, len(in), f.ElemSize(), f.w))
	}
	if len(out) < len(in) {
		panic(fmt.Sprintf("gf: %s: len(out)=%d < len(in)=%d", op, len(out), len(in)))
	}
}

// regionTableMin is the element count below which building the split
// tables (256 multiplications per element byte) costs more than it saves.
const regionTableMin = 512

// region is the portable MulSlice/MulSliceXor.
func (f *Field) region(c uint32, in, out []byte, xor bool) {
	mask := uint32(f.order)
	size := f.ElemSize()
	n := len(in) / size
	if n < regionTableMin {
		for i := range n {
			p := f.Mul(c, loadElem(in[i*size:], size)&mask)
			if xor {
				p ^= loadElem(out[i*size:], size)
			}
			storeElem(out[i*size:], size, p)
		}
		return
	}
	switch size {
	case 1:
		var t [256]byte
		for b := range 256 {
			t[b] = byte(f.Mul(c, uint32(b)&mask))
		}
		out = out[:len(in)]
		if xor {
			for i, v := range in {
				out[i] ^= t[v]
			}
		} else {
			for i, v := range in {
				out[i] = t[v]
			}
		}
	case 2:
		var t [2][256]uint16
		for k := range 2 {
			for b := range 256 {
				t[k][b] = uint16(f.Mul(c, uint32(b)<<(8*k)&mask))
			}
		}
		for i := 0; i+2 <= len(in); i += 2 {
			p := t[0][in[i]] ^ t[1][in[i+1]]
			if xor {
				p ^= binary.LittleEndian.Uint16(out[i:])
			}
			binary.LittleEndian.PutUint16(out[i:], p)
		}
	default:
		t := new([4][256]uint32)
		for k := range 4 {
			for b := range 256 {
				t[k][b] = f.Mul(c, uint32(b)<<(8*k)&mask)
			}
		}
		for i := 0; i+4 <= len(in); i += 4 {
			p := t[0][in[i]] ^ t[1][in[i+1]] ^ t[2][in[i+2]] ^ t[3][in[i+3]]
			if xor {
				p ^= binary.LittleEndian.Uint32(out[i:])
			}
			binary.LittleEndian.PutUint32(out[i:], p)
		}
	}
}

func loadElem(b []byte, size int) uint32 {
	switch size {
	case 1:
		return uint32(b[0])
	case 2:
		return uint32(binary.LittleEndian.Uint16(b))
	}
	return binary.LittleEndian.Uint32(b)
}

func storeElem(b []byte, size int, v uint32) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	default:
		binary.LittleEndian.PutUint32(b, v)
	}
}
