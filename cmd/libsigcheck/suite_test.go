package main

// The suite: small MPI programs of our own (testdata/bug_*.c,
// ok_*.c, built with mpicc here), one per kind of bug and correct ones
// that use the same calls rightly. Each bug must be reported exactly once,
// by the rank that receives it, naming the call, the communicator, the
// peer, the tag and the first differing element, while the job ends with
// the program's own exit status (0: every program returns 0 by itself and
// trips no MPI error). No correct program may get a report, in either
// mode, and its output and exit status must be its own.

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A finding a bug program must produce, exactly once.
type want struct {
	rank    int    // the reporting rank, in comm
	call    string // the call that received the message (or the collective)
	comm    string // "" for MPI_COMM_WORLD; a trailing * matches a prefix
	peer    int    // the sender, in comm (the other rank, for collectives)
	tag     int    // -1 for collectives
	element int64  // the first element whose type differs
}

func (w want) String() string {
	comm := w.comm
	if comm == "" {
		comm = "MPI_COMM_WORLD"
	}
	return fmt.Sprintf("rank %d %s on %s from %d tag %d element %d", w.rank, w.call, comm, w.peer, w.tag, w.element)
}

type bugCase struct {
	src  string // in testdata: a .c program, or a .py one for mpi4py
	np   int
	want []want
}

// p2p is a point-to-point finding on MPI_COMM_WORLD.
func p2p(rank int, call string, peer, tag int, element int64) want {
	return want{rank: rank, call: call, peer: peer, tag: tag, element: element}
}

// coll is a collective's finding on MPI_COMM_WORLD.
func coll(rank int, call string, peer int, element int64) want {
	return want{rank: rank, call: call, peer: peer, tag: -1, element: element}
}

var bugCases = []bugCase{
	{"bug_same_bytes.c", 2, []want{p2p(1, "MPI_Recv", 0, 11, 0)}},
	{"bug_struct_swapped.c", 2, []want{p2p(1, "MPI_Recv", 0, 3, 1)}},
	{"bug_types.c", 2, []want{ // one per constructor, by tag
		p2p(1, "MPI_Recv", 0, 1, 5),  // contiguous
		p2p(1, "MPI_Recv", 0, 2, 2),  // vector
		p2p(1, "MPI_Recv", 0, 3, 3),  // hvector
		p2p(1, "MPI_Recv", 0, 4, 7),  // indexed
		p2p(1, "MPI_Recv", 0, 5, 2),  // hindexed
		p2p(1, "MPI_Recv", 0, 6, 4),  // indexed_block
		p2p(1, "MPI_Recv", 0, 7, 2),  // hindexed_block
		p2p(1, "MPI_Recv", 0, 8, 5),  // struct
		p2p(1, "MPI_Recv", 0, 9, 5),  // resized
		p2p(1, "MPI_Recv", 0, 10, 4), // subarray
		p2p(1, "MPI_Recv", 0, 11, 1), // dup
	}},
	{"bug_nonblocking.c", 2, []want{ // completed by Wait, Waitall, Waitany, Waitsome, Test, Testall, Testany, Testsome
		p2p(1, "MPI_Irecv", 0, 1, 1), p2p(1, "MPI_Irecv", 0, 11, 2), p2p(1, "MPI_Irecv", 0, 21, 3), p2p(1, "MPI_Irecv", 0, 31, 4),
		p2p(1, "MPI_Irecv", 0, 41, 5), p2p(1, "MPI_Irecv", 0, 51, 6), p2p(1, "MPI_Irecv", 0, 61, 7), p2p(1, "MPI_Irecv", 0, 71, 8),
	}},
	{"bug_persistent.c", 2, []want{p2p(1, "MPI_Recv_init", 0, 5, 2)}},
	{"bug_wildcard.c", 3, []want{p2p(0, "MPI_Recv", 2, 102, 1), p2p(0, "MPI_Irecv", 1, 201, 3)}},
	{"bug_probe.c", 2, []want{
		p2p(1, "MPI_Recv", 0, 1, 1), p2p(1, "MPI_Recv", 0, 2, 2), p2p(1, "MPI_Mrecv", 0, 3, 3), p2p(1, "MPI_Imrecv", 0, 4, 0),
	}},
	{"bug_sendrecv.c", 2, []want{p2p(0, "MPI_Sendrecv", 1, 1, 2), p2p(0, "MPI_Sendrecv_replace", 1, 2, 3)}},
	{"bug_modes.c", 2, []want{ // Ssend, Rsend, Bsend
		p2p(1, "MPI_Recv", 0, 1, 1), p2p(1, "MPI_Irecv", 0, 2, 2), p2p(1, "MPI_Recv", 0, 3, 3),
	}},
	{"bug_out_of_order.c", 2, []want{p2p(1, "MPI_Irecv", 0, 5, 2)}},
	{"bug_comm.c", 4, []want{
		{rank: 2, call: "MPI_Recv", comm: "bug_comm dup", peer: 0, tag: 7, element: 1},
		{rank: 1, call: "MPI_Recv", comm: "communicator #*", peer: 0, tag: 7, element: 2},
	}},
	{"bug_handle_reuse.c", 2, []want{p2p(1, "MPI_Recv", 0, 2, 2)}},
	{"bug_coll.c", 3, []want{
		coll(0, "MPI_Allreduce", 1, 0),
		coll(2, "MPI_Bcast", 0, 4),
		coll(2, "MPI_Alltoallv", 0, 2),
		coll(0, "MPI_Gather", 1, 0),
		coll(1, "MPI_Scatterv", 0, 2),
		coll(1, "MPI_Reduce", 2, 0),
		coll(0, "MPI_Allgather", 2, 0), coll(1, "MPI_Allgather", 2, 0), coll(2, "MPI_Allgather", 2, 0),
		coll(0, "MPI_Iallreduce", 2, 0),
		coll(1, "MPI_Ibcast", 0, 1),
	}},
}

