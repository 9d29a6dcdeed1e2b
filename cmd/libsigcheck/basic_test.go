package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The first example: ten MPI_INT received as ten MPI_FLOAT.
func TestIntReceivedAsFloat(t *testing.T) {
	t.Parallel()
	exe := compile(t, t.TempDir(), "p2p_int_float.c")
	slot(t)
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
	t.Parallel()
	exe := compile(t, t.TempDir(), "ok_pingpong.c")
	slot(t)
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

// Repair mode: every bit flip that SIGCHECK_INJECT makes in delivered data
// is detected and repaired before the receive returns, so the program's
// output is the same as without the library, and the job ends normally.
func TestRepairRepairsEveryInjectedFlip(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{"ok_pingpong.c", "repair_vector.c", "ok_permuted.c"} {
		t.Run(prog, func(t *testing.T) {
			t.Parallel()
			exe := compile(t, t.TempDir(), prog)
			slot(t)
			plain := mpiJob(t, 2, false, nil, exe)
			j := mpiJob(t, 2, true, map[string]string{"SIGCHECK_CHECK": "repair", "SIGCHECK_INJECT": "0.2",
				"SIGCHECK_SEED": "7", "SIGCHECK_ON_ERROR": "abort"}, exe)
			if j.Stdout != plain.Stdout || j.Exit != plain.Exit {
				t.Fatalf("stdout %q exit %d; without the library %q exit %d\n%s", j.Stdout, j.Exit, plain.Stdout, plain.Exit, j.Stderr)
			}
			var injected, corrupt, repaired uint64
			for _, s := range j.Summaries {
				injected += s.Injected
				corrupt += s.Corrupt
				repaired += s.Repaired
			}
			if injected == 0 || corrupt != injected || repaired != injected {
				t.Errorf("injected %d, detected %d, repaired %d: want all equal and not 0", injected, corrupt, repaired)
			}
			if strings.Contains(j.Stderr, "sigcheck:") {
				t.Errorf("a repaired run printed:\n%s", j.Stderr)
			}
		})
	}
}

// Checksum mode detects every flip and, in abort mode, ends the job with
// the report.
func TestChecksumDetectsInjectedFlip(t *testing.T) {
	t.Parallel()
	exe := compile(t, t.TempDir(), "repair_vector.c")
	slot(t)
	j := mpiJob(t, 2, true, map[string]string{"SIGCHECK_CHECK": "checksum", "SIGCHECK_INJECT": "0.05", "SIGCHECK_SEED": "3"}, exe)
	var injected, corrupt uint64
	for _, s := range j.Summaries {
		injected += s.Injected
		corrupt += s.Corrupt
	}
	if injected == 0 || corrupt != injected {
		t.Errorf("injected %d, detected %d", injected, corrupt)
	}
	a := mpiJob(t, 2, true, map[string]string{"SIGCHECK_CHECK": "checksum", "SIGCHECK_INJECT": "0.05",
		"SIGCHECK_SEED": "3", "SIGCHECK_ON_ERROR": "abort"}, exe)
	if a.Exit != 86 || !strings.Contains(a.Stderr, "sigcheck: corrupt message: MPI_Recv on rank 1 of MPI_COMM_WORLD, from rank 0") {
		t.Errorf("abort mode: exit %d\n%s", a.Exit, a.Stderr)
	}
}

// Testany and Testsome never report a non-blocking collective inactive
// (MPI_UNDEFINED) while the library holds it back for its check.
func TestTestanyOnHeldCollective(t *testing.T) {
	t.Parallel()
	exe := compile(t, t.TempDir(), "nbc_testany.c")
	slot(t)
	j := mpiJob(t, 2, true, map[string]string{"SIGCHECK_ON_ERROR": "abort"}, exe)
	if j.Stdout != "bad 0\n" || j.Exit != 0 {
		t.Fatalf("stdout %q exit %d\n%s", j.Stdout, j.Exit, j.Stderr)
	}
}

// What the library keeps per datatype goes with it: making, using and
// freeing 40000 datatypes grows neither rank by more than a few MiB over
// the second half (each left a description unread on its receiver, about
// 16 MiB here, before the receiver read them as headers announce them).
func TestDatatypeChurnStaysBounded(t *testing.T) {
	t.Parallel()
	exe := compile(t, t.TempDir(), "ok_type_churn.c")
	slot(t)
	j := mpiJob(t, 2, true, nil, exe)
	var send, recv int64
	if _, err := fmt.Sscan(j.Stdout, &send, &recv); err != nil || j.Exit != 0 {
		t.Fatalf("stdout %q exit %d: %v\n%s", j.Stdout, j.Exit, err, j.Stderr)
	}
	const limit = 4 << 10 // KiB
	if send > limit || recv > limit {
		t.Errorf("resident memory grew %d KiB (sender) and %d KiB (receiver) over 20000 datatypes; want at most %d", send, recv, limit)
	}
	if f := j.findings(); len(f) != 0 {
		t.Errorf("findings: %q", f)
	}
}

// A datatype the library cannot decode passes through: the message is
// delivered, the call is counted unchecked with the reason, and nothing
// is reported.
func TestUndecodableDatatypePassesThrough(t *testing.T) {
	t.Parallel()
	exe := compile(t, t.TempDir(), "ok_darray.c")
	slot(t)
	plain := mpiJob(t, 2, false, nil, exe)
	j := mpiJob(t, 2, true, map[string]string{"SIGCHECK_ON_ERROR": "abort"}, exe)
	if j.Stdout != plain.Stdout || j.Exit != 0 || strings.Contains(j.Stderr, "sigcheck:") {
		t.Fatalf("stdout %q exit %d (without the library %q)\n%s", j.Stdout, j.Exit, plain.Stdout, j.Stderr)
	}
	var unchecked uint64
	for _, s := range j.Summaries {
		unchecked += s.Unchecked["send: undecodable datatype"] + s.Unchecked["recv: unchecked sender"]
	}
	if unchecked != 2 {
		t.Errorf("want the send counted unchecked (undecodable datatype) and its receive (unchecked sender): %+v", j.Summaries)
	}
}

// preloaded runs argv with the library preloaded, outside MPI.
func preloaded(t *testing.T, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+library(t))
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return so.String(), se.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return so.String(), se.String(), 0
}

// A process that never calls MPI_Init gets nothing from the library: a
// shell, and what it starts, run as they would without it.
func TestNothingWithoutMPIInit(t *testing.T) {
	out, errOut, code := preloaded(t, "/bin/sh", "-c", "echo one; /bin/sh -c 'echo two; exit 3'")
	if out != "one\ntwo\n" || errOut != "" || code != 3 {
		t.Errorf("stdout %q, stderr %q, exit %d; want one, two, nothing and 3", out, errOut, code)
	}
}

// Loaded into a Go program (which has a runtime of its own), the library
// says so in one line and the program exits 2 before its main runs.
func TestRefusesGoProgram(t *testing.T) {
	t.Parallel()
	library(t) // or skip, saying why, before building a cgo program
	exe := filepath.Join(t.TempDir(), "goprog")
	build := exec.Command("go", "build", "-o", exe, "./testdata/goprog")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, errOut, code := preloaded(t, exe)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if out != "" || code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "sigcheck: libsigcheck.so is preloaded into a Go program") {
		t.Errorf("stdout %q, stderr %q, exit %d", out, errOut, code)
	}
}
