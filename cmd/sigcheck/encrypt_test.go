package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

// encRows runs enc-allgather -json and decodes its rows.
func encRows(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	out, errOut, code := sigcheck(t, append([]string{"enc-allgather", "-json"}, args...)...)
	if code != exitOK {
		t.Fatalf("enc-allgather %v: exit %d: %s", args, code, errOut)
	}
	var rows []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		rows = append(rows, m)
	}
	return rows
}

func checkEncRows(t *testing.T, rows []map[string]any, sizes, algs int) {
	t.Helper()
	// per size: channel, 8 unencrypted counterparts, the algorithms asked
	if want := sizes * (1 + 8 + algs); len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	for _, r := range rows {
		if r["latency_us"].(float64) <= 0 || r["base_us"].(float64) <= 0 {
			t.Errorf("row %v", r)
		}
		alg := r["alg"].(string)
		if alg != "channel" && !strings.HasPrefix(alg, "plain:") {
			if _, ok := r["r_c"]; !ok {
				t.Errorf("row %v: no counts", r)
			}
		}
		if alg == "auto" && r["auto"] == nil {
			t.Errorf("row %v: auto says not what it picked", r)
		}
	}
}

func TestEncAllgatherLocal(t *testing.T) {
	rows := encRows(t, "-ranks", "6", "-nodes", "4", "-map", "cyclic", "-sizes", "1,100,5000", "-runs", "1", "-iters", "2")
	checkEncRows(t, rows, 3, 9)
}

func TestEncAllgatherTCP(t *testing.T) {
	t.Setenv("SIGCHECK_TEST_AS_MAIN", "1") // the node processes sigcheck starts are this binary
	rows := encRows(t, "-transport", "tcp", "-ranks", "5", "-nodes", "2", "-sizes", "10,70000", "-runs", "1", "-iters", "2", "-algs", "naive,hs2,auto")
	checkEncRows(t, rows, 2, 3)
	for _, r := range rows {
		if r["transport"] != "tcp" || r["nodes"].(float64) != 2 {
			t.Errorf("row %v", r)
		}
	}
}

func TestEncAllgatherTable(t *testing.T) {
	out, errOut, code := sigcheck(t, "enc-allgather", "-ranks", "4", "-nodes", "2", "-sizes", "64", "-runs", "1", "-iters", "1", "-counts")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Naive", "O-Ring", "O-RD2", "HS2", "best", "auto", "r_d", "predicted"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestEncAllgatherBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-ranks", "0"}, {"-nodes", "5", "-ranks", "4"}, {"-map", "diagonal"}, {"-algs", "o-rd3"},
		{"-transport", "udp"}, {"-model", "cray"}, {"-sizes", "x"}, {"-runs", "0"}, {"-bogus"},
	} {
		_, errOut, code := sigcheck(t, append([]string{"enc-allgather"}, args...)...)
		if code != exitUsage || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q (want exit 2 and one line)", args, code, errOut)
		}
	}
	out, _, code := sigcheck(t, "enc-allgather", "-h")
	if code != exitOK || !strings.Contains(out, "-nodes") {
		t.Errorf("-h: exit %d %q", code, out)
	}
}
