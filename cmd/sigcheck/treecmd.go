package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/internal/progress"
	"github.com/sigcheck/sigcheck/tree"
)

// manifestSuffix names the manifest written beside a file or directory by
// default.
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

// openData opens a regular file and returns it with its size.
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
// reports bytes done so far of one file).
func progressOption(bar *progress.Bar) tree.Option {
	var last int64
	return tree.Progress(func(done int64) {
		if done < last {
			last = 0
		}
		bar.Add(done - last)
		last = done
	})
}

// input is a file to put in a manifest: where it is, and the name stored.
type input struct{ path, name string }

// oneOpen keeps one file of a set open at a time: the manifest reads them
// in order, and a directory of many thousands would otherwise run out of
// descriptors.
type oneOpen struct{ cur *lazyFile }

type lazyFile struct {
	set  *oneOpen
	path string
	f    *os.File
}

func (l *lazyFile) ReadAt(p []byte, off int64) (int, error) {
	if l.f == nil {
		l.set.close()
		f, err := os.Open(l.path)
		if err != nil {
			return 0, err
		}
		l.f, l.set.cur = f, l
	}
	return l.f.ReadAt(p, off)
}

func (s *oneOpen) close() {
	if s.cur != nil {
		s.cur.f.Close()
		s.cur.f, s.cur = nil, nil
	}
}

// makeManifest streams the inputs into a manifest written to out.
func makeManifest(e *env, out *os.File, ins []input, opts []tree.Option) (*tree.Manifest, error) {
	var src []tree.Source
	var total int64
	set := &oneOpen{}
	defer set.close()
	for _, in := range ins {
		f, size, err := openData(in.path, os.O_RDONLY)
		if err != nil {
			return nil, err
		}
		f.Close()
		src = append(src, tree.Source{Name: in.name, Data: &lazyFile{set: set, path: in.path}, Size: size})
		total += size
	}
	label := "hashing " + filepath.Base(ins[0].path)
	if len(ins) > 1 {
		label = fmt.Sprintf("hashing %d files", len(ins))
	}
	bar := progress.New(e.stderr, label, total, "B")
	defer bar.Done()
	m, err := tree.CreateManifest(out, src, append(opts, progressOption(bar))...)
	if err != nil {
		if len(ins) == 1 {
			return nil, fmt.Errorf("%s: %w", ins[0].path, err)
		}
		return nil, err
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
		fmt.Fprintf(e.stdout, "%s  %s\n", root, name)
	}
	return nil
}

// rootOf makes the manifest of one file (- for standard input) in a
// temporary file, and returns it for its root.
func rootOf(e *env, name string, opts []tree.Option) (*tree.Manifest, error) {
	tmp, err := os.CreateTemp("", "sigcheck-tree-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if name != "-" {
		return makeManifest(e, tmp, []input{{name, "file"}}, opts)
	}
	in, err := spool(e.stdin)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return nil, err
	}
	m, err := tree.CreateManifest(tmp, []tree.Source{{Name: "stdin", Data: in, Size: fi.Size()}}, opts...)
	if err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	return m, nil
}

// collect lists the files of the arguments (directories walked, in
// lexical order) with the names the manifest at mpath stores: their paths
// relative to its directory. A lone file outside that directory is stored
// by its base name (verify and repair are then told where it is).
func collect(args []string, mpath string) ([]input, error) {
	base, err := filepath.Abs(filepath.Dir(mpath))
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(mpath)
	var ins []input
	add := func(p string) error {
		a, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(base, a)
		if err != nil || !filepath.IsLocal(rel) {
			if len(args) == 1 && !isDir(p) {
				ins = append(ins, input{p, filepath.Base(p)})
				return nil
			}
			return usageErrorf("%s is not under %s, where the manifest goes: give -o a path above it", p, filepath.Dir(mpath))
		}
		ins = append(ins, input{p, filepath.ToSlash(rel)})
		return nil
	}
	for _, arg := range args {
		if !isDir(arg) {
			if err := add(arg); err != nil {
				return nil, err
			}
			continue
		}
		err := filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil // directories are walked; links and devices are not data
			}
			if a, _ := filepath.Abs(p); a == abs || strings.HasPrefix(d.Name(), "."+filepath.Base(mpath)+".tmp") {
				return nil // the manifest itself, or one being written
			}
			return add(p)
		})
		if err != nil {
			return nil, err
		}
	}
	if len(ins) == 0 {
		return nil, usageErrorf("no files in %s", strings.Join(args, ", "))
	}
	seen := map[string]string{}
	for _, in := range ins {
		if p, ok := seen[in.name]; ok {
			return nil, usageErrorf("%s and %s would both be %s in the manifest", p, in.path, in.name)
		}
		seen[in.name] = in.path
	}
	return ins, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// parityWords says what the parity of a manifest rebuilds.
