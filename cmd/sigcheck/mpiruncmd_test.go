package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/internal/ranksum"
)

// The rank-N.json files under testdata/mpirun are as cmd/libsigcheck
// writes them: mismatch/ and checksum/ from real runs of a program that
// sends 10 MPI_INT and receives 10 MPI_FLOAT (and of its correct twin
// with -inject 1); clean/, partial/ and broken/ written by hand.

func TestMpirunFlagErrors(t *testing.T) {
	t.Setenv("SIGCHECK_LIB", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-check", "crc"}, "-check crc: want types, checksum or repair"},
		{[]string{"-on-error", "ignore"}, "-on-error ignore: want abort or report"},
		{[]string{"-inject", "2", "-check", "checksum"}, "-inject 2: want a probability from 0 to 1"},
		{[]string{"-inject", "1e-3"}, "-inject flips data bits, which only -check checksum (or repair) looks at"},
		{[]string{"-inject", "often"}, `invalid value "often" for flag -inject`},
		{[]string{"-check", "checksum"}, "no command: want sigcheck mpirun [flags] -- mpirun -np 4 ./app"},
		{[]string{"--"}, "no command"},
		{[]string{"mpirun", "-np", "2", "./app"}, "put -- before mpirun"},
		{[]string{"-check", "types", "/usr/bin/mpiexec", "./app"}, "put -- before /usr/bin/mpiexec"},
		{[]string{"app", "--", "mpirun", "./app"}, `"app": the command goes after --`},
		{[]string{"--", "srun", "-n", "2", "./app"}, `"srun" is not mpirun, mpiexec or orterun`},
		{[]string{"--", "./app"}, `"./app" is not mpirun`},
		{[]string{"-summary", "/no/such/dir/s.json", "--", "mpirun", "./app"}, "-summary /no/such/dir/s.json: no directory /no/such/dir"},
		{[]string{"-lib", "/no/such/libsigcheck.so", "--", "mpirun", "./app"}, "-lib /no/such/libsigcheck.so: no such file (go build -buildmode=c-shared"},
	} {
		args := append([]string{"mpirun"}, c.args...)
		o, e, code := sigcheck(t, args...)
		if code != exitUsage || o != "" || strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, "sigcheck mpirun: ") || !strings.Contains(e, c.want) {
			t.Errorf("sigcheck %q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", args, code, o, e, c.want)
		}
	}
	o, e, code := sigcheck(t, "mpirun", "-h")
	if code != exitOK || e != "" || !strings.HasPrefix(o, "Usage: sigcheck mpirun [flags] -- mpirun") || !strings.Contains(o, libBuild) {
		t.Errorf("sigcheck mpirun -h: exit %d, stderr %q, stdout %.200q", code, e, o)
	}
}

// The library and its settings go right after mpirun's name, the
// program and its arguments stay last and unchanged.
func TestMpirunArgs(t *testing.T) {
	cmd := []string{"/opt/ompi/bin/mpirun", "-np", "4", "--map-by", "core", "./app", "-x", "in.dat"}
	set := mpirunSettings{check: "checksum", onError: "report", inject: "0.001", seed: "7", summaryDir: "/w/.sigcheck-mpirun-1"}
	got := mpirunArgs(cmd, "/lib/libsigcheck.so", set, "madvdontneed=1")
	want := []string{"/opt/ompi/bin/mpirun",
		"-x", "LD_PRELOAD=/lib/libsigcheck.so", "-x", "SIGCHECK_CHECK=checksum", "-x", "SIGCHECK_ON_ERROR=report",
		"-x", "SIGCHECK_SUMMARY=/w/.sigcheck-mpirun-1", "-x", "SIGCHECK_INJECT=0.001", "-x", "SIGCHECK_SEED=7",
		"-x", "GODEBUG=madvdontneed=1,asyncpreemptoff=1",
		"-np", "4", "--map-by", "core", "./app", "-x", "in.dat"}
	if !slices.Equal(got, want) {
		t.Errorf("mpirunArgs:\n got %q\nwant %q", got, want)
	}
	// Without -inject and -seed the library's defaults hold: no variable.
	got = mpirunArgs([]string{"mpiexec", "./app"}, "/l.so", mpirunSettings{check: "types", onError: "abort", summaryDir: "/d"}, "")
	want = []string{"mpiexec", "-x", "LD_PRELOAD=/l.so", "-x", "SIGCHECK_CHECK=types", "-x", "SIGCHECK_ON_ERROR=abort",
		"-x", "SIGCHECK_SUMMARY=/d", "-x", "GODEBUG=asyncpreemptoff=1", "./app"}
	if !slices.Equal(got, want) {
		t.Errorf("mpirunArgs:\n got %q\nwant %q", got, want)
	}
}

