package csum

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Level is how surely a checksum catches one class of error.
type Level uint8

const (
	// Never: the checksum cannot see this error (sum and xor do not see two
	// words swapped).
	Never Level = iota
	// Mostly: it misses a structured share of cases, from about one in a
	// hundred to one in several thousand (xor misses two flips at the same
	// bit of two words; Knuth's hash two flips of bit 63).
	Mostly
	// Likely: no structured blind spot is known; it misses about one error
	// in 2^(checksum bits), however the error looks.
	Likely
	// Always: it catches every such error, by a property of its arithmetic
	// (the CRCs' Hamming distance, the bijective steps of FNV and Knuth).
	Always
)

var levelNames = [...]string{"never", "mostly", "likely", "always"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// MarshalText writes the level's name, as in the stored tuning.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level's name.
func (l *Level) UnmarshalText(b []byte) error {
	i := slices.Index(levelNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("csum: unknown detection level %q", b)
	}
	*l = Level(i)
	return nil
}

// Detection is what a checksum catches, by class of error: one, two or
// three bits flipped anywhere in a message, or two different 64-bit words
// of it swapped. The guarantees marked Always hold for messages up to
// 2^28 bytes (the CRCs' Hamming distance of 4 holds to 2^31 bits;
// Adler-32's two-bit guarantee to 65521 bytes between the flips).
type Detection struct {
	Bit1 Level `json:"bit1"`
	Bit2 Level `json:"bit2"`
	Bit3 Level `json:"bit3"`
	Swap Level `json:"swap"`
}

// AtLeast reports whether d is at least as strong as need in every class.
func (d Detection) AtLeast(need Detection) bool {
	return d.Bit1 >= need.Bit1 && d.Bit2 >= need.Bit2 && d.Bit3 >= need.Bit3 && d.Swap >= need.Swap
}

// Fault is a class of error that Detection describes.
type Fault uint8

const (
	Flip1  Fault = iota // one bit flipped
	Flip2               // two distinct bits flipped
	Flip3               // three distinct bits flipped
	Swap64              // two different aligned 64-bit words swapped
)

// Faults lists the classes in the order of Detection's fields.
var Faults = []Fault{Flip1, Flip2, Flip3, Swap64}

var faultNames = [...]string{"1 bit", "2 bits", "3 bits", "swap"}

func (f Fault) String() string { return faultNames[f] }

// Level returns d's level for one class of fault.
func (d Detection) Level(f Fault) Level {
	return [...]Level{d.Bit1, d.Bit2, d.Bit3, d.Swap}[f]
}

// Rate is the outcome of a detection experiment: how many of Trials
// corrupted messages had a different checksum.
type Rate struct {
	Fault            Fault
	Detected, Trials int
}

// Percent returns the detected share in percent.
func (r Rate) Percent() float64 { return 100 * float64(r.Detected) / float64(max(r.Trials, 1)) }

// MeasureDetection corrupts a random message of size bytes (a multiple of
// 8, at least 16) trials times for each class of fault and counts how
// often the checksum changes. It is reproducible for a given seed.
func MeasureDetection(a *Algorithm, size, trials int, seed uint64) []Rate {
	if size < 16 || size%8 != 0 {
		panic("csum: MeasureDetection: size must be a multiple of 8, at least 16")
	}
	rng := rand.New(rand.NewPCG(seed, uint64(size)))
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(rng.Uint32())
	}
	want := a.Sum(msg)
	var rates []Rate
	for _, f := range Faults {
		r := Rate{Fault: f, Trials: trials}
		for range trials {
			undo := corrupt(msg, f, rng)
			if a.Sum(msg) != want {
				r.Detected++
			}
			undo()
		}
		rates = append(rates, r)
	}
	return rates
}

// corrupt applies one fault of class f to msg and returns what undoes it.
func corrupt(msg []byte, f Fault, rng *rand.Rand) func() {
	if f == Swap64 {
		words := len(msg) / 8
		for {
			i, j := rng.IntN(words), rng.IntN(words)
			a, b := msg[8*i:8*i+8], msg[8*j:8*j+8]
			if i == j || bytes.Equal(a, b) {
				continue
			}
			swap := func() {
				var t [8]byte
				copy(t[:], a)
				copy(a, b)
				copy(b, t[:])
			}
			swap()
			return swap
		}
	}
	n := int(f) + 1 // Flip1 … Flip3
	bits := make([]int, 0, 3)
	for len(bits) < n {
		b := rng.IntN(8 * len(msg))
		if !slices.Contains(bits, b) {
			bits = append(bits, b)
		}
	}
	flip := func() {
		for _, b := range bits {
			msg[b/8] ^= 1 << (b % 8)
		}
	}
	flip()
	return flip
}
