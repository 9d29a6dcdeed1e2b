package sig

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Rule is how two type signatures must relate for a transfer to be correct.
type Rule uint8

const (
	// PointToPoint: the sender's type signature must equal the first
	// elements of the receiver's (a receive may be posted larger).
	PointToPoint Rule = iota
	// Collective: the signatures must be equal.
	Collective
)

func (r Rule) String() string {
	if r == Collective {
		return "collective"
	}
	return "point-to-point"
}

// Class says which matching rule a (datatype, count) falls under.
type Class uint8

const (
	// Typed data is matched element by element.
	Typed Class = iota
	// Bytes data is all Byte elements: it matches any data of a fitting size
	// ("MPI_BYTE matches any byte of storage").
	Bytes
	// PackedData is all Packed elements: it matches any data of a fitting
	// size (what MPI_Pack wrote, unpacked by the receiver).
	PackedData
)

var classNames = [...]string{"typed", "bytes", "packed"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

func classOf(t *Datatype) Class {
	switch {
	case t.packedOnly:
		return PackedData
	case t.byteOnly:
		return Bytes
	}
	return Typed
}

// Errors of matching. A *MismatchError wraps ErrMismatch, and also
// ErrTruncated when the receive side is too short for the message
// (MPI_ERR_TRUNCATE).
var (
	ErrMismatch  = errors.New("sig: type signatures do not match")
	ErrTruncated = errors.New("sig: message longer than the receive buffer")
)

// Stamp is what a sender attaches to a message so that the receiver can
// check it against its own datatype without seeing the sender's: the
// signature, the size in bytes (for the Byte and Packed rules) and the class.
type Stamp struct {
	Sig   Sig
	Bytes uint64
	Class Class
}

// NewStamp returns the stamp of count copies of t in alg.
func NewStamp(alg Algebra, t *Datatype, count uint64) (Stamp, error) {
	s, err := Of(alg, t, count)
	if err != nil {
		return Stamp{}, err
	}
	bytes, err := byteSize(t, count)
	if err != nil {
		return Stamp{}, err
	}
	c := Typed // no elements: nothing to relax
	if count > 0 {
		c = classOf(t)
	}
	return Stamp{Sig: s, Bytes: bytes, Class: c}, nil
}

func byteSize(t *Datatype, count uint64) (uint64, error) {
	if t.size < 0 {
		return 0, fmt.Errorf("%w: negative size %d", ErrDatatype, t.size)
	}
	n := uint64(t.size) * count
	if t.size != 0 && n/uint64(t.size) != count {
		return 0, fmt.Errorf("%w: %d copies of %d bytes exceed 2^64-1", ErrTooLarge, count, t.size)
	}
	return n, nil
}

// Check checks a message with this stamp against count copies of recv by
// rule. It returns nil, or a *MismatchError that says how the sizes or
// signatures differ; it cannot say where, since it does not have the
// sender's datatype (Match, which has both, can). The two sides must use
// the same algebra.
func (s Stamp) Check(alg Algebra, recv *Datatype, count uint64, rule Rule) error {
	rs, err := NewStamp(alg, recv, count)
	if err != nil {
		return err
	}
	e := &MismatchError{
		Rule: rule, Index: -1,
		SendElems: s.Sig.Count, RecvElems: rs.Sig.Count,
		SendBytes: s.Bytes, RecvBytes: rs.Bytes,
	}
	if s.Class != Typed || rs.Class != Typed {
		e.BySize = true
		if s.Bytes == rs.Bytes || rule == PointToPoint && s.Bytes < rs.Bytes {
			return nil
		}
		e.Truncated = s.Bytes > rs.Bytes
		return e
	}
	switch {
	case rule == Collective && s.Sig.Count != rs.Sig.Count:
		e.Truncated = s.Sig.Count > rs.Sig.Count
		return e
	case s.Sig.Count > rs.Sig.Count:
		e.Truncated = true
		return e
	}
	p := rs.Sig
	if s.Sig.Count < p.Count {
		p, err = Prefix(alg, recv, count, s.Sig.Count)
		if err != nil {
			return err
		}
	}
	if p != s.Sig {
		return e
	}
	return nil
}

// Binary form of a Stamp: version, class, bytes (LE uint64), then the Sig's
// own binary form.
const (
	stampVersion = 1
	StampSize    = 2 + 8 + SigSize
)

// AppendBinary appends the binary form of s to b.
func (s Stamp) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, stampVersion, byte(s.Class))
	b = binary.LittleEndian.AppendUint64(b, s.Bytes)
	return s.Sig.AppendBinary(b)
}

// MarshalBinary returns the binary form of s (StampSize bytes).
func (s Stamp) MarshalBinary() ([]byte, error) { return s.AppendBinary(make([]byte, 0, StampSize)) }

