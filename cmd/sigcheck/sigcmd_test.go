package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 11, items 1-3, as a user meets them.
func TestMatchHardening(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want []string
		not  string
	}{
		// Runs of a period of GF(2^16) hashed to 0 in the old default.
		{[]string{"match", "-send-count", "65535", "-recv-count", "65535", "int", "float"}, exitNegative,
			[]string{"at element 0 (zero-based)", "sender    int", "receiver  float"}, "no element there"},
		{[]string{"match", "-send-count", "131070", "-recv-count", "131070", "double", "long"}, exitNegative,
			[]string{"at element 0 (zero-based)"}, ""},
		// The locator pointed past the end.
		{[]string{"match", "-alg", "crc32c", "-send-count", "65535", "-recv-count", "65535", "int", "float"}, exitNegative,
			[]string{"at element 0 (zero-based)", "[int] @0, int×65534 @4"}, "none: this side ends"},
		// Plurals.
		{[]string{"match", "int", "int"}, exitOK, []string{"the message (1 element, 4 bytes) fits"}, ""},
		{[]string{"match", "-send-count", "3", "int", "int", "-recv-count", "3"}, exitOK, []string{"(3 elements, 12 bytes)"}, ""},
	} {
		o, e, code := sigcheck(t, c.args...)
		if code != c.code {
			t.Errorf("sigcheck %q: exit %d, want %d\n%s%s", c.args, code, c.code, o, e)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(o, w) {
				t.Errorf("sigcheck %q: output lacks %q:\n%s", c.args, w, o)
			}
		}
		if c.not != "" && strings.Contains(o, c.not) {
			t.Errorf("sigcheck %q: output has %q:\n%s", c.args, c.not, o)
		}
	}
	_, e, code := sigcheck(t, "sig", "-alg", "gfd:w=4,m=1", "int")
	if code != exitUsage || !strings.Contains(e, "w ≥ 6") || strings.Count(strings.TrimSpace(e), "\n") > 0 {
		t.Errorf("w=4: exit %d: %q", code, e)
	}
}

func TestSigList(t *testing.T) {
	o, _, code := sigcheck(t, "sig", "-list")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"gfd:w=64,m=1 (default)", "none below 2^63 elements", "every multiple of 65535: 65535 ints hash as 65535 floats",
		"every multiple of 255", "crc32c", "every multiple of 4294967294", "xor-bs1:w=16,m=1"} {
		if !strings.Contains(o, w) {
			t.Errorf("sig -list lacks %q:\n%s", w, o)
		}
	}
	o, _, code = sigcheck(t, "sig", "-list", "-json", "-alg", "gfd:w=12,m=5")
	lines := strings.Split(strings.TrimSpace(o), "\n")
	var first map[string]any
	if code != exitOK || len(lines) != len(listSpecs)+1 || json.Unmarshal([]byte(lines[0]), &first) != nil {
		t.Fatalf("exit %d:\n%s", code, o)
	}
	if first["algebra"] != "gfd:w=12,m=5" || first["vanishing_run"] != 4095.0 || first["default"] != false {
		t.Errorf("first row %v", first)
	}
	if _, e, code := sigcheck(t, "sig", "-list", "int"); code != exitUsage || !strings.Contains(e, `-list lists the algebras and takes no TYPE; got ["int"]`) {
		t.Errorf("sig -list int: exit %d: %s", code, e)
	}
}

// Issue 11, item 4: the long panel and the paper's figures beside.
func TestQualityLongPanel(t *testing.T) {
	o, _, code := sigcheck(t, "quality", "-json", "-algs", "gfd:w=8,m=2,crc32c,gfd:w=64,m=1")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	rows := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		rows[r["algebra"].(string)] = r
	}
	g := rows["gfd:w=8,m=2"]
	if g["long_signatures"] != 7384.0 || g["paper_collisions_pct"] != 3.73 || g["meets_paper"] != true || g["long_meets_paper"] != false ||
		g["long_collisions_pct"].(float64) < 3*g["long_expected_pct"].(float64) {
		t.Errorf("gfd:w=8,m=2: %v", g)
	}
	if r := rows["gfd:w=64,m=1"]; r["long_collisions_pct"] != 0.0 || r["collisions_pct"] != 0.0 {
		t.Errorf("default: %v", r)
	}
	if _, ok := rows["crc32c"]["paper_collisions_pct"]; ok {
		t.Errorf("crc32c is not in the paper: %v", rows["crc32c"])
	}
	o, _, _ = sigcheck(t, "quality", "-algs", "gfd:w=8,m=2,crc32")
	for _, w := range []string{"misses it on long signatures", "as published", "7384 of 256 to 10^6 elements"} {
		if !strings.Contains(o, w) {
			t.Errorf("quality lacks %q:\n%s", w, o)
		}
	}
}
