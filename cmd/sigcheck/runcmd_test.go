package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigcheck/sigcheck/cmd/sigcheck/osu"
)

// TestMain lets the test binary stand in for sigcheck when sigcheck run
// starts processes of itself (os.Executable is the test binary here).
func TestMain(m *testing.M) {
	if os.Getenv("SIGCHECK_TEST_AS_MAIN") == "1" {
		os.Exit(runIO(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func runRows(t *testing.T, args ...string) []osu.Row {
	t.Helper()
	out, errOut, code := sigcheck(t, append([]string{"run", "-json"}, args...)...)
	if code != exitOK {
		t.Fatalf("sigcheck run %v: exit %d: %s", args, code, errOut)
	}
	var rows []osu.Row
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		for _, f := range []string{"op", "transport", "protect", "size", "value", "unit", "injected", "detected", "repaired", "mismatches"} {
			if _, ok := m[f]; !ok {
				t.Fatalf("%q: no field %q", sc.Text(), f)
			}
		}
		var r osu.Row
		json.Unmarshal(sc.Bytes(), &r)
		rows = append(rows, r)
	}
	return rows
}

func TestRunLocal(t *testing.T) {
	out, errOut, code := sigcheck(t, "run", "-protect", "none,checksum,merkle", "-sizes", "1,1K,70K", "-iters", "3", "-warmup", "1", "latency")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"# sigcheck run latency: 2 ranks, transport local", "checksum", "× none", "mismatches", "70 KiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 3+3 {
		t.Errorf("%d lines, want 2 comments, a header and 3 sizes:\n%s", n, out)
	}

	rows := runRows(t, "-ranks", "3", "-protect", "checksum,merkle", "-inject", "0.05", "-sizes", "2K:8K", "-iters", "4", "-warmup", "1", "allgather")
	if len(rows) != 3*2 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	var injected uint64
	for _, r := range rows {
		if r.Op != "allgather" || r.Unit != "us" || r.Value <= 0 || r.Mismatches != 0 || r.Detected != r.Injected {
			t.Errorf("row %+v", r)
		}
		injected += r.Injected
	}
	if injected == 0 {
		t.Error("nothing injected")
	}

	out, _, code = sigcheck(t, "run", "-protect", "none,checksum", "-inject", "0.1", "-sizes", "4K", "-iters", "10", "bw")
	if code != exitOK || !strings.Contains(out, "checksum inj/det/rep/bad") || !strings.Contains(out, "one bit flipped in 0.1 of the frames") {
		t.Errorf("table under injection: exit %d\n%s", code, out)
	}

	out, _, code = sigcheck(t, "run", "-csv", "-sizes", "64", "-iters", "2", "bw")
	if code != exitOK || !strings.HasPrefix(out, "op,transport,protect,size,value,unit,iterations,injected,detected,repaired,mismatches\nbw,local,none,64,") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}

	svg := filepath.Join(t.TempDir(), "run.svg")
	if _, errOut, code := sigcheck(t, "run", "-plot", svg, "-protect", "none,merkle", "-sizes", "1K:4K", "-iters", "2", "bcast"); code != exitOK {
		t.Fatalf("plot: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "merkle") {
		t.Errorf("plot: %v, %.80q", err, b)
	}
}

// Unprotected, injected flips reach the receivers: the check sees them
// (and that is no failure of the tool: nothing promised otherwise).
func TestRunSeesUnprotectedDamage(t *testing.T) {
	rows := runRows(t, "-inject", "0.5", "-sizes", "1K", "-iters", "20", "-warmup", "1", "bw")
	if len(rows) != 1 || rows[0].Mismatches == 0 || rows[0].Detected != 0 {
		t.Errorf("rows %+v: want mismatches, nothing detected", rows)
	}
}

func TestRunTCP(t *testing.T) {
	t.Setenv("SIGCHECK_TEST_AS_MAIN", "1") // the ranks sigcheck starts are this binary
	rows := runRows(t, "-transport", "tcp", "-ranks", "3", "-protect", "none,merkle", "-inject", "0.02",
		"-sizes", "100,300K", "-iters", "5", "-warmup", "1", "bcast")
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	for _, r := range rows {
		if r.Transport != "tcp" || r.Value <= 0 || r.Protect == "merkle" && (r.Mismatches != 0 || r.Detected != r.Injected) {
			t.Errorf("row %+v", r)
		}
	}
}

func TestRunErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"pingpong"}, `unknown benchmark "pingpong"`},
		{[]string{}, "want 1 argument"},
		{[]string{"-protect", "crc", "bw"}, `unknown protection "crc"`},
		{[]string{"-sizes", "8:4", "bw"}, "the range is empty"},
		{[]string{"-sizes", "0", "bw"}, "want a positive number"},
		{[]string{"-transport", "udp", "bw"}, `-transport "udp"`},
		{[]string{"-ranks", "1", "latency"}, "needs at least 2 ranks"},
		{[]string{"-ranks", "0", "bcast"}, "want 1 to 1024"},
		{[]string{"-inject", "2", "bw"}, "want a fraction"},
	} {
		_, errOut, code := sigcheck(t, append([]string{"run"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.msg) {
			t.Errorf("run %v: exit %d, %q; want %d and %q", tc.args, code, errOut, exitUsage, tc.msg)
		}
	}
}
