package csum

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

func params(n int) *gopter.TestParameters {
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = n
	if testing.Short() {
		p.MinSuccessfulTests = max(n/10, 20)
	}
	return p
}

func mustLookup(t testing.TB, name string) *Algorithm {
	t.Helper()
	a, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ramp returns n bytes with b[i] = f(i).
func ramp(n int, f func(i int) byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = f(i)
	}
	return b
}

type kat struct {
	input []byte
	want  Value
}

// Known answers, each with its source.
var knownAnswers = map[string][]kat{
	// CRC RevEng catalogue check values: the CRC of "123456789".
	"crc32c": {{[]byte("123456789"), Value{Lo: 0xE3069283}}},
	"crc64":  {{[]byte("123456789"), Value{Lo: 0x995DC9BBDF1939FA}}},
	// Wikipedia, "Adler-32": the checksum of "Wikipedia".
	"adler32": {{[]byte("Wikipedia"), Value{Lo: 0x11E60398}}, {nil, Value{Lo: 1}}},
	// Wikipedia, "Fletcher's checksum", test vectors of the 64-bit form.
	"fletcher64": {
		{[]byte("abcde"), Value{Lo: 0xc8c6c527646362c6}},
		{[]byte("abcdef"), Value{Lo: 0xc8c72b276463c8c6}},
		{[]byte("abcdefgh"), Value{Lo: 0x312e2b28cccac8c6}},
	},
	// Wikipedia, "Jenkins hash function": one_at_a_time of "a" and of the pangram.
	"oaat": {
		{[]byte("a"), Value{Lo: 0xca2e9442}},
		{[]byte("The quick brown fox jumps over the lazy dog"), Value{Lo: 0x519e91f5}},
	},
	// The FNV reference test vectors (Landon Curt Noll, test_fnv.c; also
	// draft-eastlake-fnv): FNV-1a 64 of "", "a" and "foobar".
	"fnv1a64": {
		{nil, Value{Lo: 0xcbf29ce484222325}},
		{[]byte("a"), Value{Lo: 0xaf63dc4c8601ec8c}},
		{[]byte("foobar"), Value{Lo: 0x85944171f73967e8}},
	},
	// SuperFastHash: the 256-byte ramp of Yandex's library/cpp/digest/sfh
	// tests, and Hashlib.NET's "foob", "fooba", "foobar".
	"superfast": {
		{ramp(256, func(i int) byte { return byte(i) }), Value{Lo: 3840866583}},
		{ramp(255, func(i int) byte { return byte(i) }), Value{Lo: 325350515}},
		{ramp(254, func(i int) byte { return byte(i) }), Value{Lo: 2920741773}},
		{ramp(253, func(i int) byte { return byte(i) }), Value{Lo: 3586628615}},
		{[]byte("foob"), Value{Lo: 0x58C9CBD5}},
		{[]byte("fooba"), Value{Lo: 0xF9D871C8}},
		{[]byte("foobar"), Value{Lo: 0xA6BCDCA9}},
		{nil, Value{}},
	},
	// The xxHash C library (XXH3_64bits, XXH3_128bits) on b[i] = (i+1) % 251,
	// as github.com/zeebo/xxh3's compat_test.go records its outputs.
	"xxh3": {
		{nil, Value{Lo: 0x2d06800538d394c2}},
		{xxhBuf(1), Value{Lo: 0xe12ef9d2eb86ceeb}},
		{xxhBuf(3), Value{Lo: 0xebce9b7632ae733b}},
		{xxhBuf(16), Value{Lo: 0xeb5aeb9a32450f6a}},
		{xxhBuf(17), Value{Lo: 0x6d458e1fff494078}},
		{xxhBuf(128), Value{Lo: 0xce22cae9106851df}},
		{xxhBuf(129), Value{Lo: 0x7d4fc663f5958d40}},
		{xxhBuf(240), Value{Lo: 0xa5a910b2d7e065b0}},
		{xxhBuf(241), Value{Lo: 0xb6515f490cdd4ce5}},
		{xxhBuf(1000), Value{Lo: 0x30e4c5246f300d11}},
		{xxhBuf(1023), Value{Lo: 0xe53c987a6f064659}},
	},
	"xxh3-128": {
		{nil, Value{Hi: 0x99aa06d3014798d8, Lo: 0x6001c324468d497f}},
		{xxhBuf(1), Value{Hi: 0x51025a4491835505, Lo: 0xe12ef9d2eb86ceeb}},
		{xxhBuf(16), Value{Hi: 0x6d84a882f6411b41, Lo: 0xeada823104bd7174}},
		{xxhBuf(17), Value{Hi: 0x9ac14e2c3fe59a83, Lo: 0xacda8373034d6aaf}},
		{xxhBuf(241), Value{Hi: 0x956bc01534a3752b, Lo: 0xb6515f490cdd4ce5}},
		{xxhBuf(1000), Value{Hi: 0x36fdb020a7879939, Lo: 0x30e4c5246f300d11}},
		{xxhBuf(4095), Value{Hi: 0x8b81e7baaa6cdbac, Lo: 0x268198759d7bdf74}},
	},
}

