package csum

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
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
	"crc32c":     {{[]byte("123456789"), Value{Lo: 0xE3069283}}},
	"crc64-xz":   {{[]byte("123456789"), Value{Lo: 0x995DC9BBDF1939FA}}},
	"crc32":      {{[]byte("123456789"), Value{Lo: 0xCBF43926}}},
	"crc64-ecma": {{[]byte("123456789"), Value{Lo: 0x6C40DF5F0B497347}}},
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
	// xxHash's own sanity vectors (cli/xsum_sanity_check.c of xxHash v0.8,
	// the seed-0 rows) on its pseudorandom buffer, sanityBuffer.
	"xxh32": {
		{sanity(0), Value{Lo: 0x02CC5D05}},
		{sanity(1), Value{Lo: 0xCF65B03E}},
		{sanity(14), Value{Lo: 0x1208E7E2}},
		{sanity(222), Value{Lo: 0x5BD11DBD}},
	},
	"xxh64": {
		{sanity(0), Value{Lo: 0xEF46DB3751D8E999}},
		{sanity(1), Value{Lo: 0xE934A84ADB052768}},
		{sanity(4), Value{Lo: 0x9136A0DCA57457EE}},
		{sanity(14), Value{Lo: 0x8282DCC4994E35C8}},
		{sanity(222), Value{Lo: 0xB641AE8CB691C174}},
	},
	"xxh3": {
		{sanity(0), Value{Lo: 0x2D06800538D394C2}},
		{sanity(1), Value{Lo: 0xC44BDFF4074EECDB}},
		{sanity(6), Value{Lo: 0x27B56A84CD2D7325}},
		{sanity(12), Value{Lo: 0xA713DAF0DFBB77E7}},
		{sanity(24), Value{Lo: 0xA3FE70BF9D3510EB}},
		{sanity(48), Value{Lo: 0x397DA259ECBA1F11}},
		{sanity(80), Value{Lo: 0xBCDEFBBB2C47C90A}},
		{sanity(195), Value{Lo: 0xCD94217EE362EC3A}},
		{sanity(403), Value{Lo: 0xCDEB804D65C6DEA4}},
		{sanity(512), Value{Lo: 0x617E49599013CB6B}},
		{sanity(2048), Value{Lo: 0xDD59E2C3A5F038E0}},
		{sanity(2240), Value{Lo: 0x6E73A90539CF2948}},
		{sanity(2367), Value{Lo: 0xCB37AEB9E5D361ED}},
	},
	"xxh3-128": { // the C struct lists {low64, high64}
		{sanity(0), Value{Lo: 0x6001C324468D497F, Hi: 0x99AA06D3014798D8}},
		{sanity(1), Value{Lo: 0xC44BDFF4074EECDB, Hi: 0xA6CD5E9392000F6A}},
		{sanity(6), Value{Lo: 0x3E7039BDDA43CFC6, Hi: 0x082AFE0B8162D12A}},
		{sanity(12), Value{Lo: 0x061A192713F69AD9, Hi: 0x6E3EFD8FC7802B18}},
		{sanity(24), Value{Lo: 0x1E7044D28B1B901D, Hi: 0x0CE966E4678D3761}},
		{sanity(48), Value{Lo: 0xF942219AED80F67B, Hi: 0xA002AC4E5478227E}},
		{sanity(81), Value{Lo: 0x5E8BAFB9F95FB803, Hi: 0x4952F58181AB0042}},
		{sanity(222), Value{Lo: 0xF1AEBD597CEC6B3A, Hi: 0x337E09641B948717}},
		{sanity(403), Value{Lo: 0xCDEB804D65C6DEA4, Hi: 0x1B6DE21E332DD73D}},
		{sanity(512), Value{Lo: 0x617E49599013CB6B, Hi: 0x18D2D110DCC9BCA1}},
		{sanity(2048), Value{Lo: 0xDD59E2C3A5F038E0, Hi: 0xF736557FD47073A5}},
		{sanity(2240), Value{Lo: 0x6E73A90539CF2948, Hi: 0xCCB134FBFA7CE49D}},
		{sanity(2367), Value{Lo: 0xCB37AEB9E5D361ED, Hi: 0xE89C0F6FF369B427}},
	},
}