func TestMpirunGodebug(t *testing.T) {
	for in, want := range map[string]string{
		"":                                    "asyncpreemptoff=1",
		"madvdontneed=1":                      "madvdontneed=1,asyncpreemptoff=1",
		"asyncpreemptoff=1":                   "asyncpreemptoff=1",
		"asyncpreemptoff=1,gctrace=1":         "asyncpreemptoff=1,gctrace=1",
		"asyncpreemptoff=0":                   "asyncpreemptoff=0,asyncpreemptoff=1", // the last one wins
		"asyncpreemptoff=1,asyncpreemptoff=0": "asyncpreemptoff=1,asyncpreemptoff=0,asyncpreemptoff=1",
	} {
		if got := withAsyncPreemptOff(in); got != want {
			t.Errorf("withAsyncPreemptOff(%q) = %q, want %q", in, got, want)
		}
	}
}

// summaryOf reads a fixture set and prints its summary as sigcheck
// mpirun would after mpirun exited with status.
func summaryOf(t *testing.T, set string, status int) (string, *mpirunSummary) {
	t.Helper()
	dir := filepath.Join("testdata", "mpirun", set)
	rows, bad := readSummaries(dir)
	var b strings.Builder
	for _, err := range bad {
		fmt.Fprintf(&b, "sigcheck: %v\n", err)
	}
	m := mergeSummaries([]string{"mpirun"}, status, rows)
	writeMpirunSummary(&b, m, rows, "/work/.sigcheck-mpirun-1", false)
	return b.String(), m
}

func TestMpirunSummary(t *testing.T) {
	for _, c := range []struct {
		set, want string
	}{
		{"clean", `sigcheck: 4 ranks, types: 1234 messages and 56 collective calls checked, nothing found
sigcheck: unchecked: 3 recv (undecodable datatype), 2 bcast (communicator without shadow)
sigcheck: datatypes not decoded: combiner 18 (such as MPI_Type_create_darray or a Fortran 90 parameterised type) (once)
`},
		{"mismatch", `sigcheck: 2 ranks, types: 1 message and 2 collective calls checked, 1 type mismatch
sigcheck: rank  recv  bcast  mismatches
sigcheck:    0     0      1           0
sigcheck:    1     1      1           1
sigcheck: type mismatch: MPI_Recv on rank 1 of MPI_COMM_WORLD, from rank 0, tag 7, element 0
sigcheck:   (point-to-point) first difference at element 0 (zero-based); sender int at item 0, byte 0; receiver float at item 0, byte 0; sender type map: [int] @0, int×9 @4; receiver type map: [float] @0, float×9 @4
`},
		{"checksum", `sigcheck: 3 ranks, checksum: 1 message and 3 collective calls checked, 1 corrupt message (-inject flipped a bit in 1 message)
sigcheck: rank  recv  bcast  mismatches  corrupt  injected
sigcheck:    0     0      1           0        0         0
sigcheck:    1     1      1           0        1         1
sigcheck:    2     0      1           0        0         0
sigcheck: corrupt message: MPI_Recv on rank 1 of MPI_COMM_WORLD, from rank 0, tag 7
sigcheck:   40 data bytes hash to d192ce3929a7b739, the sender's to 114ddfda264d5aa9 (a bit flipped by SIGCHECK_INJECT)
`},
	} {
		got, _ := summaryOf(t, c.set, 0)
		if got != c.want {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", c.set, got, c.want)
		}
	}
}

