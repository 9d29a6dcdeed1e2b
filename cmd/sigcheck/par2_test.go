package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sigcheck/sigcheck/tree/manifest"
)

// TestPar2HeadToHead holds sigcheck to par2's reach: the same files, the
// same block size (par2 -s, sigcheck -seg), the same number of recovery
// blocks (par2 -r, then sigcheck -c with par2's count), and the same
// damage to both: scattered blocks, a burst, a truncated file, a missing
// file, and recovery data damaged as well, at 5 % and 10 %, at par2's
// limit and one block past it. Wherever par2 restores the files, sigcheck
// must too. The real par2 (Debian's par2, par2cmdline 0.8.1) is run; the
// test skips without it, and CI installs it.
func TestPar2HeadToHead(t *testing.T) {
	if _, err := exec.LookPath("par2"); err != nil {
		t.Skip("par2 is not installed (apt-get install par2; CI installs it)")
	}
	const block = 4096
	files := map[string][]byte{}
	names := []string{"alpha.bin", "beta.bin", "gamma.bin", "delta.txt"}
	for k, n := range []int{300 << 10, 125_000, 50 << 10, 9000} {
		files[names[k]] = randomBytes(n, uint64(k+1))
	}
	nblocks := 0
	for _, n := range names {
		nblocks += (len(files[n]) + block - 1) / block
	}
	var table []string
	for _, r := range []int{5, 10} {
		base := t.TempDir()
		p2dir, scdir := filepath.Join(base, "par2"), filepath.Join(base, "sigcheck")
		for _, d := range []string{p2dir, scdir} {
			os.Mkdir(d, 0o755)
			for _, n := range names {
				os.WriteFile(filepath.Join(d, n), files[n], 0o644)
			}
		}
		out, err := par2(p2dir, append([]string{"create", "-s" + strconv.Itoa(block), "-r" + strconv.Itoa(r), "set.par2"}, names...)...)
		if err != nil {
			t.Fatalf("par2 create: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`Recovery block count: (\d+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("par2 create said no recovery block count:\n%s", out)
		}
		count, _ := strconv.Atoi(m[1])
		if o, e, code := sigcheck(t, "manifest", "-seg", strconv.Itoa(block), "-c", m[1], "-o", filepath.Join(scdir, "set.sigcheck"), scdir); code != 0 {
			t.Fatalf("sigcheck manifest: %s %s", o, e)
		}
		mf, _ := os.Open(filepath.Join(scdir, "set.sigcheck"))
		fi, _ := mf.Stat()
		man, err := manifest.Open(mf, fi.Size())
		mf.Close()
		if err != nil || man.Parity*man.Stripes != count || man.Stripes != 1 {
			t.Fatalf("sigcheck's parity: %d×%d (%v), par2's %d", man.Parity, man.Stripes, err, count)
		}
		// damage applies one pattern to a directory's copy of the files (and
		// to its recovery data, rec blocks of it).
		type damage struct {
			name   string
			apply  func(dir string, rec int, tool string)
			rec    int
			beyond bool // past par2's reach, not sigcheck's
		}
		rnd := func(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(r))) }
		// blocksOf lists every (file, block) of the set, in order.
		var all [][2]int
		for f, n := range names {
			for b := 0; b*block < len(files[n]); b++ {
				all = append(all, [2]int{f, b})
			}
		}
		flipBlocks := func(dir string, picks [][2]int) {
			for _, p := range picks {
				path := filepath.Join(dir, names[p[0]])
				b, _ := os.ReadFile(path)
				b[min(len(b)-1, p[1]*block+777)] ^= 0x55
				os.WriteFile(path, b, 0o644)
			}
		}
		scattered := func(k int, seed uint64) func(string, int, string) {
			return func(dir string, _ int, _ string) {
				perm := rnd(seed).Perm(len(all))[:k]
				var picks [][2]int
				for _, x := range perm {
					picks = append(picks, all[x])
				}
				flipBlocks(dir, picks)
			}
		}
		var cases []damage
		for _, k := range []int{count, count + 1} {
			for seed := range uint64(4) {
				cases = append(cases, damage{fmt.Sprintf("%d scattered blocks (draw %d)", k, seed), scattered(k, seed), 0, false})
			}
			cases = append(cases, damage{fmt.Sprintf("a burst over %d blocks", k), func(dir string, _ int, _ string) {
				path := filepath.Join(dir, "alpha.bin")
				b, _ := os.ReadFile(path)
				clear(b[10*block+100 : 10*block+100+(k-1)*block])
				os.WriteFile(path, b, 0o644)
			}, 0, false})
			cases = append(cases, damage{fmt.Sprintf("alpha.bin cut by %d blocks", k), func(dir string, _ int, _ string) {
				os.Truncate(filepath.Join(dir, "alpha.bin"), int64(75-k)*block)
			}, 0, false})
			cases = append(cases, damage{fmt.Sprintf("delta.txt missing, and %d scattered blocks of alpha.bin", k-3), func(dir string, _ int, _ string) {
				os.Remove(filepath.Join(dir, "delta.txt"))
				var picks [][2]int
				for b := range k - 3 {
					picks = append(picks, [2]int{0, 5 * b})
				}
				flipBlocks(dir, picks)
			}, 0, false})
			j := count / 2
			cases = append(cases, damage{fmt.Sprintf("%d recovery blocks damaged, and %d scattered blocks", j, k-j), scattered(k-j, 9), j, false})
			cases = append(cases, damage{fmt.Sprintf("a byte inserted at 0, and %d scattered blocks", k), func(dir string, _ int, _ string) {
				path := filepath.Join(dir, "alpha.bin")
				scattered(k, 11)(dir, 0, "")
				b, _ := os.ReadFile(path)
				os.WriteFile(path, append([]byte{'!'}, b...), 0o644)
			}, 0, false})
			cases = append(cases, damage{fmt.Sprintf("%d bytes removed from a block, and %d scattered blocks", 1000, k-1), func(dir string, _ int, _ string) {
				path := filepath.Join(dir, "beta.bin")
				scattered(k-1, 12)(dir, 0, "")
				b, _ := os.ReadFile(path)
				os.WriteFile(path, slices.Concat(b[:5*block+10], b[5*block+1010:]), 0o644)
			}, 0, false})
		}
		// Beyond par2: a byte of every recovery block damaged, each in
		// another KiB (a chunk of sigcheck's parity), so that each KiB loses
		// a quarter of the rows: par2 has no recovery block left; sigcheck
		// rebuilds what the other three quarters can.
		q := (count + 3) / 4
		cases = append(cases, damage{fmt.Sprintf("every recovery block damaged, and %d scattered blocks", count-q), scattered(count-q, 13), -count, true})
		for _, c := range cases {
			// Each tool on a fresh copy, the same damage.
			var p2ok, scok bool
			for _, tool := range []string{"par2", "sigcheck"} {
				dir := filepath.Join(base, "run-"+tool)
				os.RemoveAll(dir)
				src := p2dir
				if tool == "sigcheck" {
					src = scdir
				}
				copyDir(t, src, dir)
				c.apply(dir, c.rec, tool)
				if c.rec != 0 {
					if tool == "par2" {
						damagePar2Recovery(t, dir, max(c.rec, -c.rec))
					} else {
						damageParity(t, filepath.Join(dir, "set.sigcheck"), man, c.rec)
					}
				}
				var ok bool
				if tool == "par2" {
					_, err := par2(dir, "repair", "set.par2")
					ok = err == nil && sameFiles(dir, names, files)
					p2ok = ok
				} else {
					_, _, code := sigcheck(t, "repair", filepath.Join(dir, "set.sigcheck"))
					ok = code == 0 && sameFiles(dir, names, files)
					scok = ok
				}
			}
			table = append(table, fmt.Sprintf("%2d %%  %-60s par2 %-8s sigcheck %s", r, c.name, words(p2ok), words(scok)))
			if p2ok && !scok || c.beyond && !scok {
				t.Errorf("-r %d, %s: par2 %s, sigcheck %s", r, c.name, words(p2ok), words(scok))
			}
		}
	}
	t.Logf("%d blocks of %d bytes in 4 files; each tool with par2's recovery block count:\n%s", nblocks, block, strings.Join(table, "\n"))
}

