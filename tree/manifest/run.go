package manifest

import "fmt"

// A Run is a run of consecutive segments of a file: segments First to
// First+N-1. Reports list segments as runs, so that what a report holds
// grows with the damage's pieces, not with the size a file claims.
type Run struct {
	First int `json:"first_segment"`
	N     int `json:"segments"`
}

func (r Run) end() int { return r.First + r.N }

func (r Run) String() string {
	if r.N == 1 {
		return fmt.Sprintf("segment %d", r.First)
	}
	return fmt.Sprintf("segments %d-%d", r.First, r.end()-1)
}

// Count returns the segments of the runs.
func Count(runs []Run) int64 {
	var n int64
	for _, r := range runs {
		n += int64(r.N)
	}
	return n
}

// appendSegment adds segment j, after every segment the runs hold.
func appendSegment(runs []Run, j int) []Run {
	if k := len(runs) - 1; k >= 0 && runs[k].end() == j {
		runs[k].N++
		return runs
	}
	return append(runs, Run{j, 1})
}

// appendRun adds a run that starts at or after the end of the last.
func appendRun(runs []Run, r Run) []Run {
	if r.N <= 0 {
		return runs
	}
	if k := len(runs) - 1; k >= 0 && runs[k].end() == r.First {
		runs[k].N += r.N
		return runs
	}
	return append(runs, r)
}

// intersect returns the segments in both sorted, disjoint lists of runs.
func intersect(a, b []Run) []Run {
	var out []Run
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i].First, b[j].First), min(a[i].end(), b[j].end())
		if lo < hi {
			out = appendRun(out, Run{lo, hi - lo})
		}
		if a[i].end() < b[j].end() {
			i++
		} else {
			j++
		}
	}
	return out
}

// union returns the segments in either sorted, disjoint list of runs.
func union(a, b []Run) []Run {
	var out []Run
	add := func(r Run) {
		if k := len(out) - 1; k >= 0 && out[k].end() >= r.First {
			out[k].N = max(out[k].end(), r.end()) - out[k].First
			return
		}
		out = append(out, r)
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || i < len(a) && a[i].First <= b[j].First {
			add(a[i])
			i++
		} else {
			add(b[j])
			j++
		}
	}
	return out
}

// subtract returns the segments of a that are not in b (both sorted,
// disjoint lists of runs).
func subtract(a, b []Run) []Run {
	var out []Run
	j := 0
	for _, r := range a {
		lo := r.First
		for j < len(b) && b[j].end() <= lo {
			j++
		}
		for k := j; k < len(b) && b[k].First < r.end(); k++ {
			out = appendRun(out, Run{lo, b[k].First - lo})
			lo = max(lo, b[k].end())
		}
		out = appendRun(out, Run{lo, r.end() - lo})
	}
	return out
}