func xxhBuf(n int) []byte { return ramp(n, func(i int) byte { return byte((i + 1) % 251) }) }

func TestKnownAnswers(t *testing.T) {
	for name, cases := range knownAnswers {
		a := mustLookup(t, name)
		for _, c := range cases {
			if got := a.Sum(c.input); got != c.want {
				t.Errorf("%s(%.20q, %d bytes) = %s, want %s", name, c.input, len(c.input), a.Format(got), a.Format(c.want))
			}
			h := a.New()
			h.Write(c.input)
			if got := h.Value(); got != c.want {
				t.Errorf("%s streaming (%d bytes) = %s, want %s", name, len(c.input), a.Format(got), a.Format(c.want))
			}
		}
	}
}

// SMHasher's verification value (main.cpp, g_hashes): hash the keys
// {}, {0}, {0,1}, …, {0..254} with seed 256-n, concatenate the hashes
// (little-endian), hash that with seed 0 and read its first 4 bytes.
// MurmurHash64A's is 0x1F0D3804.
func TestMurmur64ASMHasherVerification(t *testing.T) {
	hash := func(key []byte, seed uint64) uint64 {
		c := &murmurCore{total: uint64(len(key)), seed: seed}
		return c.sumAll(key).Lo
	}
	key := ramp(256, func(i int) byte { return byte(i) })
	var hashes []byte
	for n := range 256 {
		hashes = binary.LittleEndian.AppendUint64(hashes, hash(key[:n], uint64(256-n)))
	}
	var final [8]byte
	binary.LittleEndian.PutUint64(final[:], hash(hashes, 0))
	if got := binary.LittleEndian.Uint32(final[:4]); got != 0x1F0D3804 {
		t.Errorf("verification value %#08x, want 0x1F0D3804", got)
	}
}

// sum, xor and knuth have no published vectors: they are checked against
// their definitions, written out independently here.
func TestDefinitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 1000, 4099} {
		p := ramp(n, func(int) byte { return byte(rng.Uint32()) })
		var padded []byte
		padded = append(padded, p...)
		for len(padded)%8 != 0 {
			padded = append(padded, 0)
		}
		var s, x, k uint64
		for i := 0; i < len(padded); i += 8 {
			w := binary.LittleEndian.Uint64(padded[i:])
			s += w
			x ^= w
			k = (k ^ w) * 0x9E3779B97F4A7C15
		}
		k = (k ^ uint64(n)) * 0x9E3779B97F4A7C15
		for name, want := range map[string]uint64{"sum": s, "xor": x, "knuth": k} {
			if got := mustLookup(t, name).Sum(p); got != (Value{Lo: want}) {
				t.Errorf("%s of %d bytes = %#x, want %#x", name, n, got.Lo, want)
			}
		}
	}
}