func parityWords(m *tree.Manifest) string {
	if m.Parity == 0 {
		return "no parity"
	}
	run := int64(m.Parity) * int64(m.Stripes)
	return fmt.Sprintf("parity %d per stripe, %d stripe%s of up to %d segment%s: rebuilds up to %d lost segment%s in a run (%s), or %d in each stripe",
		m.Parity, m.Stripes, plural(m.Stripes), m.Width, plural(m.Width), run, plural(int(run)), sizeWords(run*int64(m.Segment)), m.Parity)
}

// sizeWords prints a byte count as people read it.
func sizeWords(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d byte%s", n, plural(int(n)))
}

func runManifest(e *env, args []string) error {
	fs := flags(e, "manifest", "Writes the manifest of FILE, or of several files or directories as one recovery\n"+
		"set: each file's Merkle tree and, with -parity, Reed–Solomon parity shared across\n"+
		"the files, from which sigcheck repair rebuilds damaged, truncated or missing\n"+
		"files without the originals. It goes to FILE"+manifestSuffix+" (or DIR"+manifestSuffix+", or the first\n"+
		"argument's) unless -o says otherwise, written whole or not at all, mode 0644;\n"+
		"files are named relative to its directory. Files are streamed: only the parity\n"+
		"is held in memory (up to 256 MiB; more takes another pass over the data).\n\n"+
		"Segments are numbered across the files; stripe s holds every segment g with\n"+
		"g mod stripes = s, so that a run of lost segments spreads over the stripes.\n"+
		"Parity P costs P segments per stripe of up to 256-P segments (P=4 adds about\n"+
		"1.6%) and rebuilds any run of up to P×stripes lost segments — about as many\n"+
		"as the parity holds — or P scattered ones in each stripe. Its critical parts\n"+
		"are kept three times, each with its own checksum, so a manifest with a few\n"+
		"damaged bytes still verifies and repairs.")
	tf := addTreeFlags(fs)
	parity := fs.Int("parity", 0, "parity segments per stripe (0 for none, at most 128)")
	out := fs.String("o", "", "write the manifest to `path` (default FILE"+manifestSuffix+")")
	asJSON := fs.Bool("json", false, "print what was written as JSON")
	args, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usageErrorf("want FILE or DIR (or several)")
	}
	if *parity < 0 || *parity > tree.MaxParity {
		return usageErrorf("-parity %d: want 0 to %d", *parity, tree.MaxParity)
	}
	path := *out
	if path == "" {
		path = defaultManifest(args[0])
	}
	ins, err := collect(args, path)
	if err != nil {
		return err
	}
	opts := tf.options()
	if *parity != 0 {
		opts = append(opts, tree.WithParity(*parity))
	}
	// Write beside the destination and rename: never half a manifest. The
	// errors name the destination, not the temporary file.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer os.Remove(tmp.Name())
	m, err := makeManifest(e, tmp, ins, opts)
	if err != nil {
		tmp.Close()
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Path == tmp.Name() {
			return fmt.Errorf("%s: %w", path, pe.Err)
		}
		return err
	}
	err = tmp.Chmod(0o644)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if *asJSON {
		files := make([]map[string]any, len(m.Files))
		for i, f := range m.Files {
			files[i] = map[string]any{"file": ins[i].path, "name": f.Name, "root": formatRoot(f.Root, m.Hash.Size()),
				"segments": f.Segments, "bytes": f.Size}
		}
		return json.NewEncoder(e.stdout).Encode(map[string]any{"manifest": path, "hash": m.Hash.Name(),
			"segment_size": m.Segment, "segments": m.Segments(), "bytes": m.Size(), "parity": m.Parity,
			"stripes": m.Stripes, "stripe_width": m.Width, "manifest_bytes": m.Bytes(), "files": files})
	}
	for i, f := range m.Files {
		fmt.Fprintf(e.stdout, "%s: %d byte%s in %d segment%s of %d, root %s (%s)\n", ins[i].path, f.Size, plural(int(f.Size)),
			f.Segments, plural(f.Segments), m.Segment, formatRoot(f.Root, m.Hash.Size()), m.Hash.Name())
	}
	fmt.Fprintf(e.stdout, "wrote %s (%d bytes, %s)\n", path, m.Bytes(), parityWords(m))
	return nil
}