// The totals of -summary are the sums over the ranks, and each row is
// the rank's file as it wrote it.
func TestMpirunMerge(t *testing.T) {
	_, m := summaryOf(t, "clean", 0)
	if m.Ranks != 4 || m.Reported != 4 || len(m.Missing) != 0 || m.Mode != "types" || m.Checked["recv"] != 1234 ||
		m.Checked["allreduce"] != 40 || m.Unchecked["recv: undecodable datatype"] != 3 || len(m.Rows) != 4 {
		t.Errorf("merged: %+v", m)
	}
	raw, err := os.ReadFile("testdata/mpirun/clean/rank-2.json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(raw)) != string(m.Rows[2]) {
		t.Errorf("row 2 is not rank-2.json as written:\n%s", m.Rows[2])
	}
}

func TestMpirunMissingRanks(t *testing.T) {
	for _, c := range []struct {
		set    string
		status int
		want   string
	}{
		{"partial", 86, "sigcheck: ranks 1, 3 of 4 wrote no summary: sigcheck ended the job at its first finding (mpirun's exit status 86; "},
		{"partial", 1, "sigcheck: ranks 1, 3 of 4 wrote no summary: mpirun exited 1 before they reached MPI_Finalize\n"},
		{"partial", 0, "sigcheck: ranks 1, 3 of 4 wrote no summary: they ended without MPI_Finalize, or ran on nodes that do not share /work\n"},
		{"none", 86, "sigcheck: no rank wrote a summary: sigcheck ended the job at its first finding"},
		{"none", 0, "sigcheck: no rank wrote a summary: the library never reached MPI_Finalize in a rank"},
		{"none", 2, "sigcheck: no rank wrote a summary: mpirun exited 2 before they reached MPI_Finalize\n"},
		{"broken", 0, "sigcheck: rank 1 of 2 wrote no summary"},
	} {
		got, _ := summaryOf(t, c.set, c.status)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s, exit %d:\n%s\nwant a line with %q", c.set, c.status, got, c.want)
		}
	}
	got, _ := summaryOf(t, "partial", 86)
	if !strings.HasPrefix(got, "sigcheck: 2 of 4 ranks, types: 10 messages and 2 collective calls checked, nothing found\n") {
		t.Errorf("partial: the headline does not say how many ranks wrote:\n%s", got)
	}
	got, _ = summaryOf(t, "broken", 0)
	if !strings.HasPrefix(got, "sigcheck: rank-1.json: unexpected end of JSON input\n") {
		t.Errorf("broken: a file that does not parse is not named:\n%s", got)
	}
}

func TestMpirunRankList(t *testing.T) {
	for want, ranks := range map[string][]int{
		"rank 3":            {3},
		"ranks 1, 3":        {1, 3},
		"ranks 0-3":         {0, 1, 2, 3},
		"ranks 0-1, 5, 7-9": {0, 1, 5, 7, 8, 9},
	} {
		if got := rankList(ranks); got != want {
			t.Errorf("rankList(%v) = %q, want %q", ranks, got, want)
		}
	}
}

