package fuzz

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sigcheck/sigcheck/channel/replicate"
)

// FuzzReplicateRecord: the replication protocol's records (hashes,
// discovery reports and verdicts, envelopes, words) from a peer. Whatever
// the bytes, DecodeRecord returns a record or ErrWire, never panics; a
// record that decodes encodes back to the same bytes, and names only
// ranks and replicas of the job.
func FuzzReplicateRecord(f *testing.F) {
	for _, s := range [][]byte{
		append([]byte{'H'}, make([]byte, 32)...),
		append(append([]byte{'R', 1, 0, 0, 0, 2, 0, 0, 0}, make([]byte, 16)...), append([]byte{1, 0, 0, 0}, append(make([]byte, 16), append([]byte{0, 0, 0, 0}, make([]byte, 16)...)...)...)...),
		append([]byte{'V', 1, 0, 0, 0, 2, 0, 0, 0}, append(make([]byte, 8), 2, 0, 0, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0)...),
		{'E', 3, 0, 0, 0, 7, 0, 0, 0},
		{'W', 1, 2, 3, 4, 5, 6, 7, 8},
		{},
	} {
		f.Add(s, uint8(4), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, n8, r8 uint8) {
		n, r := int(n8)+1, int(r8%8)+1
		rec, err := replicate.DecodeRecord(b, n, r)
		if err != nil {
			if !errors.Is(err, replicate.ErrWire) {
				t.Fatalf("error not ErrWire: %v", err)
			}
			return
		}
		if got := rec.Append(nil); !bytes.Equal(got, b) {
			t.Fatalf("%v encodes to %x, decoded from %x", rec, got, b)
		}
	})
}