// unwrapPath keeps the reason of a path error, whose path is a temporary
// file the user never named.
func unwrapPath(err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// set is an open manifest and where its files are.
type set struct {
	*tree.Manifest
	path  string
	file  *os.File
	paths []string // where each file of the manifest is
}

// openSet reads [FILE|DIR|MANIFEST] [MANIFEST]: a manifest given alone,
// or the FILE (or DIR) whose manifest is FILE.sigcheck unless named
// second. Files are where the manifest says, relative to its directory;
// a one-file manifest's file is FILE when given.
func openSet(pos []string) (*set, error) {
	var data, mpath string
	switch len(pos) {
	case 1:
		data = pos[0]
		mpath = defaultManifest(data)
		if isManifest(data) {
			data, mpath = "", pos[0]
		}
	case 2:
		data, mpath = pos[0], pos[1]
	default:
		return nil, usageErrorf("want FILE, DIR or MANIFEST, and optionally MANIFEST; got %d arguments", len(pos))
	}
	f, err := os.Open(mpath)
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
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	s := &set{Manifest: m, path: mpath, file: f}
	dir := filepath.Dir(mpath)
	for _, mf := range m.Files {
		s.paths = append(s.paths, filepath.Join(dir, filepath.FromSlash(mf.Name)))
	}
	if len(m.Files) == 1 && data != "" && !isDir(data) {
		s.paths[0] = data
	}
	return s, nil
}

// defaultManifest returns where the manifest of p goes by default: beside
// it, p.sigcheck ("." is the directory it names, so ./ goes beside the
// current directory, in its parent).
func defaultManifest(p string) string {
	c := filepath.Clean(p)
	if b := filepath.Base(c); b == "." || b == ".." || b == string(filepath.Separator) {
		if a, err := filepath.Abs(c); err == nil && filepath.Dir(a) != a {
			return filepath.Join(filepath.Dir(a), filepath.Base(a)+manifestSuffix)
		}
	}
	return c + manifestSuffix
}

// isManifest says whether the file at p starts as a manifest does.
func isManifest(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 8)
	_, err = io.ReadFull(f, b)
	return err == nil && (string(b) == "SIGCHKM2" || string(b) == "SIGCHKMF")
}

