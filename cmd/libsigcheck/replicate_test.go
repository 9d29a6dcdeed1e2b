package main

// Replication (SIGCHECK_REPLICATE) under real MPI jobs: the C Jacobi
// stencil with faults injected into one replica set (every answer
// bit-identical to the fault-free run), into two replicas of a rank (the
// job ends with the no-majority report, never with a wrong answer) and
// with two replicas (detected); correct programs of the suite, in C,
// Fortran and Python, give their own output and exit status; timing-
// dependent answers are replica 0's in every replica; replicas of a rank
// are placed on distinct nodes.

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sigcheck/sigcheck/internal/ranksum"
)

// repTotals sums the ranks' replication counts; found says whether every
// rank wrote one.
func repTotals(t *testing.T, j job, np int) (sum ranksum.Replication) {
	t.Helper()
	if len(j.Summaries) != np {
		t.Fatalf("%d summaries, want %d\nstdout:\n%s\nstderr:\n%s", len(j.Summaries), np, j.Stdout, j.Stderr)
	}
	for _, s := range j.Summaries {
		r := s.Replication
		if r == nil {
			t.Fatalf("rank %d's summary has no replication", s.Rank)
		}
		sum.Degree = r.Degree
		sum.Compared += r.Compared
		sum.Found += r.Found
		sum.Corrected += r.Corrected
		sum.Uncorrectable += r.Uncorrectable
		sum.Injected += r.Injected
		sum.CollCompared += r.CollCompared
		sum.CollFound += r.CollFound
		sum.CollCorrected += r.CollCorrected
		sum.Agreed += r.Agreed
		sum.Wildcards += r.Wildcards
	}
	return sum
}

func repEnv(r int, kv ...string) map[string]string {
	env := map[string]string{"SIGCHECK_REPLICATE": fmt.Sprint(r), "SIGCHECK_REPLICATE_WAIT": "60"}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return env
}

// plainJobs holds runs without the library, by program and size, made
// once for the test binary: the suite's tests and these compare against
// the same run.
var plainJobs sync.Map

type plainRun struct {
	once sync.Once
	j    job
}

func plainJob(t *testing.T, src string, np int, argv ...string) job {
	t.Helper()
	v, _ := plainJobs.LoadOrStore(fmt.Sprintf("%s/%d/%s", src, np, strings.Join(argv[1:], " ")), &plainRun{})
	p := v.(*plainRun)
	p.once.Do(func() { p.j = mpiJob(t, np, false, nil, argv...) })
	if p.j.Exit != 0 || p.j.Stdout == "" {
		t.Fatalf("%s without the library: exit %d, stdout %q\n%s", src, p.j.Exit, p.j.Stdout, p.j.Stderr)
	}
	return p.j
}