// okCase is a correct program. p2p is the number of point-to-point
// messages it receives (all ranks), colls the number of collective calls
// all ranks make; in both modes the summaries must count exactly these as
// checked, and nothing unchecked.
type okCase struct {
	src        string
	np         int
	p2p, colls uint64
}

var okCases = []okCase{
	{"ok_blocking.c", 2, 10, 2},
	{"ok_byte_packed.c", 2, 6, 4},
	{"ok_count0_procnull.c", 3, 12, 9},
	{"ok_nonblocking.c", 3, 50, 3},
	{"ok_persistent.c", 2, 20, 2},
	{"ok_wildcard.c", 3, 14, 3},
	{"ok_sendrecv.c", 3, 33, 3},
	{"ok_out_of_order.c", 2, 10, 2},
	{"ok_types.c", 2, 14, 2},
	{"ok_handles.c", 2, 16, 2},
	{"ok_comms.c", 4, 41, 74},
	{"ok_coll.c", 3, 0, 72},
	{"ok_icoll.c", 3, 6, 75},
	// A datatype freed while requests that use it are pending.
	{"ok_type_free_pending.c", 2, 12, 2},
	// Count 0 from a NULL buffer.
	{"ok_count0_null.c", 2, 2, 2},
	// A struct of a double and an int, whose extent MPI pads.
	{"ok_struct_padding.c", 2, 1, 2},
	// Members out of order, a reversed indexed_block, overlapping blocks:
	// size equal to extent, yet not the buffer's bytes in order.
	{"ok_permuted.c", 2, 80, 0},
	// Attribute copy and delete callbacks: as many calls as without the
	// library, whose shadows copy no attributes.
	{"ok_attributes.c", 2, 0, 0},
	// MPI_THREAD_MULTIPLE: request handles reused between threads, and
	// non-blocking collectives' checks completed in several threads.
	{"ok_threads.c", 2, 12000, 0},
	{"ok_threads_nbc.c", 2, 0, 4},
}

func TestSuiteBugs(t *testing.T) {
	t.Parallel()
	for _, c := range bugCases {
		t.Run(strings.TrimSuffix(c.src, filepath.Ext(c.src)), func(t *testing.T) {
			t.Parallel()
			runBug(t, c)
		})
	}
}

func TestSuiteCorrect(t *testing.T) {
	t.Parallel()
	for _, c := range okCases {
		t.Run(strings.TrimSuffix(c.src, filepath.Ext(c.src)), func(t *testing.T) {
			t.Parallel()
			runOK(t, c, true)
		})
	}
}