// More XXH3 answers, past the sanity vectors' 2367 bytes: the xxHash C
// library (XXH3_64bits, XXH3_128bits) on b[i] = (i+1) % 251, as
// github.com/zeebo/xxh3's compat_test.go records its outputs.
var xxh3CompatAnswers = map[string][]kat{
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

// sanity returns the first n bytes of xxHash's test buffer
// (XSUM_fillTestBuffer): the top byte of a generator that starts at
// PRIME32 and is multiplied by PRIME64 after each byte.
func sanity(n int) []byte {
	gen := uint64(2654435761)
	return ramp(n, func(int) byte {
		b := byte(gen >> 56)
		gen *= 11400714785074694797
		return b
	})
}

// Digests wider than a Value, checked whole (hex of Hash.Sum) and as the
// leftmost 128 bits that Sum returns.
var digestAnswers = map[string][]struct {
	input []byte
	hex   string
}{
	// FIPS 180-4's examples (NIST CSRC, "SHA-256" example values) and the
	// empty message.
	"sha256": {
		{nil, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{[]byte("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{[]byte("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{bytes.Repeat([]byte("a"), 1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
	},
	// BLAKE3's official test vectors (test_vectors/test_vectors.json of the
	// BLAKE3 repository: input b[i] = i % 251, the first 32 bytes of "hash").
	"blake3": {
		{b3buf(0), "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
		{b3buf(1), "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"},
		{b3buf(1023), "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
		{b3buf(1024), "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
		{b3buf(1025), "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"},
		{b3buf(2049), "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"},
		{b3buf(4097), "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"},
		{b3buf(8193), "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b"},
		{b3buf(31744), "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47"},
	},
}

func b3buf(n int) []byte { return ramp(n, func(i int) byte { return byte(i % 251) }) }

func TestDigests(t *testing.T) {
	for name, cases := range digestAnswers {
		a := mustLookup(t, name)
		for _, c := range cases {
			if got := hex.EncodeToString(a.AppendSum(nil, c.input)); got != c.hex {
				t.Errorf("%s AppendSum(%d bytes) = %s, want %s", name, len(c.input), got, c.hex)
			}
			h := a.New()
			h.Write(c.input)
			if got := hex.EncodeToString(h.Sum(nil)); got != c.hex {
				t.Errorf("%s(%d bytes) = %s, want %s", name, len(c.input), got, c.hex)
			}
			if got := a.Format(a.Sum(c.input)); got != c.hex[:32] {
				t.Errorf("%s(%d bytes): Sum formats as %s, want the digest's first 32 digits %s", name, len(c.input), got, c.hex[:32])
			}
		}
	}
}

// Every algorithm, and so every name, answers to a published source: a
// known answer above, SMHasher's verification value (murmur64a), or — for
// the three with no published vectors — its definition written out
// independently (TestDefinitions).
func TestEveryNameHasAKnownAnswer(t *testing.T) {
	byDefinition := map[string]bool{"sum": true, "xor": true, "knuth": true, "murmur64a": true}
	for _, a := range All() {
		if len(knownAnswers[a.Name]) == 0 && len(digestAnswers[a.Name]) == 0 && !byDefinition[a.Name] {
			t.Errorf("%s has no known-answer test", a.Name)
		}
	}
	// Names that once lied: each now computes what it says, or is gone.
	for name, want := range map[string]string{"xxh64": "xxh64", "crc64-ecma": "crc64-ecma", "crc64": "crc64-xz", "crc32": "crc32"} {
		if a := mustLookup(t, name); a.Name != want {
			t.Errorf("%s is %s, want %s", name, a.Name, want)
		}
	}
	for _, gone := range []string{"murmur2a", "murmurhash2a", "crc"} {
		if _, err := Lookup(gone); !errors.Is(err, ErrUnknown) {
			t.Errorf("%s: %v, want ErrUnknown", gone, err)
		}
	}
}

// The slicing-by-8 CRC-64/ECMA-182 against the CRC written bit by bit from
// its definition (catalogue parameters: poly 0x42F0E1EBA9EA3693, init 0,
// no reflection, xorout 0), streamed from any state.
func TestCRC64ECMAAgainstBitwise(t *testing.T) {
	bitwise := func(crc uint64, p []byte) uint64 {
		for _, b := range p {
			crc ^= uint64(b) << 56
			for range 8 {
				if crc&(1<<63) != 0 {
					crc = crc<<1 ^ crc64ecmaPoly
				} else {
					crc <<= 1
				}
			}
		}
		return crc
	}
	props := gopter.NewProperties(params(500))
	props.Property("slicing-by-8 = bit at a time", prop.ForAll(func(start uint64, data []byte) bool {
		return crc64ecmaUpdate(start, data) == bitwise(start, data)
	}, gen.UInt64(), gen.SliceOf(gen.UInt8())))
	props.TestingRun(t)
}

func TestKnownAnswers(t *testing.T) {
	for name, cases := range knownAnswers {
		cases = append(cases, xxh3CompatAnswers[name]...)
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
	if len(names) != 19 || len(All()) != 19 {
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
		if seeded := a.Name == "murmur64a" || a.Name == "superfast"; a.SeededWithLength() != seeded {
			t.Errorf("%s: SeededWithLength %v", a.Name, !seeded)
		}
		if a.About == "" || a.Size == 0 {
			t.Errorf("%s is not described", a.Name)
		}
		if len(a.Format(Value{})) != 2*min(a.Size, 16) {
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
			// (A 256-bit digest's Sum is longer than its Value: it starts with it.)
			sum := h.Sum([]byte{0xEE})
			if len(sum) != 1+a.Size || !bytes.HasPrefix(sum, appendValue([]byte{0xEE}, want, min(a.Size, 16))) ||
				!bytes.Equal(sum, a.AppendSum([]byte{0xEE}, data)) {
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
		props.Property(a.Name+": CopySumCold copies and sums like Sum", prop.ForAll(func(n int, seed uint64) bool {
			rng := rand.New(rand.NewPCG(seed, 5))
			src := ramp(n, func(int) byte { return byte(rng.Uint32()) })
			off := rng.IntN(64)
			buf := make([]byte, off+n+3)
			dst := buf[off:]
			dst[n], dst[n+1], dst[n+2] = 1, 2, 3
			v := a.CopySumCold(dst, src)
			return v == a.Sum(src) && bytes.Equal(dst[:n], src) && dst[n] == 1 && dst[n+2] == 3
		}, gen.OneGenOf(gen.IntRange(0, 300), gen.IntRange(coldMin-10, coldMin+10), gen.IntRange(0, 3*coldMin+7), gen.IntRange(64<<10, 64<<10+99)), gen.UInt64()))
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
