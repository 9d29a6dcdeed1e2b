package sumfile

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/sigcheck/sigcheck/csum"
)

func alg(t testing.TB, name string) *csum.Algorithm {
	t.Helper()
	a, err := csum.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Lines as the real tools write them (sha256sum and b3sum of coreutils 9.1
// and b3sum 1.2 on Debian 12, xxhsum 0.8.1 and 0.8.2), each with what it
// must parse to.
func TestParseToolLines(t *testing.T) {
	for _, c := range []struct {
		line, alg, resolved, sum, name string
		binary                         bool
	}{
		{"15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225  nine", "", "sha256", "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225", "nine", false},
		{"SHA256 (nine) = 15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225", "sha256", "sha256", "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225", "nine", false},
		{"937bad67  nine", "", "xxh32", "937bad67", "nine", false},
		{"8cb841db40e6ae83  nine", "", "xxh64", "8cb841db40e6ae83", "nine", false},
		{"8cb841db40e6ae83 *nine", "", "xxh64", "8cb841db40e6ae83", "nine", true},
		{"33119477ede5dcd5e9716427681d5860  nine", "", "xxh3-128", "33119477ede5dcd5e9716427681d5860", "nine", false},
		{"XXH3_72dcb18b67a17dff  nine", "xxh3", "xxh3", "72dcb18b67a17dff", "nine", false},
		{"XXH3 (nine) = 72dcb18b67a17dff", "xxh3", "xxh3", "72dcb18b67a17dff", "nine", false},
		{"XXH32 (nine) = 937bad67", "xxh32", "xxh32", "937bad67", "nine", false},
		{"XXH128 (nine) = 33119477ede5dcd5e9716427681d5860", "xxh3-128", "xxh3-128", "33119477ede5dcd5e9716427681d5860", "nine", false},
		{"XXH64_LE (nine) = 83aee640db41b88c", "xxh64", "xxh64", "8cb841db40e6ae83", "nine", false},
		{"XXH3_LE (nine) = ff7da1678bb1dc72", "xxh3", "xxh3", "72dcb18b67a17dff", "nine", false},
		{"\\7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78  we\\\\ird", "", "sha256", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78", "we\\ird", false},
		{"\\SHA256 (a\\nb) = 7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78", "sha256", "sha256", "7e18f737311b2dc3b2f269dd78396b0351f14fb66efa879f768cb23181883c78", "a\nb", false},
		{"CRC32C (odd (name)) = e3069283", "crc32c", "crc32c", "e3069283", "odd (name)", false},
		{"XXH32 (x) = y) = 937bad67", "xxh32", "xxh32", "937bad67", "x) = y", false},
		{"937BAD67   lead space", "", "xxh32", "937bad67", " lead space", false},
		{"937bad67  crlf\r", "", "xxh32", "937bad67", "crlf", false},
		{"XXH32 (crlf) = 937bad67\r", "xxh32", "xxh32", "937bad67", "crlf", false},
	} {
		l, err := Parse(c.line)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		name := ""
		if l.Algorithm != nil {
			name = l.Algorithm.Name
		}
		a, err := l.Resolve(nil)
		if name != c.alg || err != nil || a.Name != c.resolved || hex.EncodeToString(l.Sum) != c.sum || l.Name != c.name || l.Binary != c.binary {
			t.Errorf("%q: %+v (%q, resolved %v, %v)", c.line, l, name, a, err)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for line, want := range map[string]string{
		"":                                  "want HASH",
		"8cb841db40e6ae83":                  "want HASH",
		"8cb841db40e6ae83 nine":             "two spaces",
		"8cb841db40e6ae83  ":                "no file name",
		"8cb841db40e6ae8  nine":             "odd number",
		"8cb841db40e6ae8g  nine":            "not hexadecimal",
		"XXH3_8cb841db  nine":               "want 16",
		"MD5 (nine) = 0123":                 `unknown algorithm "MD5"`,
		"XXH64 (nine) = 0123":               "want 16",
		"XXH64 (nine) 8cb841db40e6ae83":     "ALG (NAME) = HASH",
		"XXH64 () = 8cb841db40e6ae83":       "no file name",
		"\\8cb841db40e6ae83  a\\b":          `unknown escape \b`,
		"\\8cb841db40e6ae83  a\\":           "lone backslash",
		strings.Repeat("ab", 65) + "  big":  "at most 128",
		"  8cb841db40e6ae83  starts spaced": "no checksum",
	} {
		_, err := Parse(line)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want ErrFormat saying %q", line, err, want)
		}
	}
}

func TestResolve(t *testing.T) {
	bare, _ := Parse("e3069283  nine")
	if a, err := bare.Resolve(alg(t, "crc32c")); err != nil || a.Name != "crc32c" {
		t.Errorf("bare line with -alg crc32c: %v %v", a, err)
	}
	if _, err := bare.Resolve(alg(t, "sha256")); !errors.Is(err, ErrAlgorithm) || !strings.Contains(err.Error(), "sha256 has 64") {
		t.Errorf("8 digits read as sha256: %v", err)
	}
	tagged, _ := Parse("XXH3_72dcb18b67a17dff  nine")
	if a, _ := tagged.Resolve(alg(t, "crc32c")); a.Name != "xxh3" {
		t.Errorf("the line's own algorithm comes first, got %v", a)
	}
	odd, _ := Parse("0102030405  nine")
	if _, err := odd.Resolve(nil); !errors.Is(err, ErrAlgorithm) || !strings.Contains(err.Error(), "-alg") {
		t.Errorf("10 digits: %v", err)
	}
}

// What Append writes, Parse reads back: every algorithm, both forms, any
// name (newlines, backslashes, parentheses and ") = " included).
func TestAppendParseRoundTrip(t *testing.T) {
	algs := csum.All()
	p := gopter.DefaultTestParametersWithSeed(1)
	p.MinSuccessfulTests = 2000
	props := gopter.NewProperties(p)
	nameGen := gen.SliceOf(gen.OneConstOf("a", " ", "\n", "\\", "(", ")", " = ", "*", "\r", "é", "n")).
		Map(func(parts []string) string { return strings.Join(parts, "") }).
		SuchThat(func(s string) bool { return s != "" })
	props.Property("Parse(Append(a, sum, name, tag)) gives them back", prop.ForAll(
		func(i int, seed []byte, name string, tag bool) bool {
			a := algs[i%len(algs)]
			sum := bytes.Repeat(append(seed, 0x5a), a.Size)[:a.Size]
			line := Append(nil, a, sum, name, tag)
			if bytes.Count(line, []byte{'\n'}) != 1 || line[len(line)-1] != '\n' {
				return false
			}
			l, err := Parse(string(line[:len(line)-1]))
			if err != nil {
				t.Log(err)
				return false
			}
			got, err := l.Resolve(a)
			return err == nil && got == a && bytes.Equal(l.Sum, sum) && l.Name == name
		},
		gen.IntRange(0, 1000), gen.SliceOf(gen.UInt8()), nameGen, gen.Bool()))
	props.TestingRun(t)
}

func TestAppendForms(t *testing.T) {
	sum := []byte{0x72, 0xdc, 0xb1, 0x8b, 0x67, 0xa1, 0x7d, 0xff}
	for _, c := range []struct {
		alg  string
		tag  bool
		name string
		want string
	}{
		{"xxh3", false, "nine", "XXH3_72dcb18b67a17dff  nine\n"},
		{"xxh3", true, "nine", "XXH3 (nine) = 72dcb18b67a17dff\n"},
		{"xxh64", false, "nine", "72dcb18b67a17dff  nine\n"},
		{"xxh64", true, "a\nb", "\\XXH64 (a\\nb) = 72dcb18b67a17dff\n"},
		{"crc64-xz", true, "nine", "CRC64-XZ (nine) = 72dcb18b67a17dff\n"},
	} {
		if got := string(Append(nil, alg(t, c.alg), sum, c.name, c.tag)); got != c.want {
			t.Errorf("%s tag=%v: %q, want %q", c.alg, c.tag, got, c.want)
		}
	}
	if got := Tag(alg(t, "xxh3-128")); got != "XXH128" {
		t.Errorf("xxh3-128's tag is %s, want xxhsum's XXH128", got)
	}
}
