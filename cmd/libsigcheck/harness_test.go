package main

// The harness for tests that run real MPI programs under the library: it
// builds libsigcheck.so once per test binary, compiles programs with mpicc
// (or mpifort), and runs them under mpirun with and without the library.
// Every such test skips, saying why, where Open MPI's tools are missing;
// CI installs them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/internal/ranksum"
)

// summary is what a rank writes at MPI_Finalize.
type summary = ranksum.Summary

var lib struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// needMPI skips t unless mpicc, mpirun and Open MPI's pkg-config file are
// here.
func needMPI(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"mpicc", "mpirun", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: install Open MPI (Debian: openmpi-bin libopenmpi-dev pkg-config) to run the library's tests", tool)
		}
	}
	if err := exec.Command("pkg-config", "--exists", "ompi-c").Run(); err != nil {
		t.Skip("pkg-config knows no ompi-c: install libopenmpi-dev to run the library's tests")
	}
	// The library is loaded into programs mpicc builds for this machine,
	// so it needs cgo and this machine's architecture.
	f, err := goEnv()
	switch {
	case err != nil || len(f) != 3:
		t.Skipf("go env: %v", err)
	case f[0] != "1":
		t.Skip("cgo is off (CGO_ENABLED=0): the library is built with cgo")
	case f[1] != f[2] || runtime.GOARCH != f[2]:
		t.Skipf("GOARCH=%s: the library must be built for this machine (%s) to load into its programs", f[1], f[2])
	}
}

// goEnv returns CGO_ENABLED, GOARCH and GOHOSTARCH, asked of go once.
var goEnv = sync.OnceValues(func() ([]string, error) {
	out, err := exec.Command("go", "env", "CGO_ENABLED", "GOARCH", "GOHOSTARCH").Output()
	return strings.Fields(string(out)), err
})

// library builds libsigcheck.so once for the test binary and returns its
// path.
func library(t testing.TB) string {
	t.Helper()
	needMPI(t)
	lib.once.Do(func() {
		lib.dir, lib.err = os.MkdirTemp("", "libsigcheck-test-")
		if lib.err != nil {
			return
		}
		lib.path = filepath.Join(lib.dir, "libsigcheck.so")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-tags", "mpi", "-o", lib.path, ".")
		out, err := cmd.CombinedOutput()
		if err != nil {
			lib.err = fmt.Errorf("building the library: %v\n%s", err, out)
		}
	})
	if lib.err != nil {
		t.Fatal(lib.err)
	}
	return lib.path
}

// long runs the sweeps that go test ./... leaves to CI (.ci/run): the
// encrypted all-gathers on every layout of simulated nodes, and the
// Jacobi's replicated runs on each protocol and call.
var long = flag.Bool("libsigcheck.long", false, "run the long sweeps too: the encrypted all-gathers on every layout, the replicated Jacobi on every protocol (CI runs them)")

// needLong skips t unless -libsigcheck.long is given.
func needLong(t *testing.T) {
	t.Helper()
	if !*long {
		t.Skip("a long sweep's case: run with -libsigcheck.long (CI does)")
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if lib.dir != "" {
		os.RemoveAll(lib.dir)
	}
	os.Exit(code)
}

// compile builds one program from testdata (a .c file with mpicc, a .f90
// or .f file with mpifort) into dir and returns the executable's path.
func compile(t testing.TB, dir, src string) string {
	t.Helper()
	needMPI(t)
	compiler := "mpicc"
	if ext := filepath.Ext(src); ext == ".f90" || ext == ".f" {
		compiler = "mpifort"
		if _, err := exec.LookPath("gfortran"); err != nil {
			t.Skip("no gfortran: install gfortran to run the Fortran tests")
		}
	}
	exe := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	out, err := exec.Command(compiler, "-O1", "-o", exe, filepath.Join("testdata", src)).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, src, err, out)
	}
	return exe
}

// job is one run of a program under mpirun.
type job struct {
	Stdout, Stderr string
	Exit           int
	Summaries      []summary // by rank; empty without the library
}

// findings returns every finding of every rank.
func (j job) findings() []string {
	var out []string
	for _, s := range j.Summaries {
		for _, f := range s.Findings {
			out = append(out, fmt.Sprintf("rank %d: %s in %s from %d tag %d element %d: %s", s.Rank, f.Kind, f.Call, f.Peer, f.Tag, f.Element, f.Detail))
		}
	}
	return out
}

// checked sums the messages and collectives checked over ranks.
func (j job) checked() uint64 {
	var n uint64
	for _, s := range j.Summaries {
		for _, c := range s.Checked {
			n += c
		}
	}
	return n
}

// mpiJob runs argv on np ranks, with the library when withLib, its
// environment set from env (SIGCHECK_* names), and returns what it did.
func mpiJob(t testing.TB, np int, withLib bool, env map[string]string, argv ...string) job {
	t.Helper()
	needMPI(t)
	args := []string{"--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(np)}
	sumDir := t.TempDir()
	if withLib {
		args = append(args, "-x", "LD_PRELOAD="+library(t), "-x", "SIGCHECK_SUMMARY="+sumDir,
			"-x", "GODEBUG=asyncpreemptoff=1")
		if _, ok := env["SIGCHECK_ON_ERROR"]; !ok {
			env = with(env, "SIGCHECK_ON_ERROR", "report")
		}
		for k, v := range env {
			args = append(args, "-x", k+"="+v)
		}
	}
	args = append(args, argv...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", args...)
	cmd.Env = mpiEnv()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	j := job{Stdout: so.String(), Stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("mpirun %s: no end after 2 minutes\nstderr:\n%s", strings.Join(argv, " "), j.Stderr)
	case errors.As(err, &ee):
		j.Exit = ee.ExitCode()
	case err != nil:
		t.Fatalf("mpirun: %v", err)
	}
	if withLib {
		for r := range np {
			b, err := os.ReadFile(filepath.Join(sumDir, fmt.Sprintf("rank-%d.json", r)))
			if err != nil {
				continue // an aborted job writes none
			}
			var s summary
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("rank %d's summary: %v\n%s", r, err, b)
			}
			j.Summaries = append(j.Summaries, s)
		}
	}
	return j
}

// mpiEnv is the environment of the tests' mpirun: Open MPI's own runtime
// takes a second per job when it looks for network interfaces, and a
// fifth of one (of a job's third) when it tries UCX's and libfabric's
// messaging layers (pml ucx and cm) before settling on ob1; the tests
// need shared memory only, which is ob1's on any machine.
func mpiEnv() []string {
	return append(os.Environ(), "OMPI_MCA_btl=self,vader", "OMPI_MCA_pml=ob1", "OMPI_MCA_rmaps_base_oversubscribe=1")
}

func with(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for k2, v2 := range env {
		if k2 != k {
			out[k2] = v2
		}
	}
	return out
}

// jobSlots runs the subtests' MPI jobs a core's worth at a time: a job is
// several processes, but most of its time is mpirun starting them.
var jobSlots = make(chan struct{}, max(1, runtime.NumCPU()))

func slot(t *testing.T) {
	t.Helper()
	jobSlots <- struct{}{}
	t.Cleanup(func() { <-jobSlots })
}