// span is a run of consecutive corrupted segments, as bytes.
type span struct {
	First  int   `json:"first_segment"`
	Last   int   `json:"last_segment"`
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

func (s span) String() string {
	segs := fmt.Sprintf("segment %d", s.First)
	if s.Last > s.First {
		segs = fmt.Sprintf("segments %d-%d", s.First, s.Last)
	}
	return fmt.Sprintf("bytes %d-%d (%d byte%s, %s)", s.Offset, s.Offset+s.Length-1, s.Length, plural(int(s.Length)), segs)
}

// spans merges sorted segments of file i into runs.
func spans(m *tree.Manifest, i int, bad []int) []span {
	out := []span{}
	for _, j := range bad {
		off, n := m.SegmentRange(i, j)
		if k := len(out) - 1; k >= 0 && out[k].Last == j-1 {
			out[k].Last = j
			out[k].Length += n
			continue
		}
		out = append(out, span{First: j, Last: j, Offset: off, Length: n})
	}
	return out
}

// fileVerdict is what verify and repair say of one file, in text or JSON.
type fileVerdict struct {
	File          string `json:"file"`
	OK            bool   `json:"ok"`
	Missing       bool   `json:"missing,omitempty"`
	Size          int64  `json:"size"`          // bytes found (0 when missing)
	ExpectedSize  int64  `json:"expected_size"` // bytes the manifest says
	Segments      int    `json:"segments"`
	Corrupted     []span `json:"corrupted"`
	MissingFrom   int64  `json:"missing_from,omitempty"`
	MissingBytes  int64  `json:"missing_bytes,omitempty"`
	AppendedBytes int64  `json:"appended_bytes,omitempty"`
	Unchecked     int    `json:"unchecked,omitempty"` // segments whose hashes the manifest lost
	Problem       string `json:"problem,omitempty"`
	RenamedFrom   string `json:"renamed_from,omitempty"`
	Repaired      int    `json:"repaired_segments,omitempty"`

	rep *tree.Report
}

// verdict is what verify and repair say of a set.
type verdict struct {
	Manifest       string         `json:"manifest"`
	OK             bool           `json:"ok"`
	ManifestDamage *damageVerdict `json:"manifest_damage,omitempty"`
	Files          []*fileVerdict `json:"files"`
	Repairable     *bool          `json:"repairable,omitempty"`
	Repair         string         `json:"repair,omitempty"` // what the parity can do
	Problem        string         `json:"problem,omitempty"`
}

type damageVerdict struct {
	MainCopiesIntact int `json:"main_copies_intact"`
	MainCopies       int `json:"main_copies"`
	DamagedBlocks    int `json:"damaged_hash_blocks"`
	LostHashes       int `json:"lost_hashes"`
	DamagedParity    int `json:"damaged_parity_kib"`
}

// inspect checks every file of the set.
func inspect(e *env, s *set) (*verdict, error) {
	v := &verdict{Manifest: s.path, OK: true}
	if d, p := s.Damage, s.DamagedParity(); d.Any() || p > 0 {
		v.ManifestDamage = &damageVerdict{d.MainCopies, 3, d.NodeBlocks + d.LeafBlocks, d.LostLeaves, p}
	}
	for i := range s.Files {
		fv, err := inspectFile(e, s, i, s.paths[i])
		if err != nil {
			return nil, err
		}
		v.Files = append(v.Files, fv)
		v.OK = v.OK && fv.OK
	}
	return v, nil
}

// inspectFile checks file i of the set at path.
func inspectFile(e *env, s *set, i int, path string) (*fileVerdict, error) {
	mf := s.Files[i]
	fv := &fileVerdict{File: path, ExpectedSize: mf.Size, Segments: mf.Segments}
	f, size, err := openData(path, os.O_RDONLY)
	var rep *tree.Report
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fv.Missing = true
		rep, err = s.Check(i, nil, -1)
	case err != nil:
		return nil, err
	default:
		defer f.Close()
		fv.Size = size
		bar := progress.New(e.stderr, "checking "+filepath.Base(path), min(size, mf.Size), "B")
		rep, err = s.Check(i, f, size, progressOption(bar))
		bar.Done()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	fv.rep = rep
	fv.OK = rep.OK()
	fv.Corrupted = spans(s.Manifest, i, rep.Corrupted)
	if !fv.Missing {
		if from, n := rep.Missing(); n > 0 {
			fv.MissingFrom, fv.MissingBytes = from, n
		}
	}
	fv.AppendedBytes = rep.Appended()
	fv.Unchecked = len(rep.Unchecked)
	if len(rep.Corrupted) == mf.Segments && mf.Segments > 1 {
		fv.Problem = fmt.Sprintf("every segment differs: is %s the manifest of this file? (it was made for %q)", s.path, mf.Name)
	}
	return fv, nil
}

func (v *verdict) print(e *env, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(v)
	}
	w := e.stdout
	if d := v.ManifestDamage; d != nil {
		fmt.Fprintf(w, "%s: damaged, still usable: %d of %d copies of its main block intact, %d damaged block%s of hashes",
			v.Manifest, d.MainCopiesIntact, d.MainCopies, d.DamagedBlocks, plural(d.DamagedBlocks))
		if d.DamagedParity > 0 {
			fmt.Fprintf(w, ", %d damaged KiB of parity", d.DamagedParity)
		}
		if d.LostHashes > 0 {
			hashes := "hashes"
			if d.LostHashes == 1 {
				hashes = "hash"
			}
			fmt.Fprintf(w, ", %d segment %s lost", d.LostHashes, hashes)
		}
		fmt.Fprintln(w)
	}
	for _, f := range v.Files {
		f.print(w, v.Manifest)
	}
	for _, line := range []string{v.Repair, v.Problem} {
		if line != "" {
			fmt.Fprintf(w, "%s: %s\n", v.Manifest, line)
		}
	}
	return nil
}

