package csum

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var quick = MeasureOptions{Rounds: 1, MinTime: time.Millisecond}

func TestMeasure(t *testing.T) {
	var calls int
	opts := quick
	opts.Progress = func(done, total int) {
		calls++
		if done > total {
			t.Errorf("progress %d/%d", done, total)
		}
	}
	ms, err := Measure([]string{"read", "copy", "xxh3", "copy+crc32c"}, []int{64, 4096}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 8 || calls != 8 {
		t.Fatalf("%d measurements, %d progress calls", len(ms), calls)
	}
	for _, m := range ms {
		if m.GBps <= 0 || m.Size == 0 || m.Name == "" {
			t.Errorf("measurement %+v", m)
		}
	}
	if _, err := Measure([]string{"xxh3", "copy+md5"}, []int{64}, quick); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown kernel: %v", err)
	}
}

func TestFastestAndTune(t *testing.T) {
	need := Detection{Always, Always, Always, Likely}
	a, ms, err := Fastest(4096, need, quick)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Detects.AtLeast(need) || len(ms) != 4 { // the four CRCs
		t.Errorf("Fastest picked %s among %d", a.Name, len(ms))
	}
	if _, _, err := Fastest(64, Detection{Swap: Always}, quick); err == nil {
		t.Error("nothing detects every swap, yet Fastest found something")
	}
	tu, err := Tune([]int{64, 65536}, DefaultNeed, quick)
	if err != nil {
		t.Fatal(err)
	}
	if len(tu.Choices) != 2 || tu.Machine != Machine() {
		t.Fatalf("tuning %+v", tu)
	}
	for _, c := range tu.Choices {
		a, _ := Lookup(c.Algorithm)
		if a == nil || !a.Detects.AtLeast(DefaultNeed) {
			t.Errorf("choice %+v", c)
		}
	}
	if tu.For(1) != tu.For(64) || tu.For(1<<30).Name != tu.Choices[1].Algorithm {
		t.Error("For does not pick by size")
	}

	path := filepath.Join(t.TempDir(), "sub", "tuning.json")
	if err := tu.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadTuning(path)
	if err != nil || len(back.Choices) != 2 || back.Choices[0] != tu.Choices[0] || back.Need != DefaultNeed {
		t.Fatalf("LoadTuning: %+v, %v", back, err)
	}
	// A tuning from elsewhere, a corrupt one, one naming an unknown algorithm.
	other := *tu
	other.Machine = "plan9/mips, abacus, 1 CPUs"
	other.Save(path)
	if _, err := LoadTuning(path); !errors.Is(err, ErrOtherMachine) {
		t.Errorf("other machine: %v", err)
	}
	os.WriteFile(path, []byte("{not json"), 0o644)
	if _, err := LoadTuning(path); err == nil {
		t.Error("corrupt tuning loaded")
	}
	bad := *tu
	bad.Choices = []Choice{{64, "md5"}}
	bad.Save(path)
	if _, err := LoadTuning(path); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown algorithm: %v", err)
	}
	if _, err := Tune([]int{64}, Detection{Swap: Always}, quick); err == nil {
		t.Error("Tune with an impossible need")
	}
}

func TestDefaultPick(t *testing.T) {
	crc, _ := Lookup("crc32c")
	fl, _ := Lookup("fletcher64")
	tu := &Tuning{Choices: []Choice{{64, "fletcher64"}, {4096, "crc32c"}}}
	if pick(nil, nil, 10).Name != BuiltinDefault {
		t.Error("built-in default")
	}
	if pick(nil, tu, 100) != fl || pick(nil, tu, 1<<20) != crc {
		t.Error("tuning")
	}
	if pick(crc, tu, 100) != crc {
		t.Error("the environment comes first")
	}
	if d := Default(1 << 20); d == nil || !strings.Contains(strings.Join(Names(), " "), d.Name) {
		t.Errorf("Default = %v", d)
	}
}
