package csum

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
)

// Measurement is a bandwidth measured on this machine: the median, over
// several rounds, of the bytes one kernel processes per second.
type Measurement struct {
	// Name is an algorithm's name, "copy+NAME" for its fused copy, or a
	// baseline: "read" (ReadWords) or "copy" (the faster of Copy and
	// Go's copy at that size).
	Name string  `json:"algorithm"`
	Size int     `json:"size"` // bytes per call
	GBps float64 `json:"gbps"` // median, in 10^9 bytes per second
}

// MeasureOptions tunes the measurements. The zero value measures five
// rounds of at least 20 ms each.
type MeasureOptions struct {
	Rounds  int           // rounds per measurement; the median is kept
	MinTime time.Duration // minimum duration of a round
	// Progress, if set, is called after each measurement with the number
	// done and the total.
	Progress func(done, total int)
}

func (o MeasureOptions) rounds() int {
	if o.Rounds > 0 {
		return o.Rounds
	}
	return 5
}

func (o MeasureOptions) minTime() time.Duration {
	if o.MinTime > 0 {
		return o.MinTime
	}
	return 20 * time.Millisecond
}

// Measure measures each named kernel at each size: algorithm names, their
// fused "copy+NAME" forms, and the baselines "read" and "copy". Buffers are
// filled with random bytes first; untouched memory would read as the
// kernel's shared zero page and flatter every loop.
func Measure(names []string, sizes []int, opts MeasureOptions) ([]Measurement, error) {
	for _, n := range names { // all names good before any measurement
		if _, err := kernel(n, 64); err != nil {
			return nil, err
		}
	}
	var out []Measurement
	total, done := len(names)*len(sizes), 0
	for _, size := range sizes {
		src, dst := randomBytes(size, 1), randomBytes(size, 2)
		for _, name := range names {
			fn, _ := kernel(name, size)
			gbps := bandwidth(func(n int) { fn(src, dst, n) }, size, opts)
			out = append(out, Measurement{Name: name, Size: size, GBps: gbps})
			done++
			if opts.Progress != nil {
				opts.Progress(done, total)
			}
		}
	}
	return out, nil
}

var sinkMeasure uint64

// kernel returns the function that Measure times for a name at a size: it
// runs the kernel n times, so that one indirect call covers many runs and
// 64-byte messages measure the checksum, not the harness.
func kernel(name string, size int) (func(src, dst []byte, n int), error) {
	switch name {
	case "read":
		return func(src, _ []byte, n int) {
			var acc uint64
			for range n {
				acc ^= ReadWords(src)
			}
			sinkMeasure ^= acc
		}, nil
	case "copy":
		// The faster of the two plain copies at this size, decided by a
		// short trial, so that "copy" is the bound to beat.
		if fastestCopy(size) {
			return func(src, dst []byte, n int) {
				for range n {
					Copy(dst, src)
				}
			}, nil
		}
		return func(src, dst []byte, n int) {
			for range n {
				copy(dst, src)
			}
		}, nil
	}
	if base, ok := strings.CutPrefix(name, "copy+"); ok {
		a, err := Lookup(base)
		if err != nil {
			return nil, err
		}
		return func(src, dst []byte, n int) {
			var acc uint64
			for range n {
				acc ^= a.CopySum(dst, src).Lo
			}
			sinkMeasure ^= acc
		}, nil
	}
	a, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return func(src, _ []byte, n int) {
		var acc uint64
		for range n {
			acc ^= a.Sum(src).Lo
		}
		sinkMeasure ^= acc
	}, nil
}

var (
	fastestMu     sync.Mutex
	fastestCopies = map[int]bool{}
)

// fastestCopy reports whether Copy moves size bytes faster than Go's copy
// here; the trial is made once per size.
func fastestCopy(size int) bool {
	fastestMu.Lock()
	defer fastestMu.Unlock()
	if f, ok := fastestCopies[size]; ok {
		return f
	}
	src, dst := randomBytes(size, 3), randomBytes(size, 4)
	opts := MeasureOptions{Rounds: 3, MinTime: 5 * time.Millisecond}
	chunked := bandwidth(func(n int) {
		for range n {
			Copy(dst, src)
		}
	}, size, opts)
	builtin := bandwidth(func(n int) {
		for range n {
			copy(dst, src)
		}
	}, size, opts)
	fastestCopies[size] = chunked > builtin
	return chunked > builtin
}

// bandwidth returns the median GB/s of fn(n), which processes size bytes n
// times, over the rounds.
func bandwidth(fn func(n int), size int, opts MeasureOptions) float64 {
	fn(1) // warm up: page faults, caches, branch predictors
	// Runs per round, so that a round lasts at least MinTime.
	n := 1
	for {
		start := time.Now()
		fn(n)
		if d := time.Since(start); d >= opts.minTime()/4 || n >= 1<<30 {
			n = max(1, int(float64(n)*float64(opts.minTime())/float64(max(d, time.Nanosecond))))
			break
		}
		n *= 4
	}
	rates := make([]float64, opts.rounds())
	for r := range rates {
		start := time.Now()
		fn(n)
		rates[r] = float64(size) * float64(n) / time.Since(start).Seconds() / 1e9
	}
	slices.Sort(rates)
	return rates[len(rates)/2]
}

func randomBytes(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	p := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		p[i] = byte(rng.Uint32())
	}
	return p
}

// Fastest measures the algorithms that detect at least need, on messages
// of size bytes, and returns the fastest with all the measurements. With
// no candidates given it considers the whole registry.
func Fastest(size int, need Detection, opts MeasureOptions, candidates ...*Algorithm) (*Algorithm, []Measurement, error) {
	if len(candidates) == 0 {
		candidates = registry
	}
	var names []string
	for _, a := range candidates {
		if a.Detects.AtLeast(need) {
			names = append(names, a.Name)
		}
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("csum: no algorithm detects %+v", need)
	}
	ms, err := Measure(names, []int{size}, opts)
	if err != nil {
		return nil, nil, err
	}
	best := ms[0]
	for _, m := range ms[1:] {
		if m.GBps > best.GBps {
			best = m
		}
	}
	a, _ := Lookup(best.Name)
	return a, ms, nil
}
