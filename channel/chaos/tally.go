package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Tally adds up a campaign's results, for its summary.
type Tally struct {
	Schedules int
	Bad       int            // schedules that broke a promise; their counts are not in Sum
	Transport map[string]int // schedules by transport
	Faulty    int            // with at least one fault drawn
	Lost      int            // with a link lost or a peer killed
	Silent    int            // with a receiver silent through a sender's probes (ErrSilent)
	Sum       Result
}

// Add counts schedule s, whose run gave r.
func (t *Tally) Add(s Schedule, r Result) {
	t.Schedules++
	if t.Transport == nil {
		t.Transport = map[string]int{}
	}
	t.Transport[s.Transport]++
	if r.Bad() {
		t.Bad++
		return
	}
	if len(s.Faults) > 0 {
		t.Faulty++
	}
	if r.LinkLost {
		t.Lost++
	}
	if r.Silent {
		t.Silent++
	}
	for k := range kinds {
		t.Sum.Injected[k] += r.Injected[k]
	}
	t.Sum.Ops += r.Ops
	t.Sum.Failed += r.Failed
	t.Sum.Damaged += r.Damaged
	t.Sum.Detected += r.Detected
	t.Sum.Repaired += r.Repaired
}

// Summary returns the campaign's two lines: schedules, then faults and
// outcomes.
func (t *Tally) Summary() [2]string {
	var by string
	for k := range kinds {
		by += fmt.Sprintf(" %s %d", Kind(k), t.Sum.Injected[k])
	}
	var over []string
	for _, tr := range slices.Sorted(maps.Keys(t.Transport)) {
		over = append(over, fmt.Sprintf("%d %s", t.Transport[tr], tr))
	}
	return [2]string{
		fmt.Sprintf("%d schedules (%s; %d with faults, %d with a link lost or a peer killed, %d with a receiver silent through a sender's probes): %d bad",
			t.Schedules, strings.Join(over, ", "), t.Faulty, t.Lost, t.Silent, t.Bad),
		fmt.Sprintf("faults that hit a frame:%s; detected %d, repaired %d; %d of %d operations failed cleanly; %d unprotected receives delivered damage",
			by, t.Sum.Detected, t.Sum.Repaired, t.Sum.Failed, t.Sum.Ops, t.Sum.Damaged),
	}
}
