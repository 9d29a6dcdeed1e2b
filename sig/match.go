package sig

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
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
		fmt.Fprintf(&b, "sig: %s mismatch: message has %s, receive side only %d", e.Rule, elements(e.SendElems), e.RecvElems)
	case e.Index < 0 && e.SendElems != e.RecvElems && e.Rule == Collective:
		fmt.Fprintf(&b, "sig: collective mismatch: %s against %d", elements(e.SendElems), e.RecvElems)
	case e.Index < 0:
		fmt.Fprintf(&b, "sig: %s mismatch: the signatures of the first %s differ", e.Rule, elements(e.SendElems))
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
//
// It binary-searches prefix signatures in the default 64-bit algebra,
// whatever alg decided: a narrow or periodic alg would mislead the search
// (gfd:w=16 sees 65535 ints as 65535 floats; a CRC-16 collides among 7000
// short signatures). The answer is then checked: the elements there must
// differ, an index at the end of the shorter side must come with sides of
// different lengths, and the prefix before it must agree in a second,
// independent algebra (CRC-32C). If any check fails, the search's hash
// collided and an exact walk of the two run-length type maps side by side
// finds the true first difference, at a cost proportional to the runs
// before it. So the index is always inside the shorter signature, or at its
// end when the lengths differ and the first elements agree.
func locate(e *MismatchError, send *Datatype, sc uint64, recv *Datatype, rc uint64) {
	locateWith(locateAlgebra(), e, send, sc, recv, rc)
}

func locateWith(strong Algebra, e *MismatchError, send *Datatype, sc uint64, recv *Datatype, rc uint64) {
	n := min(e.SendElems, e.RecvElems)
	same := func(alg Algebra, k uint64) bool {
		a, _ := Prefix(alg, send, sc, k)
		b, _ := Prefix(alg, recv, rc, k)
		return a == b
	}
	// Invariant: the first lo elements agree; the first hi do not (or hi is
	// the end of the shorter side, and the difference is in the lengths).
	lo, hi := uint64(0), n
	if same(strong, n) {
		lo = n
	} else {
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if same(strong, mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	e.Send, _ = ElementAt(send, sc, lo)
	e.Recv, _ = ElementAt(recv, rc, lo)
	ok := lo == n && e.SendElems != e.RecvElems || lo < n && e.Send.Type != e.Recv.Type
	if ok && lo > 0 {
		ok = same(checkAlgebra(), lo)
	}
	if !ok {
		lo = firstDifference(send, sc, recv, rc)
		e.Send, _ = ElementAt(send, sc, lo)
		e.Recv, _ = ElementAt(recv, rc, lo)
		if lo == n && e.SendElems == e.RecvElems {
			// The type signatures are equal after all: nothing to point at.
			e.Index, e.Send, e.Recv = -1, Element{}, Element{}
			return
		}
	}
	e.Index = int64(lo)
	from := lo - min(lo, 4)
	e.SendMap = TypeMap(send, sc, from, lo, 6)
	e.RecvMap = TypeMap(recv, rc, from, lo, 6)
}

// firstDifference walks the run-length type maps of both sides in step and
// returns the index of the first element whose basic types differ, or the
// length of the shorter side if one is a prefix of the other. It needs no
// hash, so it is the locator's last word; its cost is the number of runs
// before the difference.
func firstDifference(send *Datatype, sc uint64, recv *Datatype, rc uint64) uint64 {
	nextS, stopS := iter.Pull(Runs(send, sc, 0))
	defer stopS()
	nextR, stopR := iter.Pull(Runs(recv, rc, 0))
	defer stopR()
	rs, okS := nextS()
	rr, okR := nextR()
	// Invariant: the current runs overlap, and everything before the later
	// of their starts agrees.
	for okS && okR {
		if rs.Type != rr.Type {
			return max(rs.Index, rr.Index)
		}
		endS, endR := rs.Index+rs.Count, rr.Index+rr.Count
		if endS <= endR {
			rs, okS = nextS()
		}
		if endR <= endS {
			rr, okR = nextR()
		}
	}
	// One side ended and all before agreed: the difference is in the lengths.
	n, _ := total(send, sc)
	m, _ := total(recv, rc)
	return min(n, m)
}

func locateAlgebra() Algebra { return gfd64{} }

func checkAlgebra() Algebra {
	a, err := ParseAlgebra("crc32c")
	if err != nil {
		panic(err)
	}
	return a
}
