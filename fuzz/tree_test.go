package fuzz

import (
	"bytes"
	"testing"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/tree"
)

// FuzzTreeWire: every decoder of the tree's messages either rejects the
// input or decodes something that encodes back to the same bytes; decoded
// requests and proofs go to a real tree without harm.
func FuzzTreeWire(f *testing.F) {
	tr, _ := tree.Build(bytes.Repeat([]byte("sigcheck"), 1000), tree.Segment(100))
	f.Add(tree.AppendRoot(nil, tr.Root(), 8))
	f.Add(tree.AppendCritical(nil, tr.CriticalPath(), 8))
	req, _ := tree.Request{Nodes: []int{1, 2, 5}}.AppendBinary(nil)
	f.Add(req)
	ans, _ := tr.Answer(tree.Request{Nodes: []int{3, 4}})
	f.Add(ans.AppendBinary(nil, 16))
	p, _ := tr.Prove(7)
	f.Add(p.AppendBinary(nil, 8))
	f.Add([]byte{1, 4, 8, 0xff, 0xff, 0x03})
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, size, err := tree.DecodeRoot(b); err == nil && !bytes.Equal(tree.AppendRoot(nil, v, size), b) {
			t.Fatalf("root %x re-encodes differently", b)
		}
		if hs, size, err := tree.DecodeCritical(b); err == nil {
			if !bytes.Equal(tree.AppendCritical(nil, hs, size), b) {
				t.Fatalf("critical path %x re-encodes differently", b)
			}
			tr.LocateCritical(hs)
		}
		var q tree.Request
		if err := q.UnmarshalBinary(b); err == nil {
			if again, _ := q.AppendBinary(nil); !bytes.Equal(again, b) {
				t.Fatalf("request %x re-encodes as %x", b, again)
			}
			tr.Answer(q)
		}
		if a, size, err := tree.DecodeAnswer(b); err == nil && !bytes.Equal(a.AppendBinary(nil, size), b) {
			t.Fatalf("answer %x re-encodes differently", b)
		}
		if p, size, err := tree.DecodeProof(b); err == nil {
			if again := p.AppendBinary(nil, size); !bytes.Equal(again, b) {
				t.Fatalf("proof %x re-encodes as %x", b, again)
			}
			tree.VerifyProof(tr.Hash(), csum.Value{}, p, []byte("segment"))
		}
	})
}

// FuzzParityDecode: parity decodes only with a consistent layout and
// exactly its shards' bytes, and re-encodes to the same bytes.
func FuzzParityDecode(f *testing.F) {
	data := bytes.Repeat([]byte("parity"), 500)
	par, _ := tree.NewParity(data, 64, 3)
	f.Add(par.AppendBinary(nil))
	f.Add([]byte{1, 6, 0, 1, 1, 1, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		par, err := tree.DecodeParity(b)
		if err != nil {
			return
		}
		if again := par.AppendBinary(nil); !bytes.Equal(again, b) {
			t.Fatalf("parity %x re-encodes as %x", b, again)
		}
	})
}
