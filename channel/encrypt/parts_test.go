package encrypt

import (
	"bytes"
	"testing"
)

// The exported parts must be what the Gatherer itself uses: another
// transport that seals with them interoperates with its frames.
func TestPartsAreTheGatherers(t *testing.T) {
	st := &state{alg: HS2, seq: 77}
	for _, origins := range [][]int{{0}, {3, 1, 2}, {}} {
		if got, want := AppendPieceAAD(nil, HS2, 77, origins), st.pieceAAD(origins); !bytes.Equal(got, want) {
			t.Errorf("AppendPieceAAD(%v) = %x, the Gatherer's %x", origins, got, want)
		}
	}
	var a, b [12]byte
	if !bytes.Equal(PutNonce(&a, 5, 1<<40+3), nonceOf(&b, 5, 1<<40+3)) {
		t.Errorf("PutNonce %x, nonceOf %x", a, b)
	}
	for _, c := range []struct{ origins, m int }{{0, 0}, {1, 1}, {7, 1 << 20}} {
		if MaxFrameSize(c.origins, c.m) != maxFrameSize(c.origins, c.m) {
			t.Errorf("MaxFrameSize(%d, %d)", c.origins, c.m)
		}
	}
	lay, err := NewLayout(8, 2, Block)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{1, hs1Max / 4, hs1Max} {
		if got, want := Choose(lay, m), (&Gatherer{lay: lay}).Choose(m); got != want {
			t.Errorf("Choose(m=%d) = %v, a Gatherer's %v", m, got, want)
		}
	}
	k1, err := DeriveKey([]byte("secret"), []byte("salt"), "a")
	if err != nil || len(k1) != KeyLen {
		t.Fatalf("DeriveKey: %d bytes, %v", len(k1), err)
	}
	if k2, _ := DeriveKey([]byte("secret"), []byte("salt"), "b"); bytes.Equal(k1, k2) {
		t.Error("DeriveKey: another info gave the same key")
	}
	if _, err := NewAEAD(k1); err != nil {
		t.Error(err)
	}
}

// A frame whose header is written after its data, as another transport
// writes it, is the frame AppendFrame writes.
func TestAppendFrameHeader(t *testing.T) {
	f := &Frame{Header: Header{Alg: ORD, Src: 1, Dst: 2, Seq: 9, Step: 3},
		Pieces: []Piece{{Origins: []int{4, 5}, Data: []byte("abcdefgh")}, {Sealed: true, Origins: []int{0}, Encrypter: 1, Counter: 7, Data: bytes.Repeat([]byte{9}, 4+TagLen)}}}
	whole := AppendFrame(nil, f)
	start := FrameHeaderLen + 2*FrameEntryLen + 4*3
	if hdr := AppendFrameHeader(nil, &f.Header, f.Pieces); !bytes.Equal(hdr, whole[:start]) {
		t.Errorf("header %x\nframe  %x", hdr, whole[:start])
	}
	if _, err := DecodeFrame(whole, Limits{Ranks: 8, Origins: 3}); err != nil {
		t.Error(err)
	}
}
