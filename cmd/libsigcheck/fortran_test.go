package main

// Fortran programs under the library: Open MPI's Fortran bindings call
// PMPI_ directly, so only fortran.c's entry points see their calls. The
// programs are in testdata/f_*.f90, one per binding (include 'mpif.h',
// use mpi, use mpi_f08) for the mismatch, and two correct ones that make
// every kind of covered call.

import (
	"maps"
	"os/exec"
	"strings"
	"testing"
)

// needFortran skips t unless mpifort and gfortran are here.
func needFortran(t *testing.T) {
	t.Helper()
	needMPI(t)
	for _, tool := range []string{"mpifort", "gfortran"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: install gfortran and Open MPI's Fortran bindings (Debian: gfortran libopenmpi-dev) to run the Fortran tests", tool)
		}
	}
}

// Ten INTEGERs received as ten REALs, through each of the three bindings:
// one report, at element 0, naming the Fortran types.
func TestFortranIntegerReceivedAsReal(t *testing.T) {
	t.Parallel()
	needFortran(t)
	for _, src := range []string{"f_int_real.f90", "f_int_real_mpifh.f90", "f_int_real_f08.f90"} {
		t.Run(strings.TrimSuffix(src, ".f90"), func(t *testing.T) {
			t.Parallel()
			slot(t)
			exe := compile(t, t.TempDir(), src)
			j := mpiJob(t, 2, true, nil, exe)
			f := j.findings()
			if len(f) != 1 || !strings.HasPrefix(f[0], "rank 1: ") || !strings.Contains(f[0], "from 0 tag 7 element 0") {
				t.Fatalf("want one finding on rank 1 at element 0, got %q\nstderr:\n%s", f, j.Stderr)
			}
			for _, want := range []string{"sigcheck: type mismatch: MPI_Recv on rank 1 of MPI_COMM_WORLD, from rank 0, tag 7",
				"first difference at element 0", "sender    integer  at item 0, byte 0", "receiver  real     at item 0, byte 0"} {
				if !strings.Contains(j.Stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, j.Stderr)
				}
			}
			if n := strings.Count(j.Stderr, "sigcheck: type mismatch"); n != 1 {
				t.Errorf("%d reports in stderr, want 1:\n%s", n, j.Stderr)
			}
			if j.Exit != 0 {
				t.Errorf("report mode: exit %d, want the program's own 0", j.Exit)
			}
			if src == "f_int_real.f90" {
				abort := mpiJob(t, 2, true, map[string]string{"SIGCHECK_ON_ERROR": "abort"}, exe)
				if abort.Exit != 86 {
					t.Errorf("abort mode: exit %d, want 86\n%s", abort.Exit, abort.Stderr)
				}
			}
		})
	}
}

// A Fortran MPI_Bcast whose root passes INTEGERs and the other rank REALs.
func TestFortranCollectiveMismatch(t *testing.T) {
	t.Parallel()
	needFortran(t)
	exe := compile(t, t.TempDir(), "f_bcast_int_real.f90")
	slot(t)
	j := mpiJob(t, 2, true, nil, exe)
	f := j.findings()
	if len(f) != 1 || !strings.HasPrefix(f[0], "rank 1: ") || !strings.Contains(f[0], "element 0") {
		t.Fatalf("want one finding on rank 1 at element 0, got %q\nstderr:\n%s", f, j.Stderr)
	}
	for _, want := range []string{"sigcheck: type mismatch: MPI_Bcast on rank 1 of MPI_COMM_WORLD, against rank 0",
		"rank 0  integer  at item 0, byte 0", "rank 1  real     at item 0, byte 0"} {
		if !strings.Contains(j.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, j.Stderr)
		}
	}
}

// Correct programs print the same and exit the same with the library as
// without, get no report, and every call reaches the checks: rank 0's
// counters are exactly the calls it makes, each receive and each
// collective once, and no rank has anything unchecked, so every
// communicator the program made has its shadow.
func TestFortranCorrectProgramsUnchanged(t *testing.T) {
	t.Parallel()
	needFortran(t)
	cases := []struct {
		src   string
		modes []string
		want  map[string]uint64 // rank 0's checked counters
	}{
		{"f_ok.f90", []string{"types", "checksum"}, map[string]uint64{
			"recv": 17, "sendrecv": 13, "bcast": 4, "reduce": 3, "allreduce": 7, "scan": 2,
			"gather": 5, "scatter": 2, "allgather": 2, "alltoall": 4}},
		{"f_ok_f08.f90", []string{"types"}, map[string]uint64{
			"recv": 5, "sendrecv": 2, "bcast": 1, "reduce": 1, "allreduce": 2, "gather": 1}},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.src, ".f90"), func(t *testing.T) {
			t.Parallel()
			slot(t)
			exe := compile(t, t.TempDir(), c.src)
			plain := plainJob(t, c.src, 3, exe)
			for _, mode := range c.modes {
				j := mpiJob(t, 3, true, map[string]string{"SIGCHECK_CHECK": mode, "SIGCHECK_ON_ERROR": "abort"}, exe)
				if j.Stdout != plain.Stdout || j.Exit != plain.Exit {
					t.Errorf("%s: stdout %q exit %d; without the library %q exit %d\n%s", mode, j.Stdout, j.Exit, plain.Stdout, plain.Exit, j.Stderr)
				}
				if f := j.findings(); len(f) != 0 || strings.Contains(j.Stderr, "sigcheck:") {
					t.Errorf("%s: findings on a correct program: %q\n%s", mode, f, j.Stderr)
				}
				if len(j.Summaries) != 3 {
					t.Fatalf("%s: %d summaries, want 3\n%s", mode, len(j.Summaries), j.Stderr)
				}
				if s := j.Summaries[0]; s.Rank != 0 || !maps.Equal(s.Checked, c.want) {
					t.Errorf("%s: rank %d checked %v; want rank 0 checked %v", mode, s.Rank, s.Checked, c.want)
				}
				for _, s := range j.Summaries {
					if len(s.Unchecked) != 0 {
						t.Errorf("%s: rank %d has unchecked calls: %v", mode, s.Rank, s.Unchecked)
					}
				}
			}
		})
	}
}
