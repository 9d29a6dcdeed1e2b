package sig

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// flatten rebuilds the type signature of count copies of t as a struct of
// single basic elements: the same signature, a different description.
func flatten(t *Datatype, count uint64) *Datatype {
	es := expand(t, count)
	bl := make([]int64, len(es))
	ds := make([]int64, len(es))
	ts := make([]*Datatype, len(es))
	var off int64
	for i, e := range es {
		bl[i], ds[i], ts[i] = 1, off, e.t
		off += e.t.size
	}
	return Must(Struct(bl, ds, ts))
}

type matchCase struct {
	Send, Recv  *Datatype
	SC, RC      uint64
	Description string
}

// matchCaseGen pairs a random send type with a receive type that has the
// same signature, a longer one, a shorter one, or one with an element
// changed, each built differently from the send type.
func matchCaseGen() gopter.Gen {
	return gen.UInt64().Map(func(seed uint64) matchCase {
		r := rand.New(rand.NewPCG(seed, 11))
		var send *Datatype
		var sc uint64
		for {
			send, sc = randType(r, 3), uint64(r.IntN(3))
			if send.elems*sc <= 400 && !send.byteOnly && !send.packedOnly {
				break
			}
		}
		es := expand(send, sc)
		codes := make([]*Datatype, len(es))
		for i, e := range es {
			codes[i] = e.t
		}
		desc := "same"
		switch r.IntN(4) {
		case 1: // longer
			codes = append(codes, someBasics[r.IntN(len(someBasics))])
			desc = "longer"
		case 2: // shorter
			if len(codes) > 0 {
				codes = codes[:r.IntN(len(codes))]
				desc = "shorter"
			}
		case 3: // one element changed
			if len(codes) > 0 {
				i := r.IntN(len(codes))
				codes[i] = []*Datatype{Int, Float, Char}[r.IntN(3)]
				desc = "changed"
			}
		}
		bl := make([]int64, len(codes))
		ds := make([]int64, len(codes))
		var off int64
		for i, c := range codes {
			bl[i], ds[i] = 1, off
			off += c.size
		}
		recv := Must(Struct(bl, ds, codes))
		rc := uint64(1)
		if r.IntN(2) == 0 && len(codes) > 0 {
			// The same signature as a vector over a contiguous type, when it is uniform.
			uniform := true
			for _, c := range codes {
				uniform = uniform && c == codes[0]
			}
			if uniform {
				recv, rc = Must(Vector(int64(len(codes)), 1, 2, codes[0])), 1
			}
		}
		return matchCase{send, recv, sc, rc, desc}
	})
}

// bySize reports whether the Byte/Packed rule decides a case: either side
// is made of Byte or of Packed elements only.
func bySize(c matchCase) bool {
	return c.SC > 0 && classOf(c.Send) != Typed || c.RC > 0 && classOf(c.Recv) != Typed
}

