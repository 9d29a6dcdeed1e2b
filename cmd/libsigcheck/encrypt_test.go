package main

// SIGCHECK_ENCRYPT=1 in real MPI programs: the all-gathers of
// testdata/enc_allgather.c (many sizes, datatypes packed and not,
// MPI_IN_PLACE, communicators other than the world, each algorithm) give
// the same output as without the library, on 4 to 8 ranks split into
// simulated nodes in several ways; a byte altered on the wire is found.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sigcheck/sigcheck/channel/encrypt"
)

// plainRuns caches the program's output without the library, by ranks.
var plainRuns sync.Map

func plainOutput(t *testing.T, exe string, np int) string {
	t.Helper()
	if v, ok := plainRuns.Load(np); ok {
		return v.(string)
	}
	j := mpiJob(t, np, false, nil, exe)
	if j.Exit != 0 || !strings.Contains(j.Stdout, " 0 wrong blocks") {
		t.Fatalf("without the library, %d ranks: exit %d, stdout %q\nstderr:\n%s", np, j.Exit, j.Stdout, j.Stderr)
	}
	plainRuns.Store(np, j.Stdout)
	return j.Stdout
}

// enc_allgather.c's all-gathers, by communicator: the world's, five on
// each algorithm's, the odd or even ranks', the first or second half's.
const (
	encWorld = 16
	encAlgs  = 5 * 9
	encTotal = encWorld + encAlgs + 16 + 16
)

func TestEncryptedAllgather(t *testing.T) {
	t.Parallel()
	exe := compile(t, t.TempDir(), "enc_allgather.c")
	for _, c := range []struct {
		np    int
		nodes string // SIGCHECK_NODES, "" for the machine's one node
		// all-gathers each rank encrypts: the world's, the algorithms',
		// and the odd ranks' (which span nodes unless there is one).
		minEnc uint64
		// long: only with -libsigcheck.long; the first layout runs every
		// algorithm across nodes too, and encgather_test.go runs these
		// layouts' schedules between goroutines.
		long bool
	}{
		{4, "2", encWorld + encAlgs + 16, false},
		{7, "2", encWorld + encAlgs + 16, true},
		{8, "2:cyclic", encWorld + encAlgs, true},
		{4, "4", encTotal, true},
		{5, "", 0, false},
	} {
		t.Run(fmt.Sprintf("np=%d/nodes=%s", c.np, c.nodes), func(t *testing.T) {
			t.Parallel()
			if c.long {
				needLong(t)
			}
			slot(t)
			want := plainOutput(t, exe, c.np)
			env := map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_ON_ERROR": "abort"}
			if c.nodes != "" {
				env["SIGCHECK_NODES"] = c.nodes
			}
			nonces := t.TempDir()
			env["SIGCHECK_TEST_NONCES"] = nonces
			j := mpiJob(t, c.np, true, env, exe)
			if j.Stdout != want || j.Exit != 0 || strings.Contains(j.Stderr, "sigcheck:") {
				t.Fatalf("stdout %q, exit %d; without the library %q\nstderr:\n%s", j.Stdout, j.Exit, want, j.Stderr)
			}
			if len(j.Summaries) != c.np {
				t.Fatalf("%d summaries, want %d", len(j.Summaries), c.np)
			}
			algs := map[string]bool{}
			var sealed uint64
			for _, s := range j.Summaries {
				e := s.Encryption
				if e == nil {
					t.Fatalf("rank %d: no encryption in the summary", s.Rank)
				}
				var n uint64
				for a, k := range e.Allgathers {
					n += k
					algs[a] = true
				}
				sealed += e.Sealed
				if n < c.minEnc || n+e.OneNode != encTotal || e.Tampered != 0 || (c.minEnc > 0 && e.Clear["reduce: not encrypted"] == 0) {
					t.Errorf("rank %d: %d all-gathers encrypted (want at least %d), %d within a node (want %d in all), %d tampered, in the clear %v",
						s.Rank, n, c.minEnc, e.OneNode, encTotal, e.Tampered, e.Clear)
				}
			}
			if c.minEnc > 0 && len(algs) != len(encrypt.Algorithms()) {
				t.Errorf("the algorithms that ran: %v; want all eight", algs)
			}
			checkNonces(t, nonces, c.np, sealed)
		})
	}
}

// checkNonces reads the nonces every rank sealed under: none may repeat,
// in the whole job, and each starts with its rank's world rank.
func checkNonces(t *testing.T, dir string, np int, sealed uint64) {
	t.Helper()
	seen := map[[12]byte]bool{}
	for r := range np {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("nonces-%d.bin", r)))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+12 <= len(b); i += 12 {
			n := [12]byte(b[i : i+12])
			if seen[n] {
				t.Fatalf("nonce %x twice", n)
			}
			seen[n] = true
			if binary.LittleEndian.Uint32(n[:4]) != uint32(r) {
				t.Fatalf("rank %d sealed under nonce %x, not its own prefix", r, n)
			}
		}
	}
	if uint64(len(seen)) != sealed {
		t.Errorf("%d nonces listed, %d seals counted", len(seen), sealed)
	}
}

