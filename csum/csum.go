package csum

import (
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
)

// Value is a checksum of up to 128 bits. Hi is zero for checksums of 64
// bits or fewer; a Value compares with ==. For the 256-bit digests
// (sha256, blake3) it holds their leftmost 128 bits; Hash.Sum gives the
// whole digest.
type Value struct{ Hi, Lo uint64 }

// Hash is a running checksum: a hash.Hash64 that also gives its whole
// value, which is wider than 64 bits for XXH3-128 (whose Sum64 is the low
// half). Sum appends the value's Size bytes, most significant first, as
// the standard library's hashes do.
type Hash interface {
	hash.Hash64
	Value() Value
}

// Algorithm is one checksum of the registry. Its methods are safe for
// concurrent use; each New gives an independent running checksum.
type Algorithm struct {
	Name    string
	Aliases []string
	Size    int // bytes in the checksum: 4, 8 or 16
	// Detects says which errors the checksum is sure, likely or unable to
	// catch (see Detection); TestDetection holds each algorithm to it.
	Detects Detection
	// About says what the algorithm is and where its definition comes from.
	About string

	sum      func(p []byte) Value // one-shot
	new      func() Hash          // streaming, total length unknown
	newSized func(total int) Hash // streaming, total length known (for algorithms seeded with it)
	combine  func(a, b Value, lenB uint64) Value
	align    int // Combine needs len(A) to be a multiple of align
	xxh3     int // 64 or 128 for XXH3, whose CopySum has a kernel of its own
}

// ErrUnknown is returned (wrapped) for a name that is not in the registry.
var ErrUnknown = errors.New("csum: unknown algorithm")

// Sum returns the checksum of p.
func (a *Algorithm) Sum(p []byte) Value { return a.sum(p) }

// AppendSum appends the checksum of p to b: Size bytes, most significant
// first, as a Hash's Sum appends them — for sha256 and blake3 the whole
// digest, of which Sum's Value keeps the leftmost 128 bits.
func (a *Algorithm) AppendSum(b, p []byte) []byte {
	if a.Size <= 16 {
		return appendValue(b, a.sum(p), a.Size)
	}
	h := a.new()
	h.Write(p)
	return h.Sum(b)
}

// New returns a running checksum.
func (a *Algorithm) New() Hash { return a.new() }

// SeededWithLength reports whether the algorithm's state starts from the
// total length (MurmurHash64A, SuperFastHash): its New keeps all the data
// until Sum, and only NewFor, told the length, streams.
func (a *Algorithm) SeededWithLength() bool { return a.newSized != nil }

// NewFor returns a running checksum of exactly total bytes, which lets
// the algorithms seeded with the length (MurmurHash64A, SuperFastHash)
// stream instead of keeping the data until Sum. Writing another number of
// bytes gives a meaningless value for those two.
func (a *Algorithm) NewFor(total int64) Hash {
	if a.newSized != nil && total >= 0 {
		return a.newSized(int(total))
	}
	return a.new()
}

// Combinable reports whether Combine is available: whether the checksum of
// a concatenation follows from the checksums of the parts.
func (a *Algorithm) Combinable() bool { return a.combine != nil }

// CombineAlign returns the granularity of Combine: the checksum of A‖B
// follows from those of A and B when len(A) is a multiple of it (1 for the
// CRCs and Adler-32; the word size for sum, xor and Fletcher-64, which
// checksum aligned words). It is 0 for an algorithm that does not combine.
func (a *Algorithm) CombineAlign() int {
	if a.combine == nil {
		return 0
	}
	return a.align
}

// Combine returns the checksum of A‖B from the checksum x of A, the
// checksum y of B and the length of B, in O(log lenB) or better. len(A)
// must be a multiple of CombineAlign. It panics for an algorithm that does
// not combine (see Combinable).
func (a *Algorithm) Combine(x, y Value, lenB int64) Value {
	if a.combine == nil {
		panic("csum: " + a.Name + " does not combine")
	}
	return a.combine(x, y, uint64(lenB))
}

// Format returns v in lowercase hexadecimal, two digits per byte of the
// checksum, most significant first: what %08x or %016x print, and for
// XXH3-128 the high half then the low. For the 256-bit digests it is the
// 32 digits of the 128 bits a Value holds; hex of Hash.Sum is the whole.
func (a *Algorithm) Format(v Value) string {
	if a.Size > 8 {
		return fmt.Sprintf("%016x%016x", v.Hi, v.Lo)
	}
	return fmt.Sprintf("%0*x", 2*a.Size, v.Lo)
}

func (a *Algorithm) String() string { return a.Name }

// registry lists the algorithms in the order of the tables: the paper's
// set (fastest and weakest first), then the CRCs and XXH3 that transfers
// use, then what files are exchanged with (the catalogue's CRC-32 and
// CRC-64/ECMA-182, xxhsum's XXH32 and XXH64, SHA-256, BLAKE3). New ones
// go at the end: channel numbers the algorithms in this order on the wire.
var registry = []*Algorithm{
	sumAlg, xorAlg, adler32Alg, fletcher64Alg, oaatAlg, fnv1a64Alg, knuthAlg,
	murmur64aAlg, superfastAlg, crc32cAlg, crc64Alg, xxh3Alg, xxh3_128Alg,
	crc32Alg, crc64ecmaAlg, xxh32Alg, xxh64Alg, sha256Alg, blake3Alg,
}

// All returns the registered algorithms.
func All() []*Algorithm { return slices.Clone(registry) }

// Names returns the names of the registered algorithms.
func Names() []string {
	names := make([]string, len(registry))
	for i, a := range registry {
		names[i] = a.Name
	}
	return names
}

// Lookup returns the algorithm with this name or alias (case-insensitive).
func Lookup(name string) (*Algorithm, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, a := range registry {
		if a.Name == n || slices.Contains(a.Aliases, n) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknown, name, strings.Join(Names(), ", "))
}

// New returns a running checksum of the named algorithm.
func New(name string) (Hash, error) {
	a, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return a.New(), nil
}

// Checksum returns the checksum of p with the named algorithm.
func Checksum(name string, p []byte) (Value, error) {
	a, err := Lookup(name)
	if err != nil {
		return Value{}, err
	}
	return a.Sum(p), nil
}

func init() {
	for _, a := range registry {
		if a.new == nil {
			a.new = func() Hash { return &buffered{a: a} }
		}
	}
}
