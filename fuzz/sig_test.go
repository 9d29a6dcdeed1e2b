package fuzz

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sigcheck/sigcheck/sig"
)

// FuzzParseDatatype: any text either fails to parse with an error, or
// parses to a datatype whose text form parses back to the same datatype,
// with the same signature, and whose walks stay within their bounds.
func FuzzParseDatatype(f *testing.F) {
	for _, s := range []string{"int", "vector(1e9, 3, 5, double)", "struct([1, 3], [0, 8], [int, double])",
		"resized(-4, 32, contiguous(3, int))", "indexed([3, 0, 2], [4, 0, -2], short)", "hindexed_block(2, [8, -8], float_int)",
		"contiguous(0, byte)", "struct([], [], [])", "vector(", "contiguous(9e18, int)"} {
		f.Add(s)
	}
	alg := sig.Default()
	f.Fuzz(func(t *testing.T, s string) {
		dt, err := sig.ParseDatatype(s)
		if err != nil {
			if dt != nil {
				t.Fatalf("error %v with a datatype", err)
			}
			return
		}
		text := dt.String()
		again, err := sig.ParseDatatype(text)
		if err != nil {
			t.Fatalf("%q parses but its text form %q does not: %v", s, text, err)
		}
		if again.String() != text {
			t.Fatalf("text form not stable: %q then %q", text, again.String())
		}
		s1, err1 := sig.Of(alg, dt, 3)
		s2, err2 := sig.Of(alg, again, 3)
		if s1 != s2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("signatures differ: %v/%v and %v/%v", s1, err1, s2, err2)
		}
		if err1 != nil {
			return
		}
		n := s1.Count
		for _, k := range []uint64{0, n / 2, n} {
			p, err := sig.Prefix(alg, dt, 3, k)
			if err != nil || p.Count != k {
				t.Fatalf("prefix %d of %d: %v %v", k, n, p, err)
			}
		}
		if n > 0 {
			for _, k := range []uint64{0, n / 3, n - 1} {
				e, err := sig.ElementAt(dt, 3, k)
				if err != nil || e.Type == nil || !e.Type.IsBasic() {
					t.Fatalf("element %d of %d: %+v %v", k, n, e, err)
				}
			}
		}
		_ = sig.TypeMap(dt, 3, n/2, n/2, 4)
		if err := sig.Match(alg, dt, 2, again, 3, sig.PointToPoint); err != nil && !errors.Is(err, sig.ErrTooLarge) {
			t.Fatalf("2 copies do not fit in 3 of the same type: %v", err)
		}
	})
}

// FuzzSigDecode: the binary form of a Sig decodes only from exactly
// SigSize well-formed bytes, and re-encodes to them.
func FuzzSigDecode(f *testing.F) {
	b, _ := sig.Sig{Value: 0xf5ac, Count: 3e9}.MarshalBinary()
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s sig.Sig
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		out, err := s.MarshalBinary()
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("%x decodes to %v, which encodes to %x", data, s, out)
		}
	})
}

// FuzzStampDecode: the same for the Stamp a sender attaches to a message.
func FuzzStampDecode(f *testing.F) {
	st, _ := sig.NewStamp(sig.Default(), sig.Must(sig.ParseDatatype("struct([1, 3], [0, 8], [int, double])")), 10)
	b, _ := st.MarshalBinary()
	f.Add(b)
	f.Add([]byte{1, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s sig.Stamp
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		out, err := s.MarshalBinary()
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", data, s, out)
		}
		_ = s.Check(sig.Default(), sig.Double, 3, sig.PointToPoint)
	})
}

// FuzzParseAlgebra: a spec parses to an algebra whose canonical spec
// parses to the very same algebra, or fails with an error.
func FuzzParseAlgebra(f *testing.F) {
	for _, s := range []string{"gfd:w=8,m=2", "crc32c", "xor-bs1:w=16,m=1", "mmm-bs1:w=64,m=1", "gfd:w=2,m=2", "gfd:m=1,w=32", "gfd:w=8,m=", "CRC-32/ISCSI",
		"gfd:w=64,m=1", "gfd:w=64,m=2", "gfd:w=5,m=1", "gfd:w=6,m=10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := sig.ParseAlgebra(s)
		if err != nil {
			return
		}
		b, err := sig.ParseAlgebra(a.String())
		if err != nil || a != b {
			t.Fatalf("%q → %v, whose spec gives %v, %v", s, a, b, err)
		}
		x := a.Append(a.Empty(), sig.Int.Code(), sig.Double.Code())
		if a.Concat(a.Basic(sig.Int.Code()), a.Basic(sig.Double.Code())) != x {
			t.Fatalf("%v: Concat disagrees with Append", a)
		}
	})
}

// FuzzMatchLocate: whatever two datatypes a sender and a receiver hold, a
// mismatch is located at the true first difference, found here by
// expanding both type maps; the index is inside the shorter signature, or
// at its end only when the lengths differ. The deciding algebra is a
// CRC-16, narrow enough to collide, and gfd:w=8,m=2, which forgets runs of
// 255: neither may mislead the locator.
func FuzzMatchLocate(f *testing.F) {
	f.Add("contiguous(300, int)", "contiguous(300, float)", uint8(1), uint8(1))
	f.Add("struct([255, 1], [0, 1020], [int, char])", "struct([255, 1], [0, 1020], [float, char])", uint8(2), uint8(2))
	f.Add("vector(4, 2, 3, double)", "contiguous(8, double)", uint8(2), uint8(1))
	f.Add("struct([1, 3], [0, 8], [int, double])", "struct([1, 6], [0, 8], [int, float])", uint8(10), uint8(10))
	f.Add("indexed([3, 0, 2], [4, 0, -2], short)", "contiguous(5, short)", uint8(3), uint8(3))
	var algs []sig.Algebra
	for _, spec := range []string{"crc16-ccitt-false", "gfd:w=8,m=2", sig.DefaultSpec} {
		a, err := sig.ParseAlgebra(spec)
		if err != nil {
			f.Fatal(err)
		}
		algs = append(algs, a)
	}
	f.Fuzz(func(t *testing.T, a, b string, ca, cb uint8) {
		send, err1 := sig.ParseDatatype(a)
		recv, err2 := sig.ParseDatatype(b)
		if err1 != nil || err2 != nil || uint64(ca)*send.Elements() > 1e5 || uint64(cb)*recv.Elements() > 1e5 ||
			send.Elements() == 0 || recv.Elements() == 0 {
			return
		}
		ts, tr := expand(send, uint64(ca)), expand(recv, uint64(cb))
		first := 0
		for first < min(len(ts), len(tr)) && ts[first] == tr[first] {
			first++
		}
		for _, alg := range algs {
			for _, rule := range []sig.Rule{sig.PointToPoint, sig.Collective} {
				err := sig.Match(alg, send, uint64(ca), recv, uint64(cb), rule)
				var m *sig.MismatchError
				if !errors.As(err, &m) || m.BySize || m.Index < 0 {
					continue
				}
				if m.Index != int64(first) {
					t.Fatalf("%v, %s: located at %d, the first difference is at %d: %v", alg, rule, m.Index, first, err)
				}
				if first == min(len(ts), len(tr)) && len(ts) == len(tr) {
					t.Fatalf("%v: located at %d, past the end of equal signatures", alg, m.Index)
				}
			}
		}
	})
}

// expand lists the basic types of count copies of t, one per element.
func expand(t *sig.Datatype, count uint64) []*sig.Datatype {
	var out []*sig.Datatype
	for r := range sig.Runs(t, count, 0) {
		for range r.Count {
			out = append(out, r.Type)
		}
	}
	return out
}
