package main

import (
	"strings"
	"testing"
)

// The first example: ten MPI_INT received as ten MPI_FLOAT.
func TestIntReceivedAsFloat(t *testing.T) {
	exe := compile(t, t.TempDir(), "p2p_int_float.c")
	j := mpiJob(t, 2, true, nil, exe)
	f := j.findings()
	if len(f) != 1 || !strings.Contains(f[0], "element 0") {
		t.Fatalf("want one finding at element 0, got %q\nstderr:\n%s", f, j.Stderr)
	}
	for _, want := range []string{"sigcheck: type mismatch: MPI_Recv on rank 1 of MPI_COMM_WORLD, from rank 0, tag 7",
		"sender    int    at item 0, byte 0", "receiver  float  at item 0, byte 0"} {
		if !strings.Contains(j.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, j.Stderr)
		}
	}
	if j.Exit != 0 {
		t.Errorf("report mode: exit %d, want the program's own 0", j.Exit)
	}
	abort := mpiJob(t, 2, true, map[string]string{"SIGCHECK_ON_ERROR": "abort"}, exe)
	if abort.Exit != 86 {
		t.Errorf("abort mode: exit %d, want 86\n%s", abort.Exit, abort.Stderr)
	}
}

// A correct program's output and exit status are the same with the
// library as without, and it gets no report.
func TestCorrectPingPongUnchanged(t *testing.T) {
	exe := compile(t, t.TempDir(), "ok_pingpong.c")
	plain := mpiJob(t, 2, false, nil, exe)
	for _, mode := range []string{"types", "checksum"} {
		j := mpiJob(t, 2, true, map[string]string{"SIGCHECK_CHECK": mode, "SIGCHECK_ON_ERROR": "abort"}, exe)
		if j.Stdout != plain.Stdout || j.Exit != plain.Exit {
			t.Errorf("%s: stdout %q exit %d; without the library %q exit %d", mode, j.Stdout, j.Exit, plain.Stdout, plain.Exit)
		}
		if f := j.findings(); len(f) != 0 || strings.Contains(j.Stderr, "sigcheck:") {
			t.Errorf("%s: findings on a correct program: %q\n%s", mode, f, j.Stderr)
		}
		if len(j.Summaries) != 2 || j.checked() < 200 {
			t.Errorf("%s: %d summaries, %d checked; want 2 and at least 200", mode, len(j.Summaries), j.checked())
		}
	}
}
