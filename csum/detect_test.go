package csum

import "testing"

// Every algorithm is held to the Detection it documents, on 1 KiB random
// messages: Always and Likely must catch every trial (a Likely miss has a
// probability of about 2^-32 or less per trial), Mostly at least 90 %, and
// Never none (sum and xor do not see swapped words).
func TestDetection(t *testing.T) {
	trials := 1000
	if testing.Short() {
		trials = 200
	}
	for _, a := range All() {
		for _, r := range MeasureDetection(a, 1024, trials, 1) {
			level := a.Detects.Level(r.Fault)
			ok := true
			switch level {
			case Always, Likely:
				ok = r.Detected == r.Trials
			case Mostly:
				ok = r.Percent() >= 90
			case Never:
				ok = r.Detected == 0
			}
			if !ok {
				t.Errorf("%s, %s: %d of %d detected, but it claims %s", a.Name, r.Fault, r.Detected, r.Trials, level)
			}
		}
	}
}

func TestDetectionOrder(t *testing.T) {
	strong := Detection{Always, Always, Always, Likely}
	if !crc32cAlg.Detects.AtLeast(strong) || sumAlg.Detects.AtLeast(strong) {
		t.Error("AtLeast")
	}
	if Never.String() != "never" || Always.String() != "always" || Swap64.String() != "swap" {
		t.Error("names")
	}
}
