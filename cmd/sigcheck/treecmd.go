package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/progress"
	"github.com/sigcheck/sigcheck/tree"
)

// manifestSuffix names the manifest written beside a file by default.
const manifestSuffix = ".sigcheck"

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
		seg:  fs.Int("seg", tree.DefaultSegment, "segment size in `bytes`"),
		hash: fs.String("hash", tree.DefaultHash, "node `hash`: xxh3 (the paper's reference), xxh3-128, or any checksum of sigcheck csum -list"),
	}
}

func (f treeFlags) options() []tree.Option {
	return []tree.Option{tree.Segment(*f.seg), tree.UseHash(*f.hash)}
}

// openData opens a regular file for hashing and returns it with its size.
func openData(name string, flag int) (*os.File, int64, error) {
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file", name)
	}
	return f, fi.Size(), nil
}

// progressOption feeds a bar from the tree's progress callback (which
// reports bytes done so far).
func progressOption(bar *progress.Bar) tree.Option {
	var last int64
	return tree.Progress(func(done int64) {
		bar.Add(done - last)
		last = done
	})
}

// makeManifest streams the file name into a manifest written to out.
func makeManifest(e *env, out *os.File, name string, opts []tree.Option) (*tree.Manifest, error) {
	f, size, err := openData(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bar := progress.New(e.stderr, "hashing "+filepath.Base(name), size, "B")
	defer bar.Done()
	m, err := tree.CreateManifest(out, f, size, name, append(opts, progressOption(bar))...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

func runTree(e *env, args []string) error {
	fs := flags(e, "tree", "Prints the root of the Merkle tree of each FILE as hex digits (%016x of the 64-bit\n"+
		"value), then the name. With the defaults the root is the paper's reference\n"+
		"implementation's, hash for hash. The file is streamed; the tree's nodes go to a\n"+
		"temporary file, so memory does not grow with the file.")
	tf := addTreeFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	files, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
		return errors.New("want at least one FILE")
	}
	enc := json.NewEncoder(e.stdout)
	for _, name := range files {
		tmp, err := os.CreateTemp("", "sigcheck-tree-*")
		if err != nil {
			return err
		}
		m, err := makeManifest(e, tmp, name, tf.options())
		tmp.Close()
		os.Remove(tmp.Name())
		if err != nil {
			return err
		}
		root := formatRoot(m.Root, m.Hash.Size())
		if *asJSON {
			if err := enc.Encode(map[string]any{"file": name, "root": root, "hash": m.Hash.Name(),
				"segment_size": m.Segment, "segments": m.Segments, "bytes": m.Size}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(e.stdout, "%s  %s\n", root, name)
	}
	return nil
}

func runManifest(e *env, args []string) error {
	fs := flags(e, "manifest", "Writes the manifest of FILE: its Merkle tree, the parameters and, with -parity,\n"+
		"Reed–Solomon parity from which sigcheck repair rebuilds corrupted segments\n"+
		"without the original. It goes to FILE"+manifestSuffix+" unless -o says otherwise, and is\n"+
		"written whole or not at all. The file is streamed: memory does not grow with it.\n\n"+
		"Parity P costs P segments per stripe of up to 256-P segments (P=4 adds about 1.6%)\n"+
		"and rebuilds up to P corrupted segments in each stripe.")
	tf := addTreeFlags(fs)
	parity := fs.Int("parity", 0, "parity segments per stripe (0 for none, at most 128)")
	out := fs.String("o", "", "write the manifest to `path` (default FILE"+manifestSuffix+")")
	asJSON := fs.Bool("json", false, "print what was written as JSON")
	files, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	name := files[0]
	path := *out
	if path == "" {
		path = name + manifestSuffix
	}
	opts := tf.options()
	if *parity != 0 {
		opts = append(opts, tree.WithParity(*parity))
	}
	// Write beside the destination and rename: never half a manifest.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	m, err := makeManifest(e, tmp, name, opts)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	root := formatRoot(m.Root, m.Hash.Size())
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"file": name, "manifest": path, "root": root,
			"hash": m.Hash.Name(), "segment_size": m.Segment, "segments": m.Segments, "bytes": m.Size,
			"parity": m.Parity, "stripe": m.Stripe, "manifest_bytes": fi.Size()})
	}
	fmt.Fprintf(e.stdout, "%s: %d bytes in %d segments of %d, root %s (%s)\n", name, m.Size, m.Segments, m.Segment, root, m.Hash.Name())
	par := "no parity"
	if m.Parity > 0 {
		par = fmt.Sprintf("parity %d per stripe of %d segments: repairs up to %d corrupted segments per stripe", m.Parity, m.Stripe, m.Parity)
	}
	fmt.Fprintf(e.stdout, "wrote %s (%d bytes, %s)\n", path, fi.Size(), par)
	return nil
}

// manifestFile is an open, checked manifest.
type manifestFile struct {
	*tree.Manifest
	file *os.File
}

func (m *manifestFile) Close() error { return m.file.Close() }

// openManifest opens and checks a manifest; a bad one is bad input.
func openManifest(path string) (*manifestFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	m, err := tree.OpenManifest(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &manifestFile{m, f}, nil
}

// fileAndManifest reads FILE [MANIFEST] (default FILE.sigcheck).
func fileAndManifest(fs *flag.FlagSet, pos []string) (string, string, error) {
	switch len(pos) {
	case 1:
		return pos[0], pos[0] + manifestSuffix, nil
	case 2:
		return pos[0], pos[1], nil
	}
	fs.Usage()
	return "", "", fmt.Errorf("want FILE [MANIFEST], got %d arguments", len(pos))
}

// span is a run of consecutive corrupted segments, as bytes.
type span struct {
	First, Last int   // segments
	Off, Len    int64 // bytes
}

func (s span) String() string {
	segs := fmt.Sprintf("segment %d", s.First)
	if s.Last > s.First {
		segs = fmt.Sprintf("segments %d-%d", s.First, s.Last)
	}
	return fmt.Sprintf("bytes %d-%d (%d bytes, %s)", s.Off, s.Off+s.Len-1, s.Len, segs)
}

// spans merges sorted corrupted segments into runs.
func spans(m *tree.Manifest, bad []int) []span {
	var out []span
	for _, j := range bad {
		off, n := m.SegmentRange(j)
		if k := len(out) - 1; k >= 0 && out[k].Last == j-1 {
			out[k].Last = j
			out[k].Len += n
			continue
		}
		out = append(out, span{First: j, Last: j, Off: off, Len: n})
	}
	return out
}

// check verifies a file against its manifest, drawing a progress bar.
func check(e *env, m *tree.Manifest, name string) ([]int, error) {
	f, size, err := openData(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bar := progress.New(e.stderr, "checking "+filepath.Base(name), size, "B")
	defer bar.Done()
	return m.Verify(f, size, progressOption(bar))
}

// verdict is what verify and repair say of a file, in text or JSON.
type verdict struct {
	File      string `json:"file"`
	Manifest  string `json:"manifest"`
	OK        bool   `json:"ok"`
	Problem   string `json:"problem,omitempty"` // a file of the wrong size, the manifest of another file
	Segments  int    `json:"segments"`
	Corrupted []span `json:"corrupted"`
	Repaired  []int  `json:"repaired,omitempty"`
}

func (v *verdict) print(e *env, asJSON bool) error {
	if asJSON {
		if v.Corrupted == nil {
			v.Corrupted = []span{}
		}
		return json.NewEncoder(e.stdout).Encode(v)
	}
	switch {
	case v.Problem != "" && len(v.Corrupted) == 0:
		fmt.Fprintf(e.stdout, "%s: %s\n", v.File, v.Problem)
	case v.OK && len(v.Repaired) > 0:
		fmt.Fprintf(e.stdout, "%s: repaired %d segment%s from parity; all %d segments now match %s\n",
			v.File, len(v.Repaired), plural(len(v.Repaired)), v.Segments, v.Manifest)
	case v.OK:
		fmt.Fprintf(e.stdout, "%s: OK, all %d segments match %s\n", v.File, v.Segments, v.Manifest)
	default:
		n := 0
		for _, s := range v.Corrupted {
			n += s.Last - s.First + 1
		}
		fmt.Fprintf(e.stdout, "%s: %d of %d segments corrupted:\n", v.File, n, v.Segments)
		for _, s := range v.Corrupted {
			fmt.Fprintf(e.stdout, "  %s\n", s)
		}
		if v.Problem != "" {
			fmt.Fprintf(e.stdout, "%s: %s\n", v.File, v.Problem)
		}
	}
	return nil
}

// inspect checks a file against its manifest and fills the verdict. A file
// of the wrong size is a negative answer, not an error: the check ran.
func inspect(e *env, m *tree.Manifest, name, manifest string) (*verdict, []int, error) {
	v := &verdict{File: name, Manifest: manifest, Segments: m.Segments}
	bad, err := check(e, m, name)
	if errors.Is(err, tree.ErrSize) {
		v.Problem = strings.TrimPrefix(err.Error(), tree.ErrSize.Error()+": ")
		return v, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	v.Corrupted = spans(m, bad)
	v.OK = len(bad) == 0
	if len(bad) == m.Segments && m.Segments > 1 {
		v.Problem = fmt.Sprintf("every segment differs: is %s the manifest of this file? (it was made for %q)", manifest, m.Name)
	}
	return v, bad, nil
}

// checkFile parses FILE [MANIFEST], opens the manifest and checks the file
// against it. The caller closes the manifest.
func checkFile(e *env, fs *flag.FlagSet, args []string) (*manifestFile, *verdict, []int, error) {
	pos, err := parse(fs, args, -1)
	if err != nil {
		return nil, nil, nil, err
	}
	name, mpath, err := fileAndManifest(fs, pos)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := openManifest(mpath)
	if err != nil {
		return nil, nil, nil, err
	}
	v, bad, err := inspect(e, m.Manifest, name, mpath)
	if err != nil {
		m.Close()
		return nil, nil, nil, err
	}
	return m, v, bad, nil
}

func runVerify(e *env, args []string) error {
	fs := flags(e, "verify", "Checks FILE against its manifest (default FILE"+manifestSuffix+") and reports the corrupted\n"+
		"segments as byte ranges. Exit status 0 when all match, 1 when any segment differs\n"+
		"or the file is truncated or extended, 2 when the manifest is unreadable or corrupt.")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	m, v, _, err := checkFile(e, fs, args)
	if err != nil {
		return err
	}
	m.Close()
	if err := v.print(e, *asJSON); err != nil {
		return err
	}
	if !v.OK {
		return negativeError{}
	}
	return nil
}

func runRepair(e *env, args []string) error {
	fs := flags(e, "repair", "Checks FILE against its manifest (default FILE"+manifestSuffix+"), rebuilds the corrupted\n"+
		"segments from the manifest's parity, checks each rebuilt segment against the\n"+
		"manifest's hashes and only then writes them into FILE, in place. Exit status 0\n"+
		"when FILE matches at the end, 1 when it cannot be repaired (more corrupted\n"+
		"segments in a stripe than parity, no parity, a truncated or extended file;\n"+
		"FILE is then left as it was), 2 for an unreadable or corrupt manifest.")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	m, v, bad, err := checkFile(e, fs, args)
	if err != nil {
		return err
	}
	defer m.Close()
	name, mpath := v.File, v.Manifest
	if v.OK || v.Problem != "" && len(bad) == 0 {
		if err := v.print(e, *asJSON); err != nil {
			return err
		}
		if !v.OK {
			return negativeError{}
		}
		return nil
	}
	f, _, err := openData(name, os.O_RDWR)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := m.Repair(f, bad); err != nil {
		if errors.Is(err, tree.ErrTooManyFaults) || errors.Is(err, tree.ErrRepairCheck) {
			v.Problem = fmt.Sprintf("cannot repair, the file is unchanged: %v", err)
			if err := v.print(e, *asJSON); err != nil {
				return err
			}
			return negativeError{}
		}
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	// Check the whole file again: what is reported is what is on disk.
	after, again, err := inspect(e, m.Manifest, name, mpath)
	if err != nil {
		return err
	}
	after.Repaired = bad
	if len(again) != 0 || after.Problem != "" {
		after.OK = false
	}
	if err := after.print(e, *asJSON); err != nil {
		return err
	}
	if !after.OK {
		return negativeError{}
	}
	return nil
}
