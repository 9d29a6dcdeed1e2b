package sig

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// DefaultSpec is the algebra used when none is named: gfd over GF(2^64),
// one 64-bit checksum whose multiplier has order 2^64-1. It tells apart two
// type signatures of up to 2^63 elements that differ by the substitution of
// one basic type for another at one place, over a run, or at one member of
// every copy of a repeated unit, and any two substituted elements in
// signatures of up to 1.47·10^13 elements (the proofs are at gfd64). The
// earlier default, gfd:w=16,m=4, detects any four substitutions but only up
// to 65535 elements: beyond, a run of 65535·k ints hashes as the same run
// of floats.
// Concat and Repeat stay O(1) in the counts; at 10^12 elements they took
// 52 and 64 ns against 9.4 and 21 ns for gfd:w=16,m=4 (BenchmarkConcat,
// BenchmarkRepeat, one run, shared machine), the price of 64-bit products
// instead of 16-bit log tables, while hashing an expanded signature got 8×
// faster.
const DefaultSpec = gfd64Spec

// MinWidth is the narrowest element an algebra may keep: the low 6 bits of
// the basic types' codes are distinct, non-zero and not all ones, which every
// detection argument needs; 5 bits are not (aint's are 0). ParseAlgebra
// refuses w < MinWidth.
const MinWidth = 6

// ErrUnknownAlgebra is wrapped by ParseAlgebra's errors.
var ErrUnknownAlgebra = errors.New("sig: bad algebra spec")

var algebraCache sync.Map // canonical spec → Algebra

// Default returns the algebra of DefaultSpec.
func Default() Algebra {
	a, err := ParseAlgebra(DefaultSpec)
	if err != nil {
		panic(err)
	}
	return a
}

// ParseAlgebra returns the algebra a spec names:
//
//	gfd:w=W,m=M       Galois-field checksums, 6 ≤ W ≤ 32, W·M ≤ 64, M < 2^W-1;
//	                  or W = 64, M = 1 (the default)
//	xor-bs1:w=W,m=M   Gropp's XOR and rotate, 6 ≤ W ≤ 64, W·M ≤ 64, M < W
//	mmm-bs1:w=W,m=M   sum modulo 2^W-1 and rotate, same ranges
//	crc16-ccitt-false, crc16-xmodem, crc16-arc, crc32, crc32-bzip2, crc32c
//	                  (also by their CRC RevEng catalogue names, e.g. crc-32/iscsi)
//
// Names are case-insensitive. The same spec returns the same Algebra value,
// so algebras can be compared with ==.
func ParseAlgebra(spec string) (Algebra, error) {
	if a, ok := algebraCache.Load(spec); ok {
		return a.(Algebra), nil
	}
	a, err := parseAlgebra(spec)
	if err != nil {
		return nil, err
	}
	// Cached under the canonical spec only, so "GFD:w=8,m=2" and
	// "gfd:m=2,w=8" share one value and the cache stays bounded.
	a2, _ := algebraCache.LoadOrStore(a.String(), a)
	return a2.(Algebra), nil
}

func parseAlgebra(spec string) (Algebra, error) {
	if len(spec) > 64 {
		return nil, fmt.Errorf("%w: %d bytes long", ErrUnknownAlgebra, len(spec))
	}
	name, params, hasParams := strings.Cut(strings.ToLower(strings.TrimSpace(spec)), ":")
	name = strings.TrimSpace(name)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrUnknownAlgebra, spec, fmt.Sprintf(format, args...))
	}
	for _, m := range crcModels {
		if name == m.name || slices.Contains(m.aliases, name) {
			if hasParams {
				return nil, bad("%s takes no parameters", m.name)
			}
			return newCRC(m), nil
		}
	}
	if name != "gfd" && name != "xor-bs1" && name != "mmm-bs1" {
		return nil, bad("unknown algebra %q (want gfd:w=W,m=M, xor-bs1:w=W,m=M, mmm-bs1:w=W,m=M or one of %s)",
			name, strings.Join(CRCNames(), ", "))
	}
	if !hasParams {
		return nil, bad("%s needs w and m, e.g. %s:w=16,m=2", name, name)
	}
	vals := map[string]int{}
	for _, kv := range strings.Split(params, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, bad("expected key=value, got %q", kv)
		}
		if k != "w" && k != "m" {
			return nil, bad("unknown parameter %q (want w and m)", k)
		}
		if _, dup := vals[k]; dup {
			return nil, bad("parameter %s given twice", k)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 64 {
			return nil, bad("%s=%q is not a number from 0 to 64", k, v)
		}
		vals[k] = n
	}
	w, okW := vals["w"]
	m, okM := vals["m"]
	if !okW || !okM {
		return nil, bad("%s needs both w and m", name)
	}
	var (
		a   Algebra
		err error
	)
	switch {
	case w < MinWidth:
		// Each element is the low w bits of its code; those are distinct
		// and non-zero among the basic types only from 6 bits on (at w = 4,
		// 2.5 % of substitutions go unseen; at w ≤ 5 aint is 0).
		err = fmt.Errorf("w=%d: the basic types need w ≥ %d to hash apart (below, their low w bits coincide or are 0)", w, MinWidth)
	case name == "gfd" && w == 64 && m == 1:
		a = gfd64{}
	case name == "gfd" && w == 64:
		err = fmt.Errorf("gfd: w=64 takes m=1 only (got m=%d)", m)
	case name == "gfd":
		a, err = newGFD(uint(w), m)
	case name == "xor-bs1":
		a, err = newBS1(uint(w), m, true)
	default:
		a, err = newBS1(uint(w), m, false)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrUnknownAlgebra, spec, err)
	}
	return a, nil
}

// CRCNames returns the canonical names of the CRC algebras.
func CRCNames() []string {
	names := make([]string, len(crcModels))
	for i, m := range crcModels {
		names[i] = m.name
	}
	return names
}
