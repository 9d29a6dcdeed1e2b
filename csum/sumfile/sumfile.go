// Package sumfile reads and writes the lines of checksum files, in the
// forms that sha256sum, b3sum and xxhsum users already keep:
//
//	15e2b0d3c33891eb…  name        GNU coreutils (sha256sum, b3sum, xxhsum)
//	SHA256 (name) = 15e2b0d3…      BSD, what --tag writes
//	XXH3_72dcb18b67a17dff  name    xxhsum 0.8.2: XXH3-64 marked, since 16 bare digits are XXH64
//	XXH64_LE (name) = 83aee640…    xxhsum --little-endian: the bytes reversed
//
// A name holding a newline or a backslash is written as coreutils does:
// the line starts with a backslash, and the name has \n and \\ in their
// place (\r too, as coreutils 9 writes it).
//
// What it is not: a checker. It parses and formats one line; opening the
// files and comparing is the caller's (sigcheck csum -c).
package sumfile

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/sigcheck/sigcheck/csum"
)

// Line is one parsed line of a checksum file.
type Line struct {
	// Algorithm is what the line names (a BSD tag, or the XXH3_ prefix),
	// or nil for a bare GNU line, whose algorithm is the reader's to say
	// (see Resolve).
	Algorithm *csum.Algorithm
	// Sum is the checksum, most significant byte first: what the
	// algorithm's Hash.Sum appends (reversed already for _LE tags).
	Sum []byte
	// Name is the file name, unescaped.
	Name string
	// Binary reports a GNU line's '*' before the name (binary mode, which
	// changes nothing here).
	Binary bool
}

// ErrFormat is wrapped by every error of Parse: the line is not a
// checksum line. The message after it says what is wrong.
var ErrFormat = errors.New("improperly formatted checksum line")

// ErrAlgorithm is wrapped by Resolve's errors: the line's checksum has no
// algorithm that fits it.
var ErrAlgorithm = errors.New("no algorithm for this checksum")

// maxSum bounds the checksum on a line (hex digits): twice the widest
// digest, so that no line makes Parse allocate by what it claims.
const maxSum = 2 * 64

// Tag returns a's BSD tag: the name as its users' tools print it
// (XXH128 for XXH3-128, as xxhsum does), else the name upper-cased.
func Tag(a *csum.Algorithm) string {
	if t, ok := tags[a.Name]; ok {
		return t
	}
	return strings.ToUpper(a.Name)
}

var tags = map[string]string{"xxh3-128": "XXH128"}

// xxh3Prefix marks an XXH3-64 sum on a GNU line (xxhsum 0.8.2).
const xxh3Prefix = "XXH3_"

// Append appends the line of sum (as a's Hash.Sum gives it) for the file
// name: GNU form, or BSD form with tag. The line ends with '\n'.
func Append(b []byte, a *csum.Algorithm, sum []byte, name string, tag bool) []byte {
	esc, escaped := Escape(name)
	if escaped {
		b = append(b, '\\')
	}
	if tag {
		b = append(b, Tag(a)...)
		b = append(b, " ("...)
		b = append(b, esc...)
		b = append(b, ") = "...)
		b = hex.AppendEncode(b, sum)
		return append(b, '\n')
	}
	if a.Name == "xxh3" {
		b = append(b, xxh3Prefix...)
	}
	b = hex.AppendEncode(b, sum)
	b = append(b, "  "...)
	b = append(b, esc...)
	return append(b, '\n')
}

// Escape returns name as a checksum line holds it, and whether it needed
// escaping (then the line starts with a backslash): \\ for a backslash,
// \n for a newline, \r for a carriage return.
func Escape(name string) (string, bool) {
	if !strings.ContainsAny(name, "\\\n\r") {
		return name, false
	}
	return strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r").Replace(name), true
}

func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("%w: the name ends in a lone backslash", ErrFormat)
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			return "", fmt.Errorf("%w: unknown escape \\%c in the name", ErrFormat, s[i])
		}
	}
	return b.String(), nil
}

// Parse reads one line, without its line ending (the "\r" of a CRLF
// ending is dropped, as coreutils 9 does; Append escapes a name's own). It
// accepts the GNU form ("HASH  NAME", "HASH *NAME", "XXH3_HASH  NAME") and
// the BSD form ("ALG (NAME) = HASH", with xxhsum's _LE tags), either after
// a backslash that says the name is escaped. Errors wrap ErrFormat and say
// what is wrong.
func Parse(line string) (Line, error) {
	line = strings.TrimSuffix(line, "\r")
	escaped := strings.HasPrefix(line, "\\")
	if escaped {
		line = line[1:]
	}
	var l Line
	var err error
	if sp := strings.IndexByte(line, ' '); sp > 0 && strings.HasPrefix(line[sp:], " (") {
		l, err = parseBSD(line, sp)
	} else {
		l, err = parseGNU(line)
	}
	if err != nil {
		return Line{}, err
	}
	if escaped {
		if l.Name, err = unescape(l.Name); err != nil {
			return Line{}, err
		}
	}
	return l, nil
}

