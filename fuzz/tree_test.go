package fuzz

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/tree"
	"github.com/sigcheck/sigcheck/tree/manifest"
)

// FuzzTreeWire: every decoder of the tree's messages either rejects the
// input or decodes something that encodes back to the same bytes; decoded
// requests and proofs go to a real tree without harm.
func FuzzTreeWire(f *testing.F) {
	tr, _ := tree.Build(bytes.Repeat([]byte("sigcheck"), 1000), tree.Segment(100))
	f.Add(tree.AppendRoot(nil, tr.Root(), 8))
	f.Add(tree.AppendCritical(nil, tr.CriticalPath(), 8))
	req, _ := tree.Request{Nodes: []int{1, 2, 5}}.AppendBinary(nil)
	f.Add(req)
	ans, _ := tr.Answer(tree.Request{Nodes: []int{3, 4}})
	f.Add(ans.AppendBinary(nil, 16))
	p, _ := tr.Prove(7)
	f.Add(p.AppendBinary(nil, 8))
	f.Add([]byte{1, 4, 8, 0xff, 0xff, 0x03})
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, size, err := tree.DecodeRoot(b); err == nil && !bytes.Equal(tree.AppendRoot(nil, v, size), b) {
			t.Fatalf("root %x re-encodes differently", b)
		}
		if hs, size, err := tree.DecodeCritical(b); err == nil {
			if !bytes.Equal(tree.AppendCritical(nil, hs, size), b) {
				t.Fatalf("critical path %x re-encodes differently", b)
			}
			tr.LocateCritical(hs)
		}
		var q tree.Request
		if err := q.UnmarshalBinary(b); err == nil {
			if again, _ := q.AppendBinary(nil); !bytes.Equal(again, b) {
				t.Fatalf("request %x re-encodes as %x", b, again)
			}
			tr.Answer(q)
		}
		if a, size, err := tree.DecodeAnswer(b); err == nil && !bytes.Equal(a.AppendBinary(nil, size), b) {
			t.Fatalf("answer %x re-encodes differently", b)
		}
		if p, size, err := tree.DecodeProof(b); err == nil {
			if again := p.AppendBinary(nil, size); !bytes.Equal(again, b) {
				t.Fatalf("proof %x re-encodes as %x", b, again)
			}
			tree.VerifyProof(tr.Hash(), csum.Value{}, p, []byte("segment"))
		}
	})
}

// FuzzParityDecode: parity decodes only with a consistent layout and
// exactly its shards' bytes, and re-encodes to the same bytes.
func FuzzParityDecode(f *testing.F) {
	data := bytes.Repeat([]byte("parity"), 500)
	par, _ := tree.NewParity(data, 64, 3)
	f.Add(par.AppendBinary(nil))
	f.Add([]byte{1, 6, 0, 1, 1, 1, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		par, err := tree.DecodeParity(b)
		if err != nil {
			return
		}
		if again := par.AppendBinary(nil); !bytes.Equal(again, b) {
			t.Fatalf("parity %x re-encodes as %x", b, again)
		}
	})
}

// manifestOf returns the manifest of data (and of half of it, as a second
// file).
func manifestOf(tb testing.TB, data []byte, opts ...manifest.Option) []byte {
	f, err := os.Create(filepath.Join(tb.TempDir(), "m"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	src := []manifest.Source{{Name: "seed.bin", Data: bytes.NewReader(data), Size: int64(len(data)), Mode: 0o600}}
	if len(data) > 100 {
		src = append(src, manifest.Source{Name: "dir/half", Data: bytes.NewReader(data[:len(data)/2]), Size: int64(len(data) / 2)})
	}
	if _, err := manifest.Create(f, src, opts...); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzManifest: the manifest reader on arbitrary bytes, versions 3 and 2
// (testdata holds manifests of version 2). The checksums of the main
// block at the start are recomputed over the fuzzer's input, so that it
// reaches past them into everything a forged manifest could make the
// reader do: open, plan the repair of its files all missing (a forged
// size must cost nothing), then check and repair them, without a panic,
// a hang or an allocation sized by what the input says.
func FuzzManifest(f *testing.F) {
	data := bytes.Repeat([]byte("manifest"), 300)
	f.Add(manifestOf(f, data, manifest.Segment(100), manifest.Redundancy(0)))
	f.Add(manifestOf(f, data, manifest.Segment(64), manifest.PerStripe(2)))
	f.Add(manifestOf(f, nil))
	f.Add(manifestOf(f, data[:77], manifest.UseHash("xxh3-128"), manifest.Segment(10), manifest.Recovery(3)))
	f.Add(manifestOf(f, data, manifest.Segment(1), manifest.Redundancy(10)))
	f.Fuzz(func(t *testing.T, b []byte) {
		b = bytes.Clone(b)
		if len(b) >= 128 && (string(b[:8]) == "SIGCHKM2" || string(b[:8]) == "SIGCHKM3") {
			n := min(max(binary.LittleEndian.Uint64(b[8:]), 128), uint64(len(b)))
			binary.LittleEndian.PutUint64(b[8:], n)
			binary.LittleEndian.PutUint64(b[16:], xxh3.Hash(b[:16]))
			binary.LittleEndian.PutUint64(b[n-8:], xxh3.Hash(b[:n-8]))
		}
		m, err := manifest.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			if !errors.Is(err, manifest.ErrManifest) {
				t.Fatalf("error %v does not wrap ErrManifest", err)
			}
			return
		}
		var absent []*manifest.Report
		for i := range m.Files {
			absent = append(absent, m.Absent(i))
		}
		m.Plan(absent)
		if m.Size() > 1<<20 {
			return // a valid header for large files: nothing more to read
		}
		ctx := context.Background()
		var files []manifest.Target
		var reps []*manifest.Report
		for i, mf := range m.Files {
			file := &memFile{b: make([]byte, mf.Size)}
			rep, err := m.Check(ctx, i, file, mf.Size, nil)
			if err != nil {
				t.Fatalf("Check of a file of the right size: %v", err)
			}
			if err := m.Find(ctx, i, file, mf.Size, rep, nil); err != nil {
				t.Fatalf("Find: %v", err)
			}
			files, reps = append(files, file), append(reps, rep)
		}
		if _, err := m.Repair(ctx, files, reps, 1<<20); err == nil {
			for i, file := range files {
				if rep, err := m.Check(ctx, i, file, m.Files[i].Size, nil); err != nil || len(rep.Corrupted) != 0 {
					t.Fatalf("repaired, yet %+v (%v)", rep, err)
				}
			}
		}
	})
}

// memFile is an in-memory file.
type memFile struct{ b []byte }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > 1<<20 {
		return 0, io.ErrShortWrite
	}
	if end := off + int64(len(p)); end > int64(len(f.b)) {
		f.b = append(f.b, make([]byte, end-int64(len(f.b)))...)
	}
	return copy(f.b[off:], p), nil
}

func (f *memFile) Truncate(n int64) error {
	if n < 0 || n > 1<<20 {
		return io.ErrShortWrite
	}
	f.b = append(f.b[:min(n, int64(len(f.b)))], make([]byte, max(0, n-int64(len(f.b))))...)
	return nil
}