// TestReplicateJacobi is the C program, run unmodified: 64×64, 150
// steps, on 2 ranks.
func TestReplicateJacobi(t *testing.T) {
	t.Parallel()
	argv := append(program(t, "jacobi.c"), "64", "150", "15")
	slot(t)
	plain := plainJob(t, "jacobi.c", 2, argv...)
	// r = 3, faults in replica set 0 at 1 % of messages: every run's
	// answer is the fault-free one, every flip voted out. Three runs, one
	// of them All-to-all, one with MPI_Sendrecv; those two with
	// -libsigcheck.long only (CI runs them).
	for _, c := range []struct {
		name string
		env  map[string]string
		argv []string
		long bool
	}{
		{"msgplushash", repEnv(3, "SIGCHECK_INJECT", "0.01", "SIGCHECK_SEED", "1"), argv, false},
		{"alltoall", repEnv(3, "SIGCHECK_INJECT", "0.01", "SIGCHECK_SEED", "2", "SIGCHECK_REPLICATE_PROTOCOL", "alltoall"), argv, true},
		{"sendrecv", repEnv(3, "SIGCHECK_INJECT", "0.01", "SIGCHECK_SEED", "3"), append(argv[:len(argv):len(argv)], "sendrecv"), true},
	} {
		t.Run("protect-"+c.name, func(t *testing.T) {
			t.Parallel()
			if c.long {
				needLong(t)
			}
			slot(t)
			c.env["SIGCHECK_ON_ERROR"] = "abort"
			j := mpiJob(t, 6, true, c.env, c.argv...)
			if j.Stdout != plain.Stdout || j.Exit != 0 {
				t.Fatalf("stdout %q, exit %d; fault-free %q\nstderr:\n%s", j.Stdout, j.Exit, plain.Stdout, j.Stderr)
			}
			s := repTotals(t, j, 6)
			if s.Injected == 0 || s.Found == 0 || s.Corrected == 0 || s.Uncorrectable != 0 {
				t.Errorf("injected %d, found %d, corrected %d (+%d collectives), uncorrectable %d: want flips found and corrected",
					s.Injected, s.Found, s.Corrected, s.CollCorrected, s.Uncorrectable)
			}
			// A flipped message is corrected once, at its receiver; a
			// flipped collective input, at every rank of its replica.
			if s.Corrected > s.Injected {
				t.Errorf("%d messages corrected for %d flips", s.Corrected, s.Injected)
			}
			if strings.Contains(j.Stderr, "sigcheck:") {
				t.Errorf("corrected flips are counted, not printed:\n%s", j.Stderr)
			}
		})
	}
	// Two replicas of every rank hit, each its own bit: no copy has a
	// majority, and the job ends before any answer.
	t.Run("two-replicas-hit", func(t *testing.T) {
		t.Parallel()
		slot(t)
		j := mpiJob(t, 6, true, repEnv(3, "SIGCHECK_INJECT", "0.5", "SIGCHECK_INJECT_REPLICAS", "0,1", "SIGCHECK_ON_ERROR", "abort"), argv...)
		if j.Exit != 86 || !strings.Contains(j.Stderr, "sigcheck: no majority: ") {
			t.Fatalf("exit %d, want 86 and the no-majority report\nstderr:\n%s", j.Exit, j.Stderr)
		}
		if j.Stdout != "" && j.Stdout != plain.Stdout {
			t.Errorf("a wrong answer: %q, fault-free %q", j.Stdout, plain.Stdout)
		}
	})
	// r = 2 detects: the job ends at the first disagreement.
	t.Run("r2-detect", func(t *testing.T) {
		t.Parallel()
		slot(t)
		j := mpiJob(t, 4, true, repEnv(2, "SIGCHECK_INJECT", "0.01", "SIGCHECK_SEED", "1", "SIGCHECK_ON_ERROR", "abort"), argv...)
		if j.Exit != 86 || !strings.Contains(j.Stderr, "sigcheck: replicas disagree: ") || j.Stdout != "" {
			t.Fatalf("exit %d, stdout %q; want 86, no answer, and the disagreement\nstderr:\n%s", j.Exit, j.Stdout, j.Stderr)
		}
	})
	// With -on-error report it runs on and counts; and on two nodes
	// interleaved (the test hook stands for a hostfile of two machines),
	// the replicas of each rank run on different ones.
	t.Run("r2-report-spread", func(t *testing.T) {
		t.Parallel()
		slot(t)
		hosts := []string{"a", "b", "a", "b"}
		j := mpiJob(t, 4, true, repEnv(2, "SIGCHECK_INJECT", "0.01", "SIGCHECK_SEED", "1", "SIGCHECK_TEST_HOSTS", strings.Join(hosts, ",")), argv...)
		s := repTotals(t, j, 4)
		if j.Exit != 0 || s.Found == 0 || s.Uncorrectable == 0 || s.Corrected != 0 {
			t.Errorf("exit %d, found %d, uncorrectable %d, corrected %d; want 0 and disagreements counted, none corrected",
				j.Exit, s.Found, s.Uncorrectable, s.Corrected)
		}
		nodes := map[int]map[string]bool{}
		for _, sum := range j.Summaries {
			r := sum.Replication
			if r.Node != hosts[sum.Rank] {
				t.Errorf("rank %d ran on %q by its summary, %q by the hook", sum.Rank, r.Node, hosts[sum.Rank])
			}
			if nodes[r.AppRank] == nil {
				nodes[r.AppRank] = map[string]bool{}
			}
			if nodes[r.AppRank][r.Node] {
				t.Errorf("two replicas of rank %d on node %s", r.AppRank, r.Node)
			}
			nodes[r.AppRank][r.Node] = true
		}
	})
}

