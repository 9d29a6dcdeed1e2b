package csum

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// EnvVar names the environment variable that overrides the default
// checksum: SIGCHECK_CSUM=crc32c.
const EnvVar = "SIGCHECK_CSUM"

// BuiltinDefault is the default checksum when neither EnvVar nor a tuning
// says otherwise: XXH3-64, the fastest here at every size from 4 KiB and
// with no structured blind spot.
const BuiltinDefault = "xxh3"

// DefaultNeed is what the tuner requires of a default checksum unless
// told otherwise: no structured blind spot for any class of error. It
// rules out sum, xor, Adler-32 (which misses words swapped when their
// bytes add up alike) and Knuth's hash.
var DefaultNeed = Detection{Bit1: Likely, Bit2: Likely, Bit3: Likely, Swap: Likely}

// Tuning is the outcome of auto-tuning on one machine: for each message
// size, the fastest algorithm that detects at least Need.
type Tuning struct {
	Machine  string        `json:"machine"` // where it was measured; a tuning is only trusted there
	Need     Detection     `json:"need"`    // what the choices had to detect
	When     time.Time     `json:"when"`    // when it was measured
	Choices  []Choice      `json:"choices"` // by increasing size
	Measured []Measurement `json:"measured"`
}

// Choice is the algorithm picked for messages of Size bytes and up.
type Choice struct {
	Size      int    `json:"size"`
	Algorithm string `json:"algorithm"`
}

// Tune measures every algorithm that detects at least need, at each size,
// beside the read and copy baselines, and picks the fastest per size.
func Tune(sizes []int, need Detection, opts MeasureOptions) (*Tuning, error) {
	names := []string{"read", "copy"}
	for _, a := range registry {
		if a.Detects.AtLeast(need) {
			names = append(names, a.Name)
		}
	}
	if len(names) == 2 {
		return nil, fmt.Errorf("csum: no algorithm detects %+v", need)
	}
	ms, err := Measure(names, sizes, opts)
	if err != nil {
		return nil, err
	}
	t := &Tuning{Machine: Machine(), Need: need, When: time.Now().UTC(), Measured: ms}
	for _, size := range sizes {
		var best Measurement
		for _, m := range ms {
			if m.Size == size && m.Name != "read" && m.Name != "copy" && m.GBps > best.GBps {
				best = m
			}
		}
		t.Choices = append(t.Choices, Choice{Size: size, Algorithm: best.Name})
	}
	return t, nil
}

// For returns the algorithm the tuning picked for messages of size bytes:
// the choice for the largest measured size not above it (the smallest one
// for smaller messages).
func (t *Tuning) For(size int) *Algorithm {
	if len(t.Choices) == 0 {
		return nil
	}
	pick := t.Choices[0].Algorithm
	for _, c := range t.Choices {
		if c.Size <= size {
			pick = c.Algorithm
		}
	}
	a, err := Lookup(pick)
	if err != nil {
		return nil
	}
	return a
}

// Machine describes this machine for tunings: OS, architecture, CPU model
// and number of CPUs. A tuning made elsewhere does not apply here.
func Machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%s/%s, %s, %d CPUs", runtime.GOOS, runtime.GOARCH, model, runtime.NumCPU())
}

// TuningPath returns where the tuning is kept: sigcheck/csum-tuning.json in
// the user's cache directory.
func TuningPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("csum: no cache directory for the tuning: %w", err)
	}
	return filepath.Join(dir, "sigcheck", "csum-tuning.json"), nil
}

// Save writes the tuning to path, creating its directory; the write is
// atomic (a temporary file renamed), so a reader never sees half a file.
func (t *Tuning) Save(path string) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".csum-tuning-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// ErrOtherMachine is returned by LoadTuning for a tuning made elsewhere.
var ErrOtherMachine = errors.New("csum: tuning made on another machine")

// LoadTuning reads a tuning saved by Save. A tuning made on another
// machine, or that names an unknown algorithm, is refused.
func LoadTuning(path string) (*Tuning, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Tuning
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("csum: tuning %s: %w", path, err)
	}
	if t.Machine != Machine() {
		return nil, fmt.Errorf("%w: %s, not %s", ErrOtherMachine, t.Machine, Machine())
	}
	for _, c := range t.Choices {
		if _, err := Lookup(c.Algorithm); err != nil {
			return nil, fmt.Errorf("csum: tuning %s: %w", path, err)
		}
	}
	return &t, nil
}

var defaults struct {
	once   sync.Once
	env    *Algorithm
	tuning *Tuning
}

// Default returns the checksum to use for messages of size bytes when the
// caller has no preference: the algorithm named by the SIGCHECK_CSUM
// environment variable if it is set and valid; else the one `sigcheck
// tune` stored for this machine and size; else BuiltinDefault. The
// environment and the tuning are read once, at the first call.
func Default(size int) *Algorithm {
	defaults.once.Do(func() {
		if name := os.Getenv(EnvVar); name != "" {
			defaults.env, _ = Lookup(name)
		}
		if path, err := TuningPath(); err == nil {
			defaults.tuning, _ = LoadTuning(path)
		}
	})
	return pick(defaults.env, defaults.tuning, size)
}

// pick is Default's rule: the environment, then the tuning, then the
// built-in default.
func pick(env *Algorithm, t *Tuning, size int) *Algorithm {
	if env != nil {
		return env
	}
	if t != nil {
		if a := t.For(size); a != nil {
			return a
		}
	}
	a, _ := Lookup(BuiltinDefault)
	return a
}