func words(ok bool) string {
	if ok {
		return "repaired"
	}
	return "failed"
}

func par2(dir string, args ...string) (string, error) {
	cmd := exec.Command("par2", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	os.MkdirAll(to, 0o755)
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(to, e.Name()), b, 0o644)
	}
}

func sameFiles(dir string, names []string, want map[string][]byte) bool {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || !bytes.Equal(b, want[n]) {
			return false
		}
	}
	return true
}

// damagePar2Recovery flips a byte in the data of the first n recovery
// slice packets of par2's volumes ("PAR 2.0\0RecvSlic"): par2 checks each
// packet's MD5 and drops a damaged one.
func damagePar2Recovery(t *testing.T, dir string, n int) {
	t.Helper()
	vols, _ := filepath.Glob(filepath.Join(dir, "set.vol*.par2"))
	slices.Sort(vols)
	for _, v := range vols {
		b, _ := os.ReadFile(v)
		for at := 0; n > 0; {
			x := bytes.Index(b[at:], []byte("PAR 2.0\x00RecvSlic"))
			if x < 0 {
				break
			}
			b[at+x+16+4+100] ^= 0x55 // past the type and the exponent, into the data
			at += x + 16
			n--
		}
		os.WriteFile(v, b, 0o644)
	}
	if n > 0 {
		t.Fatalf("par2's volumes hold %d recovery blocks fewer than damaged", n)
	}
}

// damageParity flips a byte in each of the first n parity segments of a
// manifest, in the first KiB of each; n < 0 damages -n of them, each in the
// next KiB in turn.
func damageParity(t *testing.T, path string, m *manifest.Manifest, n int) {
	t.Helper()
	b, _ := os.ReadFile(path)
	for k := range max(n, -n) {
		off, size := m.ParityRange(0, k)
		at := int64(100)
		if n < 0 {
			at += int64(k) * 1024 % size
		}
		b[off+at] ^= 0x55
	}
	os.WriteFile(path, b, 0o644)
}