// TestReplicateCorrect: correct programs of the suite give their own output
// and exit status under -replicate 2, with nothing found; and under r = 3
// with every send and collective input of replica 0 flipped, every flip
// voted out.
func TestReplicateCorrect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src      string
		np, r    int
		protocol string
		inject   string
		env      []string
	}{
		{"ok_nonblocking.c", 3, 2, "", "", nil},
		{"ok_wildcard.c", 3, 2, "alltoall", "", nil},
		{"ok_comms.c", 4, 2, "", "", nil},
		{"rep_determinism.c", 3, 2, "", "", nil},
		{"f_ok.f90", 3, 2, "", "", nil},
		// Fortran calls on MPI_COMM_WORLD with no entry point of fortran.c.
		{"f_rep_world.f90", 2, 2, "", "", nil},
		{"mpi4py_ok.py", 2, 2, "", "", nil},
		{"ok_icoll.c", 3, 3, "", "1", nil},
		// Matching that replica 0 must decide for all: a wildcard whose
		// long message is still in transfer (no single-copy, so it is),
		// probes of one source behind a wildcard, and MPI_Cancel.
		{"rep_matching.c", 2, 3, "", "", []string{"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}},
	}
	for _, c := range cases {
		name := strings.TrimSuffix(c.src, c.src[strings.LastIndex(c.src, "."):])
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if strings.HasSuffix(c.src, ".f90") {
				needFortran(t)
			}
			argv := program(t, c.src)
			slot(t)
			plain := plainJob(t, c.src, c.np, argv...)
			env := repEnv(c.r, append([]string{"SIGCHECK_ON_ERROR", "abort"}, c.env...)...)
			if c.protocol != "" {
				env["SIGCHECK_REPLICATE_PROTOCOL"] = c.protocol
			}
			if c.inject != "" {
				env["SIGCHECK_INJECT"] = c.inject
			}
			j := mpiJob(t, c.r*c.np, true, env, argv...)
			if j.Stdout != plain.Stdout || j.Exit != plain.Exit {
				t.Fatalf("stdout %q, exit %d; without the library %q, exit %d\nstderr:\n%s", j.Stdout, j.Exit, plain.Stdout,
					plain.Exit, j.Stderr)
			}
			if strings.Contains(j.Stderr, "sigcheck:") {
				t.Errorf("reports on a correct program:\n%s", j.Stderr)
			}
			s := repTotals(t, j, c.r*c.np)
			if s.Degree != c.r || s.Compared+s.CollCompared == 0 || s.Uncorrectable != 0 {
				t.Errorf("degree %d, compared %d messages and %d collectives, %d uncorrectable", s.Degree, s.Compared, s.CollCompared, s.Uncorrectable)
			}
			switch {
			case c.inject == "" && s.Found+s.CollFound != 0:
				t.Errorf("found %d messages and %d collectives disagreeing without faults", s.Found, s.CollFound)
			case c.inject != "" && (s.Injected == 0 || s.Corrected == 0 || s.CollCorrected == 0):
				t.Errorf("injected %d, corrected %d messages and %d collectives: want every kind corrected", s.Injected, s.Corrected, s.CollCorrected)
			}
			if c.src == "rep_determinism.c" && (s.Agreed == 0 || s.Wildcards == 0) {
				t.Errorf("%d answers agreed, %d wildcards resolved: want both", s.Agreed, s.Wildcards)
			}
			if c.src == "f_rep_world.f90" {
				// Its one MPI_Comm_get_attr has no entry point: counted.
				var n uint64
				for _, sum := range j.Summaries {
					for why, k := range sum.Replication.NotCompared {
						if strings.HasPrefix(why, "Fortran calls") {
							n += k
						}
					}
				}
				if n != uint64(c.r*c.np) {
					t.Errorf("%d Fortran calls with no entry point counted, want %d", n, c.r*c.np)
				}
			}
		})
	}
}

// TestReplicateThreads: two threads calling MPI at once, which no vote
// could follow, end the job at once, saying why, with the status of a
// setting that cannot work (2).
func TestReplicateThreads(t *testing.T) {
	t.Parallel()
	argv := program(t, "ok_threads_nbc.c")
	slot(t)
	j := mpiJob(t, 4, true, repEnv(2), argv...)
	if j.Exit != 2 || !strings.Contains(j.Stderr, "two threads of the application called MPI at once") {
		t.Errorf("exit %d, want 2 and why\n%s", j.Exit, j.Stderr)
	}
}
