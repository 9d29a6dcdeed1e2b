package sig

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Sig is the signature of a type signature: a checksum of the sequence of
// basic types and the number of elements in it. It is a plain value,
// comparable with ==; which algebra made it is up to the caller (a Stamp
// carries it on the wire).
type Sig struct {
	Value uint64 // the checksum, in the low Bits() bits of the algebra
	Count uint64 // number of basic elements
}

func (s Sig) String() string { return fmt.Sprintf("%#x/%d", s.Value, s.Count) }

// Algebra is a way of hashing type signatures such that the hash of a
// concatenation follows from the hashes of the parts (Theorem 1 of Langou
// et al.): σ([X, Y]) = Concat(σ(X), σ(Y)). That is what lets the signature
// of a nested datatype be computed from its description instead of its
// expansion.
//
// Implementations are immutable and safe for concurrent use. Counts must
// stay below 2^64: Concat and Repeat panic if the element count overflows
// (the Datatype functions check first and return an error instead).
type Algebra interface {
	// String returns the canonical spec, which ParseAlgebra accepts.
	String() string
	// Bits is the width of Sig.Value.
	Bits() int
	// Empty is the signature of no elements, the identity of Concat.
	Empty() Sig
	// Basic is the signature of one element of the basic type with this code
	// (see Datatype.Code); each algebra reduces the code to its element.
	Basic(code uint64) Sig
	// Concat is the signature of the elements of a followed by those of b.
	Concat(a, b Sig) Sig
	// Repeat is the signature of n copies of a, one after another.
	Repeat(a Sig, n uint64) Sig
	// Append extends s by one element per code, one at a time: the flat
	// definition that Concat and Repeat must agree with, and the fast way to
	// hash a type signature that is already expanded.
	Append(s Sig, codes ...uint64) Sig
}

// addCounts returns a + b or panics on overflow (see Algebra).
func addCounts(a, b uint64) uint64 {
	s := a + b
	if s < a {
		panic("sig: element count overflows uint64")
	}
	return s
}

// mulCount returns a·n or panics on overflow (see Algebra).
func mulCount(a, n uint64) uint64 {
	hi, lo := bits.Mul64(a, n) // not a/n: a divide costs more than a whole Concat
	if hi != 0 {
		panic("sig: element count overflows uint64")
	}
	return lo
}

// replicate returns m copies of the w-bit value x side by side: the value
// of one element in the algebras that keep m checksums of it.
func replicate(x uint64, w uint, m int) uint64 {
	var v uint64
	for j := range m {
		v |= x << (uint(j) * w)
	}
	return v
}

// The binary form of a Sig: a version byte, then the count and the value
// as little-endian uint64s. Fixed size, so every valid encoding is the
// canonical one.
const (
	sigVersion = 1
	SigSize    = 17 // bytes in the binary form of a Sig
)

// Errors of the binary decoders.
var (
	ErrShortInput = errors.New("sig: input too short")
	ErrVersion    = errors.New("sig: unknown encoding version")
	ErrLongInput  = errors.New("sig: trailing bytes after encoding")
)

// AppendBinary appends the binary form of s to b.
func (s Sig) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, sigVersion)
	b = binary.LittleEndian.AppendUint64(b, s.Count)
	return binary.LittleEndian.AppendUint64(b, s.Value), nil
}

// MarshalBinary returns the binary form of s (SigSize bytes).
func (s Sig) MarshalBinary() ([]byte, error) { return s.AppendBinary(make([]byte, 0, SigSize)) }

// UnmarshalBinary decodes exactly one Sig from data.
func (s *Sig) UnmarshalBinary(data []byte) error {
	v, rest, err := decodeSig(data)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d bytes", ErrLongInput, len(rest))
	}
	*s = v
	return nil
}

func decodeSig(data []byte) (Sig, []byte, error) {
	if len(data) < SigSize {
		return Sig{}, nil, fmt.Errorf("%w: signature needs %d bytes, have %d", ErrShortInput, SigSize, len(data))
	}
	if data[0] != sigVersion {
		return Sig{}, nil, fmt.Errorf("%w: signature version %d (want %d)", ErrVersion, data[0], sigVersion)
	}
	return Sig{
		Count: binary.LittleEndian.Uint64(data[1:]),
		Value: binary.LittleEndian.Uint64(data[9:]),
	}, data[SigSize:], nil
}