func TestRegistry(t *testing.T) {
	names := Names()
	if len(names) != 13 || len(All()) != 13 {
		t.Fatalf("%d algorithms: %v", len(names), names)
	}
	for _, a := range All() {
		b, err := Lookup(strings.ToUpper(a.Name))
		if err != nil || b != a {
			t.Errorf("Lookup(%s) = %v, %v", strings.ToUpper(a.Name), b, err)
		}
		for _, alias := range a.Aliases {
			if b, _ := Lookup(alias); b != a {
				t.Errorf("alias %s of %s gives %v", alias, a.Name, b)
			}
		}
		h, err := New(a.Name)
		if err != nil || h.Size() != a.Size {
			t.Errorf("New(%s): size %d, %v", a.Name, h.Size(), err)
		}
		if a.About == "" || a.Size == 0 {
			t.Errorf("%s is not described", a.Name)
		}
		if len(a.Format(Value{})) != 2*a.Size {
			t.Errorf("%s formats %d digits", a.Name, len(a.Format(Value{})))
		}
	}
	_, err := Lookup("md5")
	if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "crc32c") {
		t.Errorf("Lookup(md5): %v", err)
	}
	if _, err := New("sha1"); !errors.Is(err, ErrUnknown) {
		t.Errorf("New(sha1): %v", err)
	}
	if v, err := Checksum("crc32c", []byte("123456789")); err != nil || v.Lo != 0xE3069283 {
		t.Errorf("Checksum: %v %v", v, err)
	}
	x := mustLookup(t, "xxh3-128")
	if got := x.Format(Value{Hi: 0x0123, Lo: 0xabcd}); got != "0000000000000123000000000000abcd" {
		t.Errorf("128-bit format %q", got)
	}
}

// Streaming in random pieces gives the one-shot value; Sum appends the
// value's bytes most significant first; Reset starts over.
func TestStreamingEqualsOneShot(t *testing.T) {
	for _, a := range All() {
		props := gopter.NewProperties(params(200))
		props.Property(a.Name+": pieces = one-shot", prop.ForAll(func(data []byte, cuts []uint16) bool {
			want := a.Sum(data)
			h := a.New()
			rest := data
			for _, c := range cuts {
				n := int(c) % (len(rest) + 1)
				h.Write(rest[:n])
				rest = rest[n:]
				if h.Value() != a.Sum(data[:len(data)-len(rest)]) { // mid-stream values too
					return false
				}
			}
			h.Write(rest)
			if h.Value() != want || h.Sum64() != want.Lo {
				return false
			}
			if !bytes.Equal(h.Sum([]byte{0xEE}), appendValue([]byte{0xEE}, want, a.Size)) {
				return false
			}
			h.Reset()
			h.Write(data)
			return h.Value() == want
		}, gen.SliceOf(gen.UInt8()), gen.SliceOf(gen.UInt16())))
		props.TestingRun(t)
	}
	// Long inputs, past every block size (XXH3's 1 KiB, Fletcher's reduction).
	rng := rand.New(rand.NewPCG(2, 2))
	big := ramp(300_001, func(int) byte { return byte(rng.Uint32()) })
	for _, a := range All() {
		h := a.New()
		for off := 0; off < len(big); {
			n := min(1+rng.IntN(70_000), len(big)-off)
			h.Write(big[off : off+n])
			off += n
		}
		if h.Value() != a.Sum(big) {
			t.Errorf("%s: streaming 300001 bytes differs", a.Name)
		}
	}
}