// A big job's findings are cut short on the screen; the count says how
// many more there are.
func TestMpirunFindingsCapped(t *testing.T) {
	var rows []rankSummary
	for r := range 5 {
		s := rankSummary{Summary: ranksum.Summary{Rank: r, Size: 5, Mode: "types", Checked: map[string]uint64{"recv": 9}, Mismatches: 5, Suppressed: 1}}
		for k := range 5 {
			s.Findings = append(s.Findings, rankFinding{Kind: "type mismatch", Call: "MPI_Allreduce", Comm: "comm 2",
				Rank: 0, Peer: k, Tag: -1, Element: -1, Detail: "differs"})
		}
		rows = append(rows, s)
	}
	var b strings.Builder
	writeMpirunSummary(&b, mergeSummaries(nil, 0, rows), rows, "/d", false)
	out := b.String()
	if n := strings.Count(out, "sigcheck: type mismatch: "); n != maxShownFindings {
		t.Errorf("%d findings shown, want %d:\n%s", n, maxShownFindings, out)
	}
	for _, want := range []string{
		"sigcheck: type mismatch: MPI_Allreduce on rank 0 of comm 2 (world rank 1), against rank 3\n",
		"sigcheck: 5 findings more: -summary FILE.json keeps them all\n",
		"sigcheck: 5 findings more counted but not kept (a rank keeps its first ones only)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

func TestMpirunModuleRoot(t *testing.T) {
	for in, want := range map[string]string{
		"module github.com/sigcheck/sigcheck\n\ngo 1.26\n": modulePath,
		"// a comment\nmodule \"example.com/x\" // why\n":  "example.com/x",
		"go 1.26\n":               "",
		"modules example.com/y\n": "",
	} {
		if got := moduleLine([]byte(in)); got != want {
			t.Errorf("moduleLine(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, ok := moduleRoot()
	want, _ := filepath.Abs("../..")
	if !ok || root != want {
		t.Errorf("moduleRoot() = %q, %v here; want %q", root, ok, want)
	}
}

func TestMpirunFindLib(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libsigcheck.so")
	if err := os.WriteFile(lib, []byte("not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	e := &env{stderr: new(strings.Builder)}
	if got, err := findLib(e, "libsigcheck.so"); err != nil || got != lib {
		t.Errorf("findLib(-lib libsigcheck.so) = %q, %v; want %q (absolute: the ranks may start elsewhere)", got, err, lib)
	}
	t.Setenv("SIGCHECK_LIB", lib)
	if got, err := findLib(e, ""); err != nil || got != lib {
		t.Errorf("findLib with SIGCHECK_LIB = %q, %v; want %q", got, err, lib)
	}
	t.Setenv("SIGCHECK_LIB", lib+".gone")
	if _, err := findLib(e, ""); err == nil || !strings.HasPrefix(err.Error(), "SIGCHECK_LIB="+lib+".gone: no such file") {
		t.Errorf("findLib with SIGCHECK_LIB of no file: %v", err)
	}
	if _, err := findLib(e, dir); err == nil || !strings.Contains(err.Error(), "not a file") {
		t.Errorf("findLib(-lib DIR): %v", err)
	}
}

// fakeMpirun puts a script named name first on PATH that stands in for
// Open MPI's mpirun: it finds SIGCHECK_SUMMARY among its -x arguments,
// copies the rank files of $FAKE_RANKS there, writes to both outputs and
// exits with $FAKE_EXIT. It keeps its arguments and its own LD_PRELOAD
// in the directory it returns.
func fakeMpirun(t *testing.T, name string) string {
	t.Helper()
	bin := t.TempDir()
	script := `#!/bin/sh
log=$(dirname "$0")
printf '%s\n' "$@" > "$log/args"
printf '%s\n' "${LD_PRELOAD-unset}" > "$log/ld_preload"
dir=
while [ $# -gt 0 ]; do
	if [ "$1" = -x ]; then
		case "$2" in SIGCHECK_SUMMARY=*) dir=${2#SIGCHECK_SUMMARY=} ;; esac
		shift
	fi
	shift
done
echo "$dir" > "$log/dir"
if [ -n "$FAKE_RANKS" ]; then cp "$FAKE_RANKS"/rank-*.json "$dir"/; fi
echo "the app's output"
echo "the app's error" >&2
exit "${FAKE_EXIT:-0}"
`
	if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return bin
}

func readLog(t *testing.T, bin, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bin, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// sigcheck mpirun exits as mpirun did, passes the program's output
// through untouched, keeps LD_PRELOAD out of mpirun's own environment,
// and leaves no summary directory behind.
func TestMpirunExitStatus(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for the fake mpirun")
	}
	ranks, _ := filepath.Abs("testdata/mpirun/mismatch")
	bin := fakeMpirun(t, "mpirun")
	work := t.TempDir()
	t.Chdir(work)
	lib := filepath.Join(work, "libsigcheck.so")
	os.WriteFile(lib, nil, 0o644)
	t.Setenv("LD_PRELOAD", "")
	os.Unsetenv("LD_PRELOAD")
	t.Setenv("GODEBUG", "madvdontneed=1")
	for _, status := range []int{0, 3, 86} {
		t.Setenv("FAKE_EXIT", fmt.Sprint(status))
		t.Setenv("FAKE_RANKS", ranks)
		if status == 86 {
			t.Setenv("FAKE_RANKS", "") // an aborted job writes none
		}
		js := filepath.Join(work, "s.json")
		o, e, code := sigcheck(t, "mpirun", "-lib", "libsigcheck.so", "-on-error", "report", "-summary", js, "--", "mpirun", "-np", "2", "./app", "arg")
		if code != status {
			t.Errorf("mpirun exited %d, sigcheck mpirun %d; stderr:\n%s", status, code, e)
		}
		if o != "the app's output\n" {
			t.Errorf("exit %d: stdout %q, want the app's alone", status, o)
		}
		if !strings.HasPrefix(e, "the app's error\nsigcheck: ") {
			t.Errorf("exit %d: stderr does not begin with the app's, then sigcheck's summary:\n%s", status, e)
		}
		if got := readLog(t, bin, "ld_preload"); got != "unset" {
			t.Errorf("mpirun itself ran with LD_PRELOAD=%q", got)
		}
		args := strings.Split(readLog(t, bin, "args"), "\n")
		dir := readLog(t, bin, "dir")
		want := []string{"-x", "LD_PRELOAD=" + lib, "-x", "SIGCHECK_CHECK=types", "-x", "SIGCHECK_ON_ERROR=report",
			"-x", "SIGCHECK_SUMMARY=" + dir, "-x", "GODEBUG=madvdontneed=1,asyncpreemptoff=1", "-np", "2", "./app", "arg"}
		if !slices.Equal(args, want) {
			t.Errorf("mpirun's arguments:\n got %q\nwant %q", args, want)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) || filepath.Dir(dir) != work {
			t.Errorf("the summary directory %s: %v; want it made in the current directory %s, and gone", dir, err, work)
		}
		var m mpirunSummary
		b, err := os.ReadFile(js)
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		switch {
		case err != nil:
			t.Errorf("-summary: %v", err)
		case m.Exit != status || status != 86 && (m.Mismatches != 1 || len(m.Rows) != 2) || status == 86 && m.Reported != 0:
			t.Errorf("exit %d: -summary: %s", status, b)
		}
	}
	if e := readLog(t, bin, "args"); e == "" {
		t.Error("no arguments logged")
	}
	_, e, code := sigcheck(t, "mpirun", "-lib", lib, "--", filepath.Join(bin, "mpirun"), "./app")
	if code != 86 || !strings.Contains(e, "sigcheck: no rank wrote a summary: sigcheck ended the job") {
		t.Errorf("mpirun by its path: exit %d, stderr:\n%s", code, e)
	}
}

// A signal that reaches sigcheck mpirun reaches mpirun; a mpirun killed
// by a signal gives 128 plus the signal, as a shell reports it.
func TestMpirunSignals(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	started := filepath.Join(t.TempDir(), "started")
	cmd := exec.Command("sh", "-c", `trap 'exit 42' TERM; : > "$1"; while :; do sleep 0.05; done`, "sh", started)
	sigs := make(chan os.Signal, 1)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(started); err == nil {
				break
			}
		}
		sigs <- syscall.SIGTERM
	}()
	if status, err := runForwarding(cmd, sigs); err != nil || status != 42 {
		t.Errorf("SIGTERM forwarded: status %d, %v; want 42, the trap's", status, err)
	}
	cmd = exec.Command("sh", "-c", "kill -TERM $$")
	if status, err := runForwarding(cmd, nil); err != nil || status != 128+int(syscall.SIGTERM) {
		t.Errorf("killed by SIGTERM: status %d, %v; want %d", status, err, 128+int(syscall.SIGTERM))
	}
	if _, err := runForwarding(exec.Command(filepath.Join(t.TempDir(), "mpirun")), nil); err == nil {
		t.Error("a mpirun that cannot start: no error")
	}
}

// The real thing, under Open MPI: the library built from this clone,
// preloaded into a C program that sends 10 MPI_INT and receives them as
// 10 MPI_FLOAT, and into its correct twin.
func TestMpirunOpenMPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the library and runs mpirun (-short)")
	}
	for _, tool := range []string{"mpicc", "mpirun", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: Open MPI (Debian: libopenmpi-dev openmpi-bin) is needed to run the library", tool)
		}
	}
	if err := exec.Command("pkg-config", "--exists", "ompi-c").Run(); err != nil {
		t.Skip("pkg-config finds no ompi-c: the library builds against Open MPI only")
	}
	work := t.TempDir()
	lib := filepath.Join(work, "libsigcheck.so")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-tags", "mpi", "-o", lib, "./cmd/libsigcheck")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the library: %v\n%s", err, out)
	}
	const prog = `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
	int rank, sent[10] = {0};
	RECV_C recvd[10];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0) MPI_Send(sent, 10, MPI_INT, 1, 7, MPI_COMM_WORLD);
	if (rank == 1) MPI_Recv(recvd, 10, RECV_MPI, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (rank == 0) printf("done\n");
	MPI_Finalize();
	return 0;
}
`
	if err := os.WriteFile(filepath.Join(work, "prog.c"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, defs := range map[string][]string{"bad": {"-DRECV_C=float", "-DRECV_MPI=MPI_FLOAT"}, "good": {"-DRECV_C=int", "-DRECV_MPI=MPI_INT"}} {
		cc := exec.Command("mpicc", append(defs, "-o", name, "prog.c")...)
		cc.Dir = work
		if out, err := cc.CombinedOutput(); err != nil {
			t.Fatalf("mpicc: %v\n%s", err, out)
		}
	}
	t.Chdir(work)
	// Shared memory only, as cmd/libsigcheck's tests run: Open MPI
	// otherwise spends most of a second of each job looking for network
	// interfaces and trying messaging layers (UCX's, libfabric's) before
	// it settles on ob1.
	t.Setenv("OMPI_MCA_btl", "self,vader")
	t.Setenv("OMPI_MCA_pml", "ob1")
	job := func(onError, prog string) (string, string, int, mpirunSummary) {
		js := filepath.Join(work, prog+"-"+onError+".json")
		o, e, code := sigcheck(t, "mpirun", "-lib", lib, "-on-error", onError, "-summary", js,
			"--", "mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", "./"+prog)
		var m mpirunSummary
		if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &m) != nil {
			t.Errorf("%s: -summary: %v", prog, err)
		}
		return o, e, code, m
	}
	o, e, code, m := job("report", "bad")
	if code != 0 || o != "done\n" || m.Mismatches != 1 || m.Reported != 2 ||
		!strings.Contains(e, "sigcheck: 2 ranks, types: 1 message checked, 1 type mismatch\n") ||
		!strings.Contains(e, "sigcheck: type mismatch: MPI_Recv on rank 1 of MPI_COMM_WORLD, from rank 0, tag 7, element 0\n") {
		t.Errorf("the mismatch, reported: exit %d, stdout %q, %d mismatches; stderr:\n%s", code, o, m.Mismatches, e)
	}
	o, e, code, m = job("report", "good")
	if code != 0 || o != "done\n" || m.Mismatches != 0 || m.Reported != 2 || !strings.HasSuffix(e, "sigcheck: 2 ranks, types: 1 message checked, nothing found\n") {
		t.Errorf("the correct twin: exit %d, stdout %q; stderr:\n%s", code, o, e)
	}
	_, e, code, m = job("abort", "bad")
	if code != 86 || m.Reported != 0 || !strings.Contains(e, "sigcheck: no rank wrote a summary: sigcheck ended the job at its first finding") {
		t.Errorf("the mismatch, aborted: exit %d; stderr:\n%s", code, e)
	}
}
