package fuzz

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sigcheck/sigcheck/channel/encrypt"
)

// FuzzEncryptFrame: the encrypted all-gather's frame decoder rejects
// with ErrFrame or decodes what encodes back to the same bytes, within
// its limits, and never panics. The seeds in
// testdata/fuzz/FuzzEncryptFrame are frames of real all-gathers (sealed
// between nodes, in the clear inside one), taken with their limits.
func FuzzEncryptFrame(f *testing.F) {
	f.Add(encrypt.AppendFrame(nil, &encrypt.Frame{Header: encrypt.Header{Alg: encrypt.ORD, Src: 1, Dst: 2, Seq: 3, Step: 1 << 20}}), uint16(4), uint16(0))
	f.Add(encrypt.AppendFrame(nil, &encrypt.Frame{
		Header: encrypt.Header{Sealed: true, Alg: encrypt.HS2, Src: 0, Dst: 3, Seq: 9, Step: 5, LinkCtr: 7, Path: encrypt.Counts{Rc: 2, Sc: 64, Time: 1e-6}},
		Pieces: []encrypt.Piece{
			{Sealed: true, Origins: []int{0, 1}, Encrypter: 1, Counter: 4, Data: bytes.Repeat([]byte{7}, 2*8+16)},
			{Sealed: true, Origins: []int{2}, Encrypter: 2, Counter: 0, Data: bytes.Repeat([]byte{9}, 8+16)},
		},
		Tag: bytes.Repeat([]byte{1}, 16),
	}), uint16(4), uint16(3))
	f.Add(encrypt.AppendFrame(nil, &encrypt.Frame{
		Header: encrypt.Header{Alg: encrypt.CRing, Src: 5, Dst: 4},
		Pieces: []encrypt.Piece{{Origins: []int{3, 1, 2}, Data: []byte("abcdef")}},
	}), uint16(6), uint16(3))
	f.Fuzz(func(t *testing.T, b []byte, ranks, origins uint16) {
		lim := encrypt.Limits{Ranks: int(ranks), Origins: int(origins)}
		fr, err := encrypt.DecodeFrame(b, lim)
		if err != nil {
			if !errors.Is(err, encrypt.ErrFrame) {
				t.Fatalf("an error that is not ErrFrame: %v", err)
			}
			return
		}
		n := 0
		for _, pc := range fr.Pieces {
			n += len(pc.Origins)
			for _, o := range pc.Origins {
				if o >= lim.Ranks {
					t.Fatalf("origin %d of %d ranks accepted", o, lim.Ranks)
				}
			}
		}
		if n > lim.Origins || fr.Src >= lim.Ranks || fr.Dst >= lim.Ranks {
			t.Fatalf("limits %+v passed: %d origins, %d→%d", lim, n, fr.Src, fr.Dst)
		}
		if got := encrypt.AppendFrame(nil, fr); !bytes.Equal(got, b) {
			t.Fatalf("re-encodes differently:\n%x\n%x", b, got)
		}
	})
}
