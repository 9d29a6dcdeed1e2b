package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sigcheck/sigcheck/channel/replicate"
)

func TestParseRepConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	good := []struct {
		env  func(string) string
		want repConfig
	}{
		{env(), repConfig{seed: 1, replicas: 1, wait: defaultWait, perturb: true}},
		{env("SIGCHECK_REPLICATE", "3"), repConfig{r: 3, seed: 1, replicas: 1, wait: defaultWait, perturb: true}},
		{env("SIGCHECK_REPLICATE", "2", "SIGCHECK_REPLICATE_PROTOCOL", "All-to-All", "SIGCHECK_INJECT", "0.01",
			"SIGCHECK_INJECT_REPLICAS", "0, 1", "SIGCHECK_SEED", "7", "SIGCHECK_REPLICATE_WAIT", "2.5", "SIGCHECK_REPLICATE_PERTURB", "0"),
			repConfig{r: 2, protocol: protoAllToAll, inject: 0.01, replicas: 3, seed: 7, wait: 2.5}},
	}
	for _, c := range good {
		got, err := parseRepConfig(c.env)
		if err != nil {
			t.Errorf("%+v: %v", c.want, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("got %+v, want %+v", got, c.want)
		}
	}
	bad := []struct {
		env  func(string) string
		want string
	}{
		{env("SIGCHECK_REPLICATE", "4"), "want 2 (detection) or 3"},
		{env("SIGCHECK_REPLICATE", "x"), "want 2 (detection) or 3"},
		{env("SIGCHECK_REPLICATE", "1"), "want 2 (detection) or 3"},
		{env("SIGCHECK_REPLICATE", "3", "SIGCHECK_REPLICATE_PROTOCOL", "gossip"), "want msgplushash or alltoall"},
		{env("SIGCHECK_REPLICATE", "3", "SIGCHECK_INJECT", "2"), "probability"},
		{env("SIGCHECK_REPLICATE", "3", "SIGCHECK_INJECT", "NaN"), "probability"},
		{env("SIGCHECK_REPLICATE", "3", "SIGCHECK_INJECT_REPLICAS", "3"), "from 0 to 2"},
		{env("SIGCHECK_REPLICATE", "2", "SIGCHECK_INJECT_REPLICAS", "0,,1"), "from 0 to 1"},
		{env("SIGCHECK_REPLICATE", "3", "SIGCHECK_SEED", "-1"), "non-negative"},
		{env("SIGCHECK_REPLICATE", "3", "SIGCHECK_REPLICATE_WAIT", "0"), "more than 0"},
		{env("SIGCHECK_INJECT_REPLICAS", "0"), "SIGCHECK_REPLICATE is not"},
		{env("SIGCHECK_REPLICATE", "2", "SIGCHECK_REPLICATE_PERTURB", "yes"), "want 1"},
	}
	for _, c := range bad {
		_, err := parseRepConfig(c.env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one saying %q", err, c.want)
		}
	}
}

// TestPlaces: one node takes the paper's formula; several keep each rank's
// replicas apart, as channel/replicate's Spread does; a node with more
// ranks than the application has falls back to the formula and says so.
func TestPlaces(t *testing.T) {
	check := func(nodes []string, r int) []replicate.Place {
		t.Helper()
		ps, warn, err := places(nodes, r)
		if err != nil || warn != "" {
			t.Fatalf("places(%q, %d): %v, %q", nodes, r, err, warn)
		}
		seen := map[replicate.Place]bool{}
		for _, p := range ps {
			if seen[p] || p.Replica < 0 || p.Replica >= r || p.Virtual < 0 || p.Virtual >= len(nodes)/r {
				t.Fatalf("places(%q, %d) = %v: %v twice or out of range", nodes, r, ps, p)
			}
			seen[p] = true
		}
		return ps
	}
	one := check([]string{"a", "a", "a", "a", "a", "a"}, 3)
	for i, p := range one {
		if p != (replicate.Place{Virtual: i % 2, Replica: i / 2}) {
			t.Errorf("one node: rank %d at %+v, want the formula's", i, p)
		}
	}
	nodes := []string{"a", "b", "c", "a", "b", "c"}
	spread := check(nodes, 3)
	byRank := map[int]map[string]bool{}
	for i, p := range spread {
		if byRank[p.Virtual] == nil {
			byRank[p.Virtual] = map[string]bool{}
		}
		if byRank[p.Virtual][nodes[i]] {
			t.Errorf("rank %d has two replicas on node %s: %v", p.Virtual, nodes[i], spread)
		}
		byRank[p.Virtual][nodes[i]] = true
	}
	ps, warn, err := places([]string{"a", "a", "a", "b"}, 2)
	if err != nil || !strings.Contains(warn, "share a node") || len(ps) != 4 {
		t.Errorf("three ranks on one node of two, r = 2: %v, %q, %v; want the formula and a warning", ps, warn, err)
	}
	if _, _, err := places([]string{"a", "b", "c"}, 2); err == nil {
		t.Error("3 ranks, r = 2: no error")
	}
}