func parseGNU(line string) (Line, error) {
	sp := strings.IndexByte(line, ' ')
	if sp < 0 || sp+2 > len(line) {
		return Line{}, fmt.Errorf("%w: want HASH, two spaces and a name", ErrFormat)
	}
	var l Line
	digits := line[:sp]
	if strings.HasPrefix(digits, xxh3Prefix) {
		l.Algorithm = mustLookup("xxh3")
		digits = digits[len(xxh3Prefix):]
	}
	switch line[sp+1] {
	case ' ':
	case '*':
		l.Binary = true
	default:
		return Line{}, fmt.Errorf("%w: want two spaces (or a space and '*') after the checksum", ErrFormat)
	}
	l.Name = line[sp+2:]
	if l.Name == "" {
		return Line{}, fmt.Errorf("%w: no file name", ErrFormat)
	}
	var err error
	if l.Sum, err = decodeSum(digits); err != nil {
		return Line{}, err
	}
	if l.Algorithm != nil && len(l.Sum) != l.Algorithm.Size {
		return Line{}, fmt.Errorf("%w: XXH3_ with %d hex digits, want 16", ErrFormat, len(digits))
	}
	return l, nil
}

func parseBSD(line string, sp int) (Line, error) {
	tag := line[:sp]
	rest := line[sp+2:]
	end := strings.LastIndex(rest, ") = ")
	if end < 0 {
		return Line{}, fmt.Errorf("%w: want ALG (NAME) = HASH", ErrFormat)
	}
	var l Line
	l.Name = rest[:end]
	if l.Name == "" {
		return Line{}, fmt.Errorf("%w: no file name", ErrFormat)
	}
	little := false
	if t, ok := strings.CutSuffix(tag, "_LE"); ok {
		tag, little = t, true
	}
	a, err := csum.Lookup(tag)
	if err != nil {
		return Line{}, fmt.Errorf("%w: unknown algorithm %q", ErrFormat, tag)
	}
	l.Algorithm = a
	digits := rest[end+len(") = "):]
	if l.Sum, err = decodeSum(digits); err != nil {
		return Line{}, err
	}
	if len(l.Sum) != a.Size {
		return Line{}, fmt.Errorf("%w: %s with %d hex digits, want %d", ErrFormat, tag, len(digits), 2*a.Size)
	}
	if little {
		for i, j := 0, len(l.Sum)-1; i < j; i, j = i+1, j-1 {
			l.Sum[i], l.Sum[j] = l.Sum[j], l.Sum[i]
		}
	}
	return l, nil
}

func decodeSum(digits string) ([]byte, error) {
	switch {
	case digits == "":
		return nil, fmt.Errorf("%w: no checksum", ErrFormat)
	case len(digits) > maxSum:
		return nil, fmt.Errorf("%w: a checksum of %d hex digits (at most %d)", ErrFormat, len(digits), maxSum)
	case len(digits)%2 != 0:
		return nil, fmt.Errorf("%w: an odd number of hex digits (%d)", ErrFormat, len(digits))
	}
	sum, err := hex.DecodeString(digits)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not hexadecimal", ErrFormat, digits)
	}
	return sum, nil
}

// bySize is the algorithm of a bare GNU line by its number of bytes, as
// xxhsum reads them (8 hex digits XXH32, 16 XXH64, 32 XXH128), and 64
// digits as sha256sum's.
var bySize = map[int]string{4: "xxh32", 8: "xxh64", 16: "xxh3-128", 32: "sha256"}

// Resolve returns the algorithm of l: the one the line names; else alg,
// when the reader names one (nil: none), which must have l.Sum's length;
// else the one xxhsum and sha256sum would read by the length (8, 16, 32
// or 64 hex digits: XXH32, XXH64, XXH128, SHA-256). Errors wrap
// ErrAlgorithm.
func (l Line) Resolve(alg *csum.Algorithm) (*csum.Algorithm, error) {
	switch {
	case l.Algorithm != nil:
		return l.Algorithm, nil
	case alg != nil:
		if len(l.Sum) != alg.Size {
			return nil, fmt.Errorf("%w: %d hex digits, and %s has %d", ErrAlgorithm, 2*len(l.Sum), alg.Name, 2*alg.Size)
		}
		return alg, nil
	}
	name, ok := bySize[len(l.Sum)]
	if !ok {
		return nil, fmt.Errorf("%w: %d hex digits fit none of xxh32, xxh64, xxh3-128, sha256 (say which with -alg)", ErrAlgorithm, 2*len(l.Sum))
	}
	return mustLookup(name), nil
}

func mustLookup(name string) *csum.Algorithm {
	a, err := csum.Lookup(name)
	if err != nil {
		panic(err)
	}
	return a
}