func firstDiff(a, b []elem) int {
	for i := range min(len(a), len(b)) {
		if a[i].t != b[i].t {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestMatchRule(t *testing.T) {
	for _, spec := range []string{DefaultSpec, "crc32c", "gfd:w=8,m=4"} {
		alg := mustAlg(t, spec)
		props := gopter.NewProperties(params(500))
		props.Property(spec+": point-to-point matches iff the message is a prefix of the receive signature", prop.ForAll(func(c matchCase) bool {
			es, er := expand(c.Send, c.SC), expand(c.Recv, c.RC)
			d := firstDiff(es, er)
			wantOK := d == len(es)
			err := Match(alg, c.Send, c.SC, c.Recv, c.RC, PointToPoint)
			if bySize(c) {
				return (err == nil) == (c.Send.size*int64(c.SC) <= c.Recv.size*int64(c.RC))
			}
			if wantOK {
				return err == nil
			}
			var e *MismatchError
			if !errors.As(err, &e) || !errors.Is(err, ErrMismatch) || e.Index != int64(d) {
				return false
			}
			if errors.Is(err, ErrTruncated) != (len(es) > len(er)) {
				return false
			}
			okS := d < len(es) && e.Send.Type == es[d].t && e.Send.Disp == es[d].disp
			okR := d >= len(er) && e.Recv.Type == nil || d < len(er) && e.Recv.Type == er[d].t && e.Recv.Disp == er[d].disp
			return okS && okR && strings.Contains(e.SendMap, "[")
		}, matchCaseGen()))
		props.Property(spec+": collectives match iff the signatures are equal", prop.ForAll(func(c matchCase) bool {
			es, er := expand(c.Send, c.SC), expand(c.Recv, c.RC)
			d := firstDiff(es, er)
			err := Match(alg, c.Send, c.SC, c.Recv, c.RC, Collective)
			if bySize(c) {
				return (err == nil) == (c.Send.size*int64(c.SC) == c.Recv.size*int64(c.RC))
			}
			if d == len(es) && len(es) == len(er) {
				return err == nil
			}
			var e *MismatchError
			return errors.As(err, &e) && e.Index == int64(d) && e.Rule == Collective
		}, matchCaseGen()))
		props.Property(spec+": Stamp.Check agrees with Match, through the wire", prop.ForAll(func(c matchCase) bool {
			st, err := NewStamp(alg, c.Send, c.SC)
			if err != nil {
				return false
			}
			b, _ := st.MarshalBinary()
			var got Stamp
			if got.UnmarshalBinary(b) != nil || got != st {
				return false
			}
			e1 := got.Check(alg, c.Recv, c.RC, PointToPoint)
			e2 := Match(alg, c.Send, c.SC, c.Recv, c.RC, PointToPoint)
			return (e1 == nil) == (e2 == nil) && errors.Is(e1, ErrTruncated) == errors.Is(e2, ErrTruncated)
		}, matchCaseGen()))
		props.TestingRun(t)
	}
}

func TestMatchReportsWhere(t *testing.T) {
	// Sender: 10 items of struct {int; double; vector(8, 2, 3, float)}.
	// Receiver: the same but with the vector's 6th block of floats holding
	// ints at its second element — built as an indexed type.
	inner := Must(Vector(8, 2, 3, Float))
	send := Must(Struct([]int64{1, 1, 1}, []int64{0, 8, 16}, []*Datatype{Int, Double, inner}))
	bl := []int64{2, 2, 2, 2, 2, 1, 1, 2, 2}
	ds := []int64{0, 3, 6, 9, 12, 15, 0, 18, 21}
	// One block of the receiver holds an int where the sender has a float.
	recvInner := Must(Struct(bl, ds, []*Datatype{Float, Float, Float, Float, Float, Float, Int, Float, Float}))
	recv := Must(Struct([]int64{1, 1, 1}, []int64{0, 8, 16}, []*Datatype{Int, Double, recvInner}))
	err := Match(Default(), send, 10, recv, 10, PointToPoint)
	var e *MismatchError
	if !errors.As(err, &e) {
		t.Fatalf("Match = %v", err)
	}
	if e.Index != 13 || e.Send.Type != Float || e.Recv.Type != Int {
		t.Fatalf("index %d, %v vs %v", e.Index, e.Send.Type, e.Recv.Type)
	}
	if got := e.Send.Path.String(); got != "item 0 → struct member 2 → vector block 5 → element 1" {
		t.Errorf("send path %q", got)
	}
	if got := e.Recv.Path.String(); got != "item 0 → struct member 2 → struct member 6" {
		t.Errorf("recv path %q", got)
	}
	msg := err.Error()
	for _, want := range []string{"element 13", "sender has float", "receiver has int", "vector block 5 → element 1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if e.SendMap != "… float @56, float×2 @64, float @76, [float] @80, float×2 @88, float×2 @100, … (+162 elements)" {
		t.Errorf("send map %q", e.SendMap)
	}
	// And in the 7th item (a count > 1 shows which copy).
	err = Match(Default(), send, 10, Must(Contiguous(10, Int)), 1, PointToPoint)
	if !errors.As(err, &e) || e.Index != 1 || !errors.Is(err, ErrMismatch) {
		t.Fatalf("Match = %v", err)
	}
}

func TestMatchTruncationAndLength(t *testing.T) {
	d4 := Must(Contiguous(4, Double))
	if err := Match(Default(), Double, 3, d4, 1, PointToPoint); err != nil {
		t.Errorf("3 doubles into 4: %v", err)
	}
	err := Match(Default(), d4, 2, Double, 5, PointToPoint)
	var e *MismatchError
	if !errors.As(err, &e) || !errors.Is(err, ErrTruncated) || e.Index != 5 || e.Recv.Type != nil || e.Send.Type != Double {
		t.Fatalf("8 doubles into 5: %v", err)
	}
	if !strings.Contains(err.Error(), "receiver has no element there") {
		t.Errorf("message %q", err)
	}
	if err := Match(Default(), Double, 3, d4, 1, Collective); !errors.Is(err, ErrMismatch) || errors.Is(err, ErrTruncated) {
		t.Errorf("collective 3 against 4: %v", err)
	}
	if err := Match(Default(), Double, 0, Int, 0, Collective); err != nil {
		t.Errorf("empty against empty: %v", err)
	}
	if err := Match(Default(), Double, 0, Int, 3, PointToPoint); err != nil {
		t.Errorf("empty message: %v", err)
	}
}

// MPI's exceptions: Packed matches any type, Byte any byte of storage;
// both are decided by size.
func TestByteAndPacked(t *testing.T) {
	pairs := []struct {
		send   string
		sc     uint64
		recv   string
		rc     uint64
		p2p    bool // matches point-to-point
		coll   bool // matches as a collective
		reason string
	}{
		{"byte", 40, "int", 10, true, true, "40 bytes as 10 ints"},
		{"int", 10, "byte", 40, true, true, "10 ints as 40 bytes"},
		{"int", 10, "byte", 100, true, false, "a larger byte buffer"},
		{"int", 10, "byte", 39, false, false, "one byte short"},
		{"packed", 16, "struct([1, 2], [0, 8], [double, float])", 1, true, true, "packed data unpacked"},
		{"packed", 24, "struct([1, 2], [0, 8], [double, float])", 1, false, false, "too much packed data"},
		{"struct([1, 2], [0, 8], [double, float])", 2, "packed", 100, true, false, "received as packed"},
		{"contiguous(3, byte)", 4, "vector(2, 3, 5, byte)", 2, true, true, "bytes into strided bytes"},
		{"byte", 4, "packed", 4, true, true, "byte as packed"},
		{"struct([1, 4], [0, 4], [int, byte])", 1, "struct([1, 1], [0, 4], [int, int])", 1, false, false, "bytes mixed with other types are typed"},
	}
	for _, c := range pairs {
		s, r := Must(ParseDatatype(c.send)), Must(ParseDatatype(c.recv))
		for _, rule := range []Rule{PointToPoint, Collective} {
			want := c.p2p
			if rule == Collective {
				want = c.coll
			}
			err := Match(Default(), s, c.sc, r, c.rc, rule)
			if (err == nil) != want {
				t.Errorf("%s: %s×%d into %s×%d (%v): %v", c.reason, c.send, c.sc, c.recv, c.rc, rule, err)
			}
			var e *MismatchError
			if err != nil && errors.As(err, &e) && e.BySize && !strings.Contains(err.Error(), "matched by size") {
				t.Errorf("message %q", err)
			}
		}
	}
}

func TestStampDecodeErrors(t *testing.T) {
	st, _ := NewStamp(Default(), Int, 3)
	b, _ := st.MarshalBinary()
	var d Stamp
	for name, data := range map[string][]byte{
		"short":   b[:StampSize-1],
		"long":    append(append([]byte{}, b...), 9),
		"version": append([]byte{9}, b[1:]...),
		"class":   append([]byte{1, 7}, b[2:]...),
		"sig":     append(append([]byte{}, b[:10]...), append([]byte{5}, b[11:]...)...),
	} {
		if err := d.UnmarshalBinary(data); err == nil {
			t.Errorf("%s: decoded %v", name, d)
		}
	}
	if st.Class != Typed || st.Bytes != 12 || st.Sig.Count != 3 {
		t.Errorf("stamp %+v", st)
	}
}

func TestTypeMapRendering(t *testing.T) {
	v := Must(Vector(1e9, 3, 5, Double))
	if got := TypeMap(v, 1, 0, ^uint64(0), 3); got != "double×3 @0, double×3 @40, double×3 @80, … (+2999999991 elements)" {
		t.Errorf("vector: %q", got)
	}
	if got := TypeMap(Must(Contiguous(5, Int)), 2, 0, 7, 10); got != "int×7 @0, [int] @28, int×2 @32" {
		t.Errorf("contiguous: %q", got)
	}
	if got := TypeMap(Int, 0, 0, 0, 5); got != "(empty)" {
		t.Errorf("empty: %q", got)
	}
	if got := TypeMap(Must(Vector(4, 1, 2, Int)), 1, 1, ^uint64(0), 5); got != "… int×3 @8 stride 8" {
		t.Errorf("strided: %q", got)
	}
	// Huge uniform regions are one step each, wherever the window starts
	// (found by FuzzParseDatatype: a strided vector used to be walked
	// element by element while its pieces merged).
	huge := map[string]string{
		"vector(3e9, 1, 5, double)":                                   "… double×1500000000 @179999999968 stride 40, double×3000000000 @239999999936 stride 40",
		"contiguous(1e9, contiguous(3, double))":                      "… double×4500000000 @36000000000",
		"vector(1e9, 2, 2, struct([1, 1], [0, 8], [double, double]))": "… double×7500000000 @36000000000",
	}
	for text, want := range huge {
		if got := TypeMap(Must(ParseDatatype(text)), 3, 4500000000, ^uint64(0), 3); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q", text, got)
		}
	}
}
