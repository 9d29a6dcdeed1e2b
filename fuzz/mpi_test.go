//go:build mpi

package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/channel"
	"github.com/sigcheck/sigcheck/channel/mpi"
	"github.com/sigcheck/sigcheck/internal/wire"
)

// FuzzMPIFrame: a message off MPI's frame tag (channel/mpi) decodes only
// if its header is canonical and the message holds exactly the payload
// the header announces: all of it up to the inline limit, none beyond
// (that payload comes as a message of its own). Build and run with the
// mpi tag (it links Open MPI, but calls none of it):
//
//	go test -tags mpi ./fuzz -run '^$' -fuzz '^FuzzMPIFrame$'
func FuzzMPIFrame(f *testing.F) {
	for _, s := range frameSeeds() {
		f.Add(s)
	}
	big := make([]byte, wire.HeaderSize)
	h := wire.Header{Kind: wire.KindMsg, Tag: 1, ID: 9, Total: 1 << 20, Plen: 1 << 20}
	h.Put(big)
	f.Add(big)                                 // a large frame's header alone
	f.Add(append(bytes.Clone(big), 1, 2, 3))   // with bytes it must not have
	f.Add(frameSeeds()[0][:wire.HeaderSize+2]) // a frame cut short
	f.Add([]byte{})                            // no header at all
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= wire.HeaderSize && len(b)%2 == 0 {
			b = bytes.Clone(b) // half the inputs: a right header check
			binary.LittleEndian.PutUint64(b[56:], xxh3.Hash(b[:56]))
		}
		h, payload, err := mpi.ParseFrame(1, b)
		if err != nil {
			if !errors.Is(err, channel.ErrProtocol) {
				t.Fatalf("an error that is not ErrProtocol: %v", err)
			}
			return
		}
		var again [wire.HeaderSize]byte
		h.Put(again[:])
		switch {
		case !bytes.Equal(again[:], b[:wire.HeaderSize]):
			t.Fatalf("header %+v does not encode back to its bytes", h)
		case len(payload) != len(b)-wire.HeaderSize:
			t.Fatalf("payload of %d bytes from a message of %d", len(payload), len(b))
		case len(payload) != 0 && len(payload) != h.Plen:
			t.Fatalf("payload of %d bytes, header says %d", len(payload), h.Plen)
		case len(payload) == 0 && h.Plen != 0 && h.Plen <= 16<<10:
			t.Fatalf("an inline frame of %d bytes came without them", h.Plen)
		}
	})
}