// TestSuiteChecksumInject flips bits in received data at random (5 % of
// about 200 messages, seeded) in checksum mode: every flip is reported as
// a corrupt message, and nothing else.
func TestSuiteChecksumInject(t *testing.T) {
	t.Parallel()
	argv := program(t, "ok_inject.c")
	slot(t)
	j := mpiJob(t, 2, true, map[string]string{"SIGCHECK_CHECK": "checksum", "SIGCHECK_INJECT": "0.05", "SIGCHECK_SEED": "1"}, argv...)
	if j.Exit != 0 {
		t.Errorf("exit %d, want the program's own 0\nstderr:\n%s", j.Exit, j.Stderr)
	}
	if len(j.Summaries) != 2 {
		t.Fatalf("%d summaries, want 2\nstderr:\n%s", len(j.Summaries), j.Stderr)
	}
	var corrupt, injected, mismatches uint64
	var findings int
	for _, s := range j.Summaries {
		corrupt += s.Corrupt
		injected += s.Injected
		mismatches += s.Mismatches
		findings += len(s.Findings)
		for _, f := range s.Findings {
			if f.Kind != "corrupt message" || !strings.Contains(f.Detail, "SIGCHECK_INJECT") {
				t.Errorf("rank %d: %s in %s from %d tag %d: %s; want only corrupt messages flipped by SIGCHECK_INJECT",
					s.Rank, f.Kind, f.Call, f.Peer, f.Tag, f.Detail)
			}
		}
	}
	if p2p, _ := checkedSplit(j); p2p != 200 {
		t.Errorf("%d messages checked, want 200", p2p)
	}
	if injected == 0 || corrupt != injected || mismatches != 0 || uint64(findings) != corrupt {
		t.Errorf("injected %d, corrupt %d, mismatches %d, findings %d; want corrupt = injected > 0 = findings, no mismatch\nstderr:\n%s",
			injected, corrupt, mismatches, findings, j.Stderr)
	}
}

// runBug runs a bug program in report mode and checks its findings
// against c.want, exactly.
func runBug(t *testing.T, c bugCase) {
	t.Helper()
	argv := program(t, c.src)
	slot(t)
	j := mpiJob(t, c.np, true, nil, argv...)
	cmd := "mpirun -np " + fmt.Sprint(c.np) + " " + strings.Join(argv, " ") + " (SIGCHECK_ON_ERROR=report)"
	if j.Exit != 0 {
		t.Errorf("%s: exit %d, want the program's own 0", cmd, j.Exit)
	}
	if len(j.Summaries) != c.np {
		t.Fatalf("%s: %d summaries, want %d\nstdout:\n%s\nstderr:\n%s", cmd, len(j.Summaries), c.np, j.Stdout, j.Stderr)
	}
	var got []string
	var mismatches, corrupt uint64
	for _, s := range j.Summaries {
		mismatches += s.Mismatches
		corrupt += s.Corrupt
		for _, f := range s.Findings {
			if f.Kind != "type mismatch" {
				got = append(got, fmt.Sprintf("rank %d: %s in %s from %d tag %d: %s", s.Rank, f.Kind, f.Call, f.Peer, f.Tag, f.Detail))
				continue
			}
			w := want{rank: f.Rank, call: f.Call, comm: f.Comm, peer: f.Peer, tag: f.Tag, element: f.Element}
			if f.Comm == "MPI_COMM_WORLD" {
				w.comm = ""
			}
			got = append(got, w.String())
		}
	}
	var wanted []string
	for _, w := range c.want {
		wanted = append(wanted, w.String())
	}
	missing, extra := diff(wanted, got)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("%s:\nmissing findings:\n\t%s\nunexpected findings:\n\t%s\nstderr:\n%s", cmd,
			strings.Join(missing, "\n\t"), strings.Join(extra, "\n\t"), j.Stderr)
	}
	if mismatches != uint64(len(c.want)) || corrupt != 0 {
		t.Errorf("%s: the summaries count %d mismatches and %d corrupt messages, want %d and 0", cmd, mismatches, corrupt, len(c.want))
	}
	if n := strings.Count(j.Stderr, "sigcheck: type mismatch: "); n != len(c.want) {
		t.Errorf("%s: %d reports on stderr, want %d:\n%s", cmd, n, len(c.want), j.Stderr)
	}
}

// diff matches wanted against got, where a wanted communicator ending in
// * matches any of that prefix, and returns what is left of each.
func diff(wanted, got []string) (missing, extra []string) {
	extra = slices.Clone(got)
	for _, w := range wanted {
		i := slices.IndexFunc(extra, func(g string) bool { return matchFinding(w, g) })
		if i < 0 {
			missing = append(missing, w)
			continue
		}
		extra = slices.Delete(extra, i, i+1)
	}
	return missing, extra
}

