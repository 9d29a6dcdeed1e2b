package fuzz

import (
	"bytes"
	"testing"

	"github.com/sigcheck/sigcheck/csum"
)

// FuzzCsumStreaming: for every algorithm, arbitrary data written in pieces
// cut where the fuzzer says gives the one-shot checksum; so does CopySum
// (which must also copy exactly), and, where the algorithm combines, so
// does the combination of the checksums of a split at an aligned point.
func FuzzCsumStreaming(f *testing.F) {
	f.Add([]byte("123456789"), []byte{3, 0, 5})
	f.Add(bytes.Repeat([]byte{0xAB}, 1500), []byte{200, 17, 255, 1})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		for _, a := range csum.All() {
			want := a.Sum(data)
			h := a.New()
			rest := data
			for _, c := range cuts {
				n := int(c) % (len(rest) + 1)
				h.Write(rest[:n])
				rest = rest[n:]
			}
			h.Write(rest)
			if h.Value() != want {
				t.Fatalf("%s: streaming %d bytes in %d pieces: %s, one-shot %s", a.Name, len(data), len(cuts)+1, a.Format(h.Value()), a.Format(want))
			}
			s := a.NewFor(int64(len(data)))
			s.Write(data)
			if s.Value() != want {
				t.Fatalf("%s: NewFor differs", a.Name)
			}
			dst := make([]byte, len(data))
			if v := a.CopySum(dst, data); v != want || !bytes.Equal(dst, data) {
				t.Fatalf("%s: CopySum differs", a.Name)
			}
			if a.Combinable() && len(cuts) > 0 {
				k := int(cuts[0]) % (len(data) + 1)
				k -= k % a.CombineAlign()
				if got := a.Combine(a.Sum(data[:k]), a.Sum(data[k:]), int64(len(data)-k)); got != want {
					t.Fatalf("%s: Combine at %d of %d: %s, want %s", a.Name, k, len(data), a.Format(got), a.Format(want))
				}
			}
		}
	})
}
