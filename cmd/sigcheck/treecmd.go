package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/progress"
	"github.com/sigcheck/sigcheck/tree"
	"github.com/sigcheck/sigcheck/tree/manifest"
)

// formatRoot prints a tree hash as lowercase hex: %016x of a 64-bit hash,
// high half first for a 128-bit one.
func formatRoot(v csum.Value, size int) string {
	if size == 16 {
		return fmt.Sprintf("%016x%016x", v.Hi, v.Lo)
	}
	return fmt.Sprintf("%016x", v.Lo)
}

// treeFlags are the flags that shape a tree.
type treeFlags struct {
	seg  *int
	hash *string
}

func addTreeFlags(fs *flag.FlagSet) treeFlags {
	return treeFlags{
		seg:  fs.Int("seg", tree.DefaultSegment, "segment size in `bytes` (par2's -s)"),
		hash: fs.String("hash", tree.DefaultHash, "node `hash`: xxh3 (the paper's reference), xxh3-128, or any checksum of sigcheck csum -list"),
	}
}

func (f treeFlags) options() []manifest.Option {
	return []manifest.Option{manifest.Segment(*f.seg), manifest.UseHash(*f.hash)}
}

// openData opens a regular file and returns it with its size; a FIFO
// named by mistake is refused, not waited on.
func openData(name string) (*os.File, int64, error) { return manifest.OpenRegular(name) }

// barProgress feeds a bar from a progress callback of bytes done of a
// total.
func barProgress(bar *progress.Bar) func(done, total int64) {
	var last int64
	return func(done, total int64) {
		bar.SetTotal(total)
		bar.Add(done - last)
		last = done
	}
}

// treeSubcommands lets "sigcheck tree manifest|verify|repair …" say what
// "sigcheck manifest|verify|repair …" says (a file named so is ./manifest).
var treeSubcommands = map[string]func(*env, []string) error{
	"manifest": runManifest, "verify": runVerify, "repair": runRepair,
}

func runTree(e *env, args []string) error {
	if len(args) > 0 {
		if run, ok := treeSubcommands[args[0]]; ok {
			return run(e, args[1:])
		}
	}
	fs := flags(e, "tree", "Prints the root of the Merkle tree of each FILE (- for standard input) as hex\n"+
		"digits (%016x of the 64-bit value), then the name. With the defaults the root is\n"+
		"the paper's reference implementation's, hash for hash. The file is streamed; the\n"+
		"tree's nodes go to a temporary file, so memory does not grow with the file.\n\n"+
		"sigcheck tree manifest|verify|repair … are sigcheck manifest|verify|repair ….")
	tf := addTreeFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	files, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErrorf("want at least one FILE (- for standard input)")
	}
	enc := json.NewEncoder(e.stdout)
	for _, name := range files {
		m, err := rootOf(e, name, tf.options())
		if err != nil {
			return err
		}
		f := m.Files[0]
		root := formatRoot(f.Root, m.Hash.Size())
		if *asJSON {
			if err := enc.Encode(map[string]any{"file": name, "root": root, "hash": m.Hash.Name(),
				"segment_size": m.Segment, "segments": f.Segments, "bytes": f.Size}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(e.stdout, "%s%s  %s\n", escPrefix(name), root, esc(name))
	}
	return nil
}

// rootOf makes the manifest of one file (- for standard input), without
// parity, in a temporary file, and returns it for its root.
func rootOf(e *env, name string, opts []manifest.Option) (*manifest.Manifest, error) {
	tmp, err := os.CreateTemp("", "sigcheck-tree-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	var in *os.File
	var size int64
	if name == "-" {
		if in, err = spool(e.stdin); err != nil {
			return nil, err
		}
		fi, err := in.Stat()
		if err != nil {
			return nil, err
		}
		size = fi.Size()
	} else if in, size, err = openData(name); err != nil {
		return nil, err
	}
	defer in.Close()
	bar := progress.New(e.stderr, "hashing "+esc(filepath.Base(name)), size, "B")
	defer bar.Done()
	opts = append(opts, manifest.Redundancy(0), manifest.Progress(barProgress(bar)))
	m, err := manifest.Create(tmp, []manifest.Source{{Name: "file", Data: in, Size: size}}, opts...)
	if err != nil {
		if name == "-" {
			name = "standard input"
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// spool copies r to a temporary file, for a root of data of unknown size.
func spool(r io.Reader) (*os.File, error) {
	tmp, err := os.CreateTemp("", "sigcheck-stdin-*")
	if err != nil {
		return nil, err
	}
	os.Remove(tmp.Name()) // kept open; gone when closed
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	return tmp, nil
}