// UnmarshalBinary decodes exactly one Stamp from data.
func (s *Stamp) UnmarshalBinary(data []byte) error {
	if len(data) < StampSize {
		return fmt.Errorf("%w: stamp needs %d bytes, have %d", ErrShortInput, StampSize, len(data))
	}
	if data[0] != stampVersion {
		return fmt.Errorf("%w: stamp version %d (want %d)", ErrVersion, data[0], stampVersion)
	}
	c := Class(data[1])
	if c > PackedData {
		return fmt.Errorf("sig: stamp: unknown class %d", data[1])
	}
	sg, rest, err := decodeSig(data[10:])
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d bytes", ErrLongInput, len(rest))
	}
	*s = Stamp{Sig: sg, Bytes: binary.LittleEndian.Uint64(data[2:]), Class: c}
	return nil
}

// MismatchError describes a transfer whose type signatures do not match.
type MismatchError struct {
	Rule Rule
	// BySize is set when Byte or Packed data made the sizes decide.
	BySize bool
	// Truncated is set when the receive side is shorter than the message.
	Truncated bool

	SendElems, RecvElems uint64
	SendBytes, RecvBytes uint64

	// Index is the zero-based position of the first element that differs,
	// or -1 when it is not known (Stamp.Check, or BySize).
	Index int64
	// Send and Recv are the elements at Index; a side that ends before
	// Index has Type nil.
	Send, Recv Element
	// SendMap and RecvMap show the type maps around Index.
	SendMap, RecvMap string
}

func (e *MismatchError) Error() string {
	var b strings.Builder
	switch {
	case e.BySize:
		fmt.Fprintf(&b, "sig: %s size mismatch: message has %d bytes, receive side %d (byte or packed data is matched by size)",
			e.Rule, e.SendBytes, e.RecvBytes)
	case e.Index < 0 && e.Truncated:
		fmt.Fprintf(&b, "sig: %s mismatch: message has %d elements, receive side only %d", e.Rule, e.SendElems, e.RecvElems)
	case e.Index < 0 && e.SendElems != e.RecvElems && e.Rule == Collective:
		fmt.Fprintf(&b, "sig: collective mismatch: %d elements against %d", e.SendElems, e.RecvElems)
	case e.Index < 0:
		fmt.Fprintf(&b, "sig: %s mismatch: the signatures of the first %d elements differ", e.Rule, e.SendElems)
	default:
		fmt.Fprintf(&b, "sig: %s mismatch at element %d: sender has %s, receiver has %s",
			e.Rule, e.Index, describe(e.Send), describe(e.Recv))
	}
	return b.String()
}

func describe(el Element) string {
	if el.Type == nil {
		return "no element there"
	}
	return fmt.Sprintf("%s (%s, byte %d)", el.Type.Name(), el.Path, el.Disp)
}

func (e *MismatchError) Is(target error) bool {
	return target == ErrMismatch || target == ErrTruncated && e.Truncated
}

// Match checks that a transfer of sendCount copies of send into recvCount
// copies of recv is correct by rule, and if not, returns a *MismatchError
// that says where the first difference is. It decides with alg, which is
// what would cross the wire, and then locates the difference by binary
// search over prefix signatures in a 64-bit algebra (so that a collision
// in a narrow alg cannot mislead the search), never by expanding the types.
func Match(alg Algebra, send *Datatype, sendCount uint64, recv *Datatype, recvCount uint64, rule Rule) error {
	st, err := NewStamp(alg, send, sendCount)
	if err != nil {
		return err
	}
	err = st.Check(alg, recv, recvCount, rule)
	var e *MismatchError
	if !errors.As(err, &e) || e.BySize {
		return err
	}
	locate(e, send, sendCount, recv, recvCount)
	return e
}

// locate fills in where two type signatures first differ.
func locate(e *MismatchError, send *Datatype, sc uint64, recv *Datatype, rc uint64) {
	strong := locateAlgebra()
	n := min(e.SendElems, e.RecvElems)
	// Invariant: the first lo elements agree; the first hi do not (or hi is
	// the end of the shorter side, and the difference is in the lengths).
	lo, hi := uint64(0), n
	full := func(k uint64) bool {
		a, _ := Prefix(strong, send, sc, k)
		b, _ := Prefix(strong, recv, rc, k)
		return a == b
	}
	if full(n) {
		lo = n
	} else {
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if full(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	// Element lo is the first that differs (lo = n: one side ends there).
	e.Index = int64(lo)
	e.Send, _ = ElementAt(send, sc, lo)
	e.Recv, _ = ElementAt(recv, rc, lo)
	if lo < n && e.Send.Type == e.Recv.Type {
		// Only a 64-bit collision in the search can get here.
		e.Index = -1
		e.Send, e.Recv = Element{}, Element{}
		return
	}
	from := lo - min(lo, 4)
	e.SendMap = TypeMap(send, sc, from, lo, 6)
	e.RecvMap = TypeMap(recv, rc, from, lo, 6)
}

func locateAlgebra() Algebra {
	a, err := ParseAlgebra("gfd:w=16,m=4")
	if err != nil {
		panic(err)
	}
	return a
}