func TestCombine(t *testing.T) {
	for _, a := range All() {
		if !a.Combinable() {
			if a.CombineAlign() != 0 {
				t.Errorf("%s: align without combine", a.Name)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: Combine did not panic", a.Name)
					}
				}()
				a.Combine(Value{}, Value{}, 1)
			}()
			continue
		}
		align := a.CombineAlign()
		props := gopter.NewProperties(params(300))
		props.Property(a.Name+": Combine(A, B, |B|) = sum(A‖B), |A| a multiple of its alignment", prop.ForAll(func(data []byte, cut uint16) bool {
			k := int(cut) % (len(data) + 1)
			k -= k % align
			return a.Combine(a.Sum(data[:k]), a.Sum(data[k:]), int64(len(data)-k)) == a.Sum(data)
		}, gen.SliceOf(gen.UInt8()), gen.UInt16()))
		props.TestingRun(t)
	}
}

func TestSumParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{0, 100, parallelMin - 1, parallelMin, parallelMin + 4097, 3<<20 + 5} {
		p := ramp(n, func(int) byte { return byte(rng.Uint32()) })
		for _, a := range All() {
			if got, want := a.SumParallel(p), a.Sum(p); got != want {
				t.Errorf("%s: SumParallel of %d bytes = %s, want %s", a.Name, n, a.Format(got), a.Format(want))
			}
		}
	}
}

func TestCopySum(t *testing.T) {
	// Exercise the streaming path too, on small buffers.
	defer func(m int) { streamMin = m }(streamMin)
	streamMin = 3 * CopyChunk
	for _, a := range All() {
		props := gopter.NewProperties(params(40))
		props.Property(a.Name+": CopySum copies and sums like Sum", prop.ForAll(func(n int, seed uint64) bool {
			rng := rand.New(rand.NewPCG(seed, 4))
			src := ramp(n, func(int) byte { return byte(rng.Uint32()) })
			off := rng.IntN(64) // any alignment of dst
			buf := make([]byte, off+n+3)
			dst := buf[off:]
			dst[n], dst[n+1], dst[n+2] = 1, 2, 3
			v := a.CopySum(dst, src)
			return v == a.Sum(src) && bytes.Equal(dst[:n], src) && dst[n] == 1 && dst[n+2] == 3
		}, gen.OneGenOf(gen.IntRange(0, 300), gen.IntRange(CopyChunk-10, CopyChunk+10), gen.IntRange(0, 5*CopyChunk+7)), gen.UInt64()))
		props.TestingRun(t)
	}
	defer func() {
		if recover() == nil {
			t.Error("CopySum into a short dst did not panic")
		}
	}()
	mustLookup(t, "xxh3").CopySum(make([]byte, 3), make([]byte, 4))
}

func TestCopy(t *testing.T) {
	defer func(m int) { streamMin = m }(streamMin)
	for _, m := range []int{streamMin, 2 * CopyChunk} { // both paths
		streamMin = m
		src := ramp(5*CopyChunk+11, func(i int) byte { return byte(i * 7) })
		dst := make([]byte, len(src)-5)
		if n := Copy(dst, src); n != len(dst) || !bytes.Equal(dst, src[:len(dst)]) {
			t.Errorf("Copy copied %d", n)
		}
	}
}

// The non-temporal kernel against copy, at every alignment of both ends
// and lengths around its 64-byte blocks.
func TestStreamCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	src := ramp(4096+200, func(int) byte { return byte(rng.Uint32()) })
	for _, n := range []int{0, 1, 63, 64, 65, 127, 128, 129, 1000, 4096} {
		for so := 0; so < 64; so += 7 {
			for do := 0; do < 64; do += 5 {
				buf := make([]byte, 64+n+64)
				for i := range buf {
					buf[i] = 0xAA
				}
				streamCopy(buf[do:do+n], src[so:so+n])
				sfence()
				if !bytes.Equal(buf[do:do+n], src[so:so+n]) {
					t.Fatalf("n=%d so=%d do=%d: wrong copy", n, so, do)
				}
				for i, b := range buf {
					if (i < do || i >= do+n) && b != 0xAA {
						t.Fatalf("n=%d so=%d do=%d: byte %d outside the copy written", n, so, do, i)
					}
				}
			}
		}
	}
}