// A byte flipped in a ciphertext between nodes (SIGCHECK_TEST_TAMPER:
// each rank alters the third frame it receives from another node) is
// reported by the rank that opens it: the job ends with status 86, or,
// with SIGCHECK_ON_ERROR=report, goes on with the blocks left zero.
func TestEncryptTampered(t *testing.T) {
	t.Parallel()
	exe := compile(t, t.TempDir(), "enc_allgather.c")
	env := map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_NODES": "2", "SIGCHECK_TEST_TAMPER": "3"}
	t.Run("abort", func(t *testing.T) {
		t.Parallel()
		slot(t)
		j := mpiJob(t, 4, true, with(env, "SIGCHECK_ON_ERROR", "abort"), exe)
		if j.Exit != 86 || !strings.Contains(j.Stderr, "sigcheck: tampered ciphertext: MPI_Allgather on rank ") ||
			!strings.Contains(j.Stderr, "did not authenticate") {
			t.Errorf("exit %d, want 86 and the report\nstderr:\n%s", j.Exit, j.Stderr)
		}
	})
	t.Run("report", func(t *testing.T) {
		t.Parallel()
		slot(t)
		j := mpiJob(t, 4, true, with(env, "SIGCHECK_ON_ERROR", "report"), exe)
		var tampered uint64
		kinds := map[string]int{}
		for _, s := range j.Summaries {
			if s.Encryption != nil {
				tampered += s.Encryption.Tampered
			}
			for _, f := range s.Findings {
				kinds[f.Kind]++
			}
		}
		if j.Exit != 0 || len(j.Summaries) != 4 || tampered == 0 || kinds["tampered ciphertext"] != int(tampered) || len(kinds) != 1 ||
			strings.Contains(j.Stdout, " 0 wrong blocks") {
			t.Errorf("exit %d, %d summaries, %d tampered, findings %v, stdout %q: want the job to end normally, every tampering reported, wrong blocks\nstderr:\n%s",
				j.Exit, len(j.Summaries), tampered, kinds, j.Stdout, j.Stderr)
		}
	})
}

// A setting the library cannot honour ends the job at MPI_Init with one
// line from rank 0.
func TestEncryptBadSetting(t *testing.T) {
	t.Parallel()
	exe := compile(t, t.TempDir(), "enc_allgather.c")
	slot(t)
	j := mpiJob(t, 2, true, map[string]string{"SIGCHECK_ENCRYPT": "1", "SIGCHECK_NODES": "3"}, exe)
	if j.Exit != 2 || !bytes.Contains([]byte(j.Stderr), []byte("sigcheck: SIGCHECK_NODES=3: more nodes than the job's 2 ranks")) {
		t.Errorf("exit %d, want 2 and the reason\nstderr:\n%s", j.Exit, j.Stderr)
	}
}

// sigcheck mpirun -encrypt, as a user runs it: the secret reaches the
// ranks through mpirun's environment and never its command line, and
// the summary says what was encrypted and what crossed in the clear.
func TestSigcheckMpirunEncrypt(t *testing.T) {
	t.Parallel()
	lib := library(t)
	dir := t.TempDir()
	exe := compile(t, dir, "enc_allgather.c")
	sigcheck := filepath.Join(dir, "sigcheck")
	if out, err := exec.Command("go", "build", "-o", sigcheck, "../sigcheck").CombinedOutput(); err != nil {
		t.Fatalf("building sigcheck: %v\n%s", err, out)
	}
	slot(t)
	want := plainOutput(t, exe, 4)
	sum := filepath.Join(dir, "summary.json")
	cmd := exec.Command(sigcheck, "mpirun", "-lib", lib, "-encrypt", "-nodes", "2", "-summary", sum, "--",
		"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4", exe)
	cmd.Dir = dir
	cmd.Env = mpiEnv()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil || so.String() != want {
		t.Fatalf("%v: stdout %q, want %q\nstderr:\n%s", err, so.String(), want, se.String())
	}
	for _, line := range []string{"sigcheck: encrypted: ", " all-gathers between 2 simulated nodes (", "sigcheck: in the clear between nodes: "} {
		if !strings.Contains(se.String(), line) {
			t.Errorf("stderr lacks %q:\n%s", line, se.String())
		}
	}
	b, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"SIGCHECK_ENCRYPT_SECRET"`)) || bytes.Contains(b, []byte("SIGCHECK_ENCRYPT_SECRET=")) ||
		!bytes.Contains(b, []byte("HKDF with SIGCHECK_ENCRYPT_SECRET")) {
		t.Errorf("the secret went by name on mpirun's command line, and reached the ranks? %s", b)
	}
}
