package fuzz

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/csum/sumfile"
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

// FuzzSumfileParse: any line of a checksum file parses or is refused with
// ErrFormat, never a panic; what parses, written back (GNU and BSD forms),
// parses to the same algorithm, sum and name.
func FuzzSumfileParse(f *testing.F) {
	for _, s := range []string{
		"15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225  nine",
		"SHA256 (nine) = 15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225",
		"XXH3_72dcb18b67a17dff  nine",
		"XXH64_LE (nine) = 83aee640db41b88c",
		"8cb841db40e6ae83 *nine",
		"\\7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78  we\\\\ird",
		"XXH32 (x) = y) = 937bad67",
		"\\XXH128 (a\\nb) = 33119477ede5dcd5e9716427681d5860",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l, err := sumfile.Parse(line)
		if err != nil {
			if !errors.Is(err, sumfile.ErrFormat) {
				t.Fatalf("%q: %v does not wrap ErrFormat", line, err)
			}
			return
		}
		a, err := l.Resolve(nil)
		if err != nil {
			if !errors.Is(err, sumfile.ErrAlgorithm) {
				t.Fatalf("%q: %v does not wrap ErrAlgorithm", line, err)
			}
			return
		}
		for _, tag := range []bool{false, true} {
			out := sumfile.Append(nil, a, l.Sum, l.Name, tag)
			back, err := sumfile.Parse(string(out[:len(out)-1]))
			if err != nil {
				t.Fatalf("%q, written back as %q: %v", line, out, err)
			}
			b, err := back.Resolve(a)
			if err != nil || b != a || !bytes.Equal(back.Sum, l.Sum) || back.Name != l.Name {
				t.Fatalf("%q, written back as %q, reads as %s %x %q (%v)", line, out, b, back.Sum, back.Name, err)
			}
		}
	})
}
