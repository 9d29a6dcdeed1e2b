package tree

import (
	"errors"
	"math"
	"testing"

	"github.com/sigcheck/sigcheck/csum"
)

func TestWireRoundTrips(t *testing.T) {
	for _, size := range []int{8, 16} {
		v := csum.Value{Hi: 0x1122334455667788, Lo: 0x99aabbccddeeff00}
		if size == 8 {
			v.Hi = 0
		}
		b := AppendRoot(nil, v, size)
		if len(b) != 3+size {
			t.Errorf("root of %d bytes takes %d", size, len(b))
		}
		got, gs, err := DecodeRoot(b)
		if err != nil || got != v || gs != size {
			t.Errorf("root %v %d %v", got, gs, err)
		}
		ans := Answer{Hashes: []csum.Value{v, {}, v}}
		back, _, err := DecodeAnswer(ans.AppendBinary(nil, size))
		if err != nil || len(back.Hashes) != 3 || back.Hashes[2] != v {
			t.Errorf("answer %v %v", back, err)
		}
	}
	q := Request{Nodes: []int{1, 2, 300, math.MaxInt32}}
	b, _ := q.AppendBinary(nil)
	var back Request
	if err := back.UnmarshalBinary(b); err != nil || len(back.Nodes) != 4 || back.Nodes[3] != math.MaxInt32 {
		t.Errorf("request %v %v", back, err)
	}
	if _, err := (Request{Nodes: []int{-1}}).AppendBinary(nil); err == nil {
		t.Error("negative node encoded")
	}
}

func TestWireRejectsMalformed(t *testing.T) {
	root := AppendRoot(nil, csum.Value{Lo: 5}, 8)
	ans := Answer{Hashes: []csum.Value{{Lo: 1}, {Lo: 2}}}.AppendBinary(nil, 8)
	req, _ := Request{Nodes: []int{1, 2}}.AppendBinary(nil)
	proof := Proof{Segment: 1, Segments: 3, Siblings: []csum.Value{{Lo: 1}}}.AppendBinary(nil, 8)
	cases := map[string]func() error{
		"empty root":        func() error { _, _, err := DecodeRoot(nil); return err },
		"root version":      func() error { _, _, err := DecodeRoot(append([]byte{2}, root[1:]...)); return err },
		"root kind":         func() error { _, _, err := DecodeRoot(ans); return err },
		"root size 4":       func() error { _, _, err := DecodeRoot([]byte{1, 1, 4, 0, 0, 0, 0}); return err },
		"root short":        func() error { _, _, err := DecodeRoot(root[:7]); return err },
		"root long":         func() error { _, _, err := DecodeRoot(append(root, 0)); return err },
		"answer count big":  func() error { _, _, err := DecodeAnswer([]byte{1, 4, 8, 0xff, 0xff, 0xff, 0xff, 0x0f}); return err },
		"answer cut":        func() error { _, _, err := DecodeAnswer(ans[:len(ans)-1]); return err },
		"answer extra":      func() error { _, _, err := DecodeAnswer(append(ans, 1, 2, 3, 4, 5, 6, 7, 8)); return err },
		"answer bad varint": func() error { _, _, err := DecodeAnswer([]byte{1, 4, 8, 0x80}); return err },
		"request size":      func() error { var q Request; return q.UnmarshalBinary([]byte{1, 3, 8, 0}) },
		"request count":     func() error { var q Request; return q.UnmarshalBinary([]byte{1, 3, 0, 5, 1}) },
		"request trailing":  func() error { var q Request; return q.UnmarshalBinary(append(req, 9)) },
		"request huge node": func() error {
			var q Request
			return q.UnmarshalBinary([]byte{1, 3, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
		},
		"proof segment ≥ n": func() error { _, _, err := DecodeProof([]byte{1, 5, 8, 3, 3, 0}); return err },
		"overlong count":    func() error { _, _, err := DecodeAnswer([]byte{1, 4, 8, 0x80, 0x00}); return err },
		"proof cut":         func() error { _, _, err := DecodeProof(proof[:len(proof)-2]); return err },
	}
	for name, fn := range cases {
		if err := fn(); !errors.Is(err, ErrWire) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