func matchFinding(w, g string) bool {
	if i := strings.Index(w, "*"); i >= 0 {
		// "... on communicator #* from ...": the rest after the next space
		// must agree.
		prefix, rest := w[:i], w[i+1:]
		if !strings.HasPrefix(g, prefix) {
			return false
		}
		tail := g[len(prefix):]
		j := strings.Index(tail, " ")
		return j >= 0 && tail[j:] == rest
	}
	return w == g
}

// runOK runs a correct program without the library and with it in both
// modes, aborting on any finding; output and exit status must be the
// program's own, nothing reported, and the summaries must count its
// messages (exactly, when exact).
func runOK(t *testing.T, c okCase, exact bool) {
	t.Helper()
	argv := program(t, c.src)
	slot(t)
	plain := plainJob(t, c.src, c.np, argv...)
	for _, mode := range []string{"types", "checksum"} {
		cmd := fmt.Sprintf("mpirun -np %d %s (SIGCHECK_CHECK=%s SIGCHECK_ON_ERROR=abort)", c.np, strings.Join(argv, " "), mode)
		j := mpiJob(t, c.np, true, map[string]string{"SIGCHECK_CHECK": mode, "SIGCHECK_ON_ERROR": "abort"}, argv...)
		if j.Stdout != plain.Stdout || j.Exit != plain.Exit {
			t.Errorf("%s: stdout %q, exit %d; without the library %q, exit %d\nstderr:\n%s", cmd, j.Stdout, j.Exit, plain.Stdout, plain.Exit, j.Stderr)
		}
		if f := j.findings(); len(f) != 0 || strings.Contains(j.Stderr, "sigcheck:") {
			t.Errorf("%s: findings on a correct program: %q\nstderr:\n%s", cmd, f, j.Stderr)
		}
		if len(j.Summaries) != c.np {
			t.Errorf("%s: %d summaries, want %d", cmd, len(j.Summaries), c.np)
			continue
		}
		p2p, colls := checkedSplit(j)
		var unchecked uint64
		for _, s := range j.Summaries {
			for _, n := range s.Unchecked {
				unchecked += n
			}
		}
		switch {
		case exact && (p2p != c.p2p || colls != c.colls || unchecked != 0):
			t.Errorf("%s: checked %d messages and %d collective calls, %d unchecked; want %d, %d and 0\nsummaries: %+v",
				cmd, p2p, colls, unchecked, c.p2p, c.colls, j.Summaries)
		case !exact && (p2p < c.p2p || colls < c.colls || unchecked != 0):
			t.Errorf("%s: checked %d messages and %d collective calls, %d unchecked; want at least %d and %d, and 0\nsummaries: %+v",
				cmd, p2p, colls, unchecked, c.p2p, c.colls, j.Summaries)
		}
	}
}

// checkedSplit sums the summaries' checked counts over ranks, as
// point-to-point messages and collective calls.
func checkedSplit(j job) (p2p, colls uint64) {
	for _, s := range j.Summaries {
		for call, n := range s.Checked {
			switch call {
			case "send", "recv", "sendrecv":
				p2p += n
			default:
				colls += n
			}
		}
	}
	return p2p, colls
}

// program returns the command line that runs a testdata program: a C
// program built with mpicc into a directory of the test, or a Python one
// under /usr/bin/python3 with mpi4py and numpy.
func program(t *testing.T, src string) []string {
	t.Helper()
	if filepath.Ext(src) == ".py" {
		needMPI4Py(t)
		abs, err := filepath.Abs(filepath.Join("testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		return []string{python, abs}
	}
	return []string{compile(t, t.TempDir(), src)}
}

// python is the system's Python, whose mpi4py is built against the system's
// Open MPI (a Python of pyenv's earlier on PATH may have none).
const python = "/usr/bin/python3"

var mpi4py struct {
	once sync.Once
	err  error
	out  []byte
}

func needMPI4Py(t *testing.T) {
	t.Helper()
	needMPI(t)
	mpi4py.once.Do(func() {
		mpi4py.out, mpi4py.err = exec.Command(python, "-c", "import mpi4py, numpy").CombinedOutput()
	})
	if mpi4py.err != nil {
		t.Skipf("%s has no mpi4py or numpy (Debian: python3-mpi4py python3-numpy): %v\n%s", python, mpi4py.err, mpi4py.out)
	}
}
