package main

import (
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sigcheck/sigcheck/csum"
)

// BenchmarkCsumFile is sigcheck csum on a file (and with reading and
// summing in turn, tool=sigcheck-serial) beside what a user would run
// instead, in the same run: xxhsum (-H0..-H3), sha256sum, b3sum (on
// all cores, its default, and on one), and the limits: the same 1 MiB read
// loop with no checksum (tool=read) and cat into /dev/null (tool=cat, a
// process started and the file read: the floor of every external tool).
// The file is read once first, so every row reads it from the page cache.
// Tools that are not installed are skipped.
//
//	go test ./cmd/sigcheck -run '^$' -bench CsumFile -count 6 | tee file.txt
//	benchstat -col /tool file.txt
func BenchmarkCsumFile(b *testing.B) {
	const size = 128 << 20
	path := filepath.Join(b.TempDir(), "data")
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	data = nil
	e := &env{stdout: io.Discard, stderr: io.Discard}
	run := func(b *testing.B, f func() error) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
	}
	tool := func(b *testing.B, name string, args ...string) {
		if _, err := exec.LookPath(name); err != nil {
			b.Skipf("%s is not installed", name)
		}
		run(b, func() error { return exec.Command(name, append(args, path)...).Run() })
	}
	b.Run("alg=none/tool=read", func(b *testing.B) {
		buf := make([]byte, 1<<20)
		run(b, func() error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			for {
				if _, err := f.Read(buf); err == io.EOF {
					return nil
				} else if err != nil {
					return err
				}
			}
		})
	})
	b.Run("alg=none/tool=cat", func(b *testing.B) { tool(b, "cat") })
	peers := map[string][][]string{
		"xxh3":     {{"xxhsum", "-H3"}},
		"xxh3-128": {{"xxhsum", "-H2"}},
		"xxh64":    {{"xxhsum", "-H1"}},
		"xxh32":    {{"xxhsum", "-H0"}},
		"sha256":   {{"sha256sum"}},
		"blake3":   {{"b3sum"}, {"b3sum", "--num-threads", "1"}},
		"crc32":    {},
		"crc32c":   {},
	}
	for _, alg := range []string{"xxh3", "xxh3-128", "xxh64", "xxh32", "crc32c", "crc32", "sha256", "blake3"} {
		a, err := csum.Lookup(alg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("alg="+alg+"/tool=sigcheck", func(b *testing.B) {
			run(b, func() error { _, _, err := checksumFile(e, a, path); return err })
		})
		b.Run("alg="+alg+"/tool=sigcheck-serial", func(b *testing.B) { // reading and summing in turn
			defer func(m int64) { pipelineMin = m }(pipelineMin)
			pipelineMin = 1 << 62
			run(b, func() error { _, _, err := checksumFile(e, a, path); return err })
		})
		for _, p := range peers[alg] {
			label := p[0]
			if len(p) > 2 {
				label += "-1thread"
			}
			b.Run("alg="+alg+"/tool="+label, func(b *testing.B) { tool(b, p[0], p[1:]...) })
		}
	}
}