func (f *fileVerdict) print(w io.Writer, manifest string) {
	name := f.File
	if f.RenamedFrom != "" {
		fmt.Fprintf(w, "%s: found as %s, renamed back\n", name, f.RenamedFrom)
	}
	switch {
	case f.OK && f.Repaired > 0:
		all := fmt.Sprintf("all %d segments now match", f.Segments)
		if f.Segments == 1 {
			all = "its segment now matches"
		}
		fmt.Fprintf(w, "%s: repaired %d segment%s from parity; %s %s\n", name, f.Repaired, plural(f.Repaired), all, manifest)
	case f.OK && f.Segments == 1:
		fmt.Fprintf(w, "%s: OK, its segment matches %s\n", name, manifest)
	case f.OK:
		fmt.Fprintf(w, "%s: OK, all %d segments match %s\n", name, f.Segments, manifest)
	case f.Missing:
		fmt.Fprintf(w, "%s: missing (%d byte%s)\n", name, f.ExpectedSize, plural(int(f.ExpectedSize)))
	}
	if len(f.Corrupted) > 0 {
		n := 0
		for _, s := range f.Corrupted {
			n += s.Last - s.First + 1
		}
		fmt.Fprintf(w, "%s: %d of %d segment%s corrupted:\n", name, n, f.Segments, plural(f.Segments))
		for _, s := range f.Corrupted {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	if f.MissingBytes > 0 {
		fmt.Fprintf(w, "%s: truncated: %d byte%s missing from offset %d (the manifest says %d bytes)\n",
			name, f.MissingBytes, plural(int(f.MissingBytes)), f.MissingFrom, f.ExpectedSize)
	}
	if f.AppendedBytes > 0 {
		fmt.Fprintf(w, "%s: extended: %d byte%s appended at offset %d\n", name, f.AppendedBytes, plural(int(f.AppendedBytes)), f.ExpectedSize)
	}
	if f.Unchecked > 0 {
		fmt.Fprintf(w, "%s: %d segment%s not checked: the manifest lost their hashes\n", name, f.Unchecked, plural(f.Unchecked))
	}
	if f.Problem != "" {
		fmt.Fprintf(w, "%s: %s\n", name, f.Problem)
	}
}

// reports returns the reports of the files.
func (v *verdict) reports() []*tree.Report {
	var r []*tree.Report
	for _, f := range v.Files {
		r = append(r, f.rep)
	}
	return r
}

// lost counts the segments the files lost.
func (v *verdict) lost() int {
	n := 0
	for _, f := range v.Files {
		n += len(f.rep.Lost())
	}
	return n
}

// planWords says whether the parity can rebuild what was lost.
func planWords(s *set, v *verdict) (bool, string) {
	err := s.Plan(v.reports())
	if err == nil {
		return true, fmt.Sprintf("repairable: the parity rebuilds the %d lost segment%s (sigcheck repair)", v.lost(), plural(v.lost()))
	}
	return false, "not repairable: " + plain(err.Error())
}

const verifyHelp = "[FILE|DIR] [MANIFEST], or MANIFEST alone: the manifest is FILE" + manifestSuffix + " (DIR" + manifestSuffix + ")\n" +
	"unless named, and the files are where it says, relative to its directory (a\n" +
	"one-file manifest's file is FILE when given)."

func runVerify(e *env, args []string) error {
	fs := flags(e, "verify", "Checks files against their manifest: "+verifyHelp+"\n\n"+
		"Reports, per file, the corrupted segments as byte ranges, the bytes missing from a\n"+
		"truncated file or appended to an extended one (the common part is checked), a\n"+
		"missing file, damage to the manifest itself, and whether the parity can repair\n"+
		"it all. Exit status 0 when every file matches, 1 when any does not, 2 when the\n"+
		"manifest is unreadable.")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	s, err := openSet(pos)
	if err != nil {
		return err
	}
	defer s.file.Close()
	v, err := inspect(e, s)
	if err != nil {
		return err
	}
	if !v.OK {
		ok, words := planWords(s, v)
		v.Repairable, v.Repair = &ok, words
	}
	if err := v.print(e, *asJSON); err != nil {
		return err
	}
	if !v.OK {
		return negativeError{}
	}
	return nil
}

func runRepair(e *env, args []string) error {
	fs := flags(e, "repair", "Repairs files from their manifest's parity: "+verifyHelp+"\n\n"+
		"Checks every file, finds missing ones renamed in their directory (same size,\n"+
		"same first segment), rebuilds corrupted segments, the tail of a truncated file\n"+
		"and missing files, checks each rebuilt segment against the manifest's hashes\n"+
		"before writing it, and cuts appended bytes, as par2 does. Nothing is changed\n"+
		"unless the parity suffices. Exit status 0 when every file matches at the end,\n"+
		"1 when they cannot be repaired (then nothing was changed), 2 for an unreadable\n"+
		"manifest.")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	s, err := openSet(pos)
	if err != nil {
		return err
	}
	defer s.file.Close()
	v, err := inspect(e, s)
	if err != nil {
		return err
	}
	if v.OK {
		return v.print(e, *asJSON)
	}
	renames := findRenamed(s, v)
	for i, from := range renames {
		fv, err := inspectFile(e, s, i, from)
		if err != nil {
			return err
		}
		fv.File, fv.RenamedFrom = s.paths[i], from
		v.Files[i] = fv
	}
	if ok, words := planWords(s, v); !ok {
		v.Repairable, v.Problem = &ok, "cannot repair, nothing was changed: "+strings.TrimPrefix(words, "not repairable: ")
		if err := v.print(e, *asJSON); err != nil {
			return err
		}
		return negativeError{}
	}
	lost := make([]int, len(v.Files))
	for i, f := range v.Files {
		lost[i] = len(f.rep.Lost())
	}
	if err := repairFiles(s, v, renames); err != nil {
		return err
	}
	// Check everything again: what is reported is what is on disk.
	after, err := inspect(e, s)
	if err != nil {
		return err
	}
	for i, f := range after.Files {
		f.Repaired = lost[i]
		f.RenamedFrom = v.Files[i].RenamedFrom
	}
	if err := after.print(e, *asJSON); err != nil {
		return err
	}
	if !after.OK {
		return negativeError{}
	}
	return nil
}

// findRenamed looks, for each missing file, in its directory for a file
// of the set's size whose first segment matches and that no file of the
// set is: a file renamed since the manifest was made.
func findRenamed(s *set, v *verdict) map[int]string {
	renames := map[int]string{}
	taken := map[string]bool{}
	for _, p := range s.paths {
		a, _ := filepath.Abs(p)
		taken[a] = true
	}
	for i, f := range v.Files {
		if !f.Missing {
			continue
		}
		entries, _ := os.ReadDir(filepath.Dir(s.paths[i]))
		for _, d := range entries {
			p := filepath.Join(filepath.Dir(s.paths[i]), d.Name())
			a, _ := filepath.Abs(p)
			if taken[a] || !d.Type().IsRegular() {
				continue
			}
			fi, err := d.Info()
			if err != nil || fi.Size() != s.Files[i].Size {
				continue
			}
			g, err := os.Open(p)
			if err != nil {
				continue
			}
			match := s.Matches(i, g, fi.Size())
			g.Close()
			if match {
				renames[i], taken[a] = p, true
				break
			}
		}
	}
	return renames
}

// repairFiles renames found files back, creates missing ones, opens every
// file of the set and repairs them.
func repairFiles(s *set, v *verdict, renames map[int]string) error {
	targets := make([]tree.Target, len(s.Files))
	for i, f := range v.Files {
		p := s.paths[i]
		if from, ok := renames[i]; ok {
			if err := os.Rename(from, p); err != nil {
				return err
			}
		}
		mode := os.O_RDONLY
		if !f.rep.OK() || len(f.rep.Lost()) > 0 {
			mode = os.O_RDWR
		}
		if f.Missing && renames[i] == "" {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			mode |= os.O_CREATE | os.O_EXCL
		}
		g, err := os.OpenFile(p, mode, 0o644)
		if err != nil {
			return err
		}
		defer g.Close()
		targets[i] = g
	}
	if err := s.Repair(targets, v.reports()); err != nil {
		return err
	}
	for i, t := range targets {
		if !v.Files[i].rep.OK() {
			if err := t.(*os.File).Sync(); err != nil {
				return err
			}
		}
	}
	return nil
}
