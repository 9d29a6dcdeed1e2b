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
	"unicode"
	"unicode/utf8"

	"github.com/sigcheck/sigcheck/internal/progress"
	"github.com/sigcheck/sigcheck/tree/manifest"
)

// The manifest, verify and repair commands: flags, the files named, and
// what is printed. What they do is package tree/manifest's.

// manifestSuffix names the manifest written beside a file or directory by
// default.
const manifestSuffix = ".sigcheck"

// emit prints one line of a report. A line with a backslash, a line
// break or another control character in it (a file's name can hold any
// of them) is escaped as coreutils escapes names in checksum lines: \\,
// \n and \r, and, beyond coreutils, what a terminal would obey or draw
// misleadingly — other C0 and C1 controls, bytes that are not UTF-8, and
// the marks that reorder text right to left — as \xHH or \u{HHHH}, with a
// backslash before the line; so no name can make a line that looks like
// another, or move the cursor.
func emit(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, escLine(fmt.Sprintf(format, args...)))
}

// escLine escapes a line as emit does.
func escLine(line string) string {
	if e := esc(line); e != line {
		return `\` + e
	}
	return line
}

// esc escapes a name (see emit), and escPrefix is the backslash a line
// holding it starts with then, for lines of the form "SUM  NAME".
func esc(name string) string {
	if !needsEscape(name) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		r, n := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, name[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || bidi(r):
			fmt.Fprintf(&b, `\u{%04x}`, r)
		default:
			b.WriteString(name[i : i+n])
		}
		i += n
	}
	return b.String()
}

// bidi says whether r reorders the text around it (the embedding,
// override and isolate marks).
func bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '\\' || r == utf8.RuneError && n == 1 || unicode.IsControl(r) || bidi(r) {
			return true
		}
		i += n
	}
	return false
}

func escPrefix(name string) string {
	if needsEscape(name) {
		return `\`
	}
	return ""
}

// input is a file to put in a manifest: where it is, the name stored,
// and the file it was when looked at (it must still be that file when
// read: a name swapped for a link meanwhile is refused).
type input struct {
	path, name string
	info       fs.FileInfo
}

// openFiles keeps at most a few files of a set open at a time: the
// parity pass reads a column of every file of a stripe, and a directory
// of many thousands would otherwise run out of descriptors.
type openFiles struct{ open []*lazyFile }

const maxOpenFiles = 64

type lazyFile struct {
	set *openFiles
	in  input
	f   *os.File
}

func (l *lazyFile) ReadAt(p []byte, off int64) (int, error) {
	if l.f == nil {
		f, err := openSame(l.in)
		if err != nil {
			return 0, err
		}
		l.f = f
		l.set.open = append(l.set.open, l)
		if len(l.set.open) > maxOpenFiles {
			old := l.set.open[0]
			l.set.open = l.set.open[1:]
			old.f.Close()
			old.f = nil
		}
	}
	return l.f.ReadAt(p, off)
}

// openSame opens an input for reading if it is still the file looked at.
func openSame(in input) (*os.File, error) {
	f, _, err := openData(in.path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !os.SameFile(fi, in.info) {
		f.Close()
		return nil, fmt.Errorf("%s: changed while the manifest was being made", in.path)
	}
	return f, nil
}

func (s *openFiles) close() {
	for _, l := range s.open {
		l.f.Close()
		l.f = nil
	}
	s.open = nil
}

// makeManifest streams the inputs into a manifest written to out.
func makeManifest(e *env, out *os.File, ins []input, opts []manifest.Option) (*manifest.Manifest, error) {
	var src []manifest.Source
	var total int64
	set := &openFiles{}
	defer set.close()
	for _, in := range ins {
		src = append(src, manifest.Source{Name: in.name, Data: &lazyFile{set: set, in: in}, Size: in.info.Size(), Mode: in.info.Mode().Perm()})
		total += in.info.Size()
	}
	label := "hashing " + esc(filepath.Base(ins[0].path))
	if len(ins) > 1 {
		label = fmt.Sprintf("hashing %d files", len(ins))
	}
	bar := progress.New(e.stderr, label, total, "B")
	defer bar.Done()
	m, err := manifest.Create(out, src, append(opts, manifest.Progress(barProgress(bar)))...)
	if err != nil {
		if len(ins) == 1 {
			return nil, fmt.Errorf("%s: %w", ins[0].path, err)
		}
		return nil, err
	}
	return m, nil
}

// collect lists the files of the arguments (directories walked, in
// lexical order) with the names the manifest at mpath stores: their paths
// relative to its directory. A lone file outside that directory is stored
// by its base name (verify and repair are then told where it is). It also
// returns the mode the manifest gets: 0600, and read for group or others
// only where every file and every directory above it grants them it,
// since the manifest's parity can rebuild the files.
func collect(args []string, mpath string) ([]input, fs.FileMode, error) {
	base, err := filepath.Abs(filepath.Dir(mpath))
	if err != nil {
		return nil, 0, err
	}
	abs, _ := filepath.Abs(mpath)
	var ins []input
	readers := fs.FileMode(0o044) // group and others may read
	// Group and others read what is in a directory they may read and
	// search (x, moved up to r's place): each file's own mode, and every
	// directory above it, counts.
	searched := map[string]bool{}
	dirs := func(p string) {
		for d := filepath.Dir(p); !searched[d]; d = filepath.Dir(d) {
			searched[d] = true
			if fi, err := os.Stat(d); err == nil {
				readers &= fi.Mode().Perm() & (fi.Mode().Perm() << 2)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	add := func(p string, info fs.FileInfo) error {
		readers &= info.Mode().Perm()
		a, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		dirs(a)
		rel, err := filepath.Rel(base, a)
		if err != nil || !filepath.IsLocal(rel) {
			if len(args) == 1 && !info.IsDir() {
				ins = append(ins, input{p, filepath.Base(p), info})
				return nil
			}
			return usageErrorf("%s is not under %s, where the manifest goes: give -o a path above it", p, filepath.Dir(mpath))
		}
		ins = append(ins, input{p, filepath.ToSlash(rel), info})
		return nil
	}
	for _, arg := range args {
		info, err := os.Lstat(filepath.Clean(arg)) // "link/" is the link, not what it names
		if err != nil {
			return nil, 0, err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			// verify and repair follow no link: a set made through one
			// could never be checked.
			to, _ := filepath.EvalSymlinks(arg)
			return nil, 0, usageErrorf("%s is a symlink: verify and repair follow none, so name what it points to (%s)", strings.TrimSuffix(arg, "/"), to)
		}
		if !info.IsDir() {
			if !info.Mode().IsRegular() {
				return nil, 0, usageErrorf("%s: not a regular file", arg)
			}
			if err := add(arg, info); err != nil {
				return nil, 0, err
			}
			continue
		}
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil // counted with the files below it
			}
			if !d.Type().IsRegular() {
				return nil // links and devices are not data
			}
			if a, _ := filepath.Abs(p); a == abs || strings.HasPrefix(d.Name(), "."+filepath.Base(mpath)+".tmp") ||
				strings.HasPrefix(d.Name(), ".sigcheck-tmp-") {
				return nil // the manifest itself, one being written, or a repair's file
			}
			return add(p, info)
		})
		if err != nil {
			return nil, 0, err
		}
	}
	if len(ins) == 0 {
		return nil, 0, usageErrorf("no files in %s", strings.Join(args, ", "))
	}
	seen := map[string]string{}
	for _, in := range ins {
		if p, ok := seen[in.name]; ok {
			return nil, 0, usageErrorf("%s and %s would both be %s in the manifest", p, in.path, in.name)
		}
		seen[in.name] = in.path
	}
	return ins, 0o600 | readers&0o044, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// parityWords says what the parity of a manifest rebuilds.
func parityWords(m *manifest.Manifest) string {
	if m.Parity == 0 {
		return "no parity"
	}
	pct := 100 * float64(m.Parity) * float64(m.Stripes) / float64(m.Segments())
	if m.Stripes == 1 {
		return fmt.Sprintf("parity %d segment%s (%.1f %%, %s, %s): rebuilds any %d lost segment%s",
			m.Parity, plural(m.Parity), pct, sizeWords(m.ParityBytes()), m.Code(), m.Parity, plural(m.Parity))
	}
	run := int64(m.Parity) * int64(m.Stripes)
	return fmt.Sprintf("parity %d segments in %d interleaved stripes of up to %d (%.1f %%, %s, %s): rebuilds any %d lost segments of a stripe, so any run of up to %d (%s)",
		run, m.Stripes, m.Width, pct, sizeWords(m.ParityBytes()), m.Code(), m.Parity, run, sizeWords(run*int64(m.Segment)))
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
		"set, as par2 create does: each file's Merkle tree, its size and mode, and\n"+
		"Reed–Solomon parity shared across the files, from which sigcheck repair rebuilds\n"+
		"damaged, truncated or missing files without the originals. It goes to\n"+
		"FILE"+manifestSuffix+" (or DIR"+manifestSuffix+", or the first argument's) unless -o says otherwise,\n"+
		"written whole or not at all; files are named relative to its directory.\n"+
		"Symlinks, FIFOs and devices in a directory are not data: skipped. Its parity\n"+
		"rebuilds the files, so it is readable by no one the files are not: mode 0600,\n"+
		"0640 or 0644, as every file (and directory walked) grants group and others.\n\n"+
		"The parity is -r percent of the segments (5 by default, as par2's), or -c\n"+
		"segments in all, or -parity per stripe. It is one Reed–Solomon code over\n"+
		"GF(2^16) (Leopard) as long as the set has under about 65000 segments (par2\n"+
		"takes at most 32768 blocks), so that it rebuilds any lost segments up to its\n"+
		"count, wherever they are; a larger set is cut into interleaved stripes, each\n"+
		"rebuilding its share, so that a run of lost segments spreads over all of them.\n"+
		"The manifest's own critical parts are kept three times, each with a checksum,\n"+
		"so a manifest with a few damaged bytes still verifies and repairs.")
	tf := addTreeFlags(fs)
	redundancy := fs.Float64("r", manifest.DefaultRedundancy, "parity as a `percent` of the segments, as par2's -r (0 for none)")
	count := fs.Int("c", 0, "parity `segments` in all, as par2's -c (instead of -r)")
	parity := fs.Int("parity", 0, "parity `segments` per stripe (instead of -r)")
	memory := fs.Int("m", manifest.DefaultMemory>>20, "bound the parity's buffers to `MiB`, as par2's -m")
	out := fs.String("o", "", "write the manifest to `path` (default FILE"+manifestSuffix+")")
	asJSON := fs.Bool("json", false, "print what was written as JSON")
	args, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usageErrorf("want FILE or DIR (or several)")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	opts := tf.options()
	switch {
	case set["r"] && set["c"] || set["r"] && set["parity"] || set["c"] && set["parity"]:
		return usageErrorf("-r, -c and -parity each set the parity: give one")
	case set["c"]:
		if *count < 0 {
			return usageErrorf("-c %d: want 0 or more", *count)
		}
		opts = append(opts, manifest.Recovery(*count))
	case set["parity"]:
		if *parity < 0 || *parity > 32768 {
			return usageErrorf("-parity %d: want 0 to 32768", *parity)
		}
		opts = append(opts, manifest.PerStripe(*parity))
	default:
		if !(*redundancy >= 0 && *redundancy <= 100) {
			return usageErrorf("-r %v: want 0 to 100", *redundancy)
		}
		opts = append(opts, manifest.Redundancy(*redundancy))
	}
	if *memory < 1 || *memory > 1<<20 {
		return usageErrorf("-m %d: want 1 to %d MiB", *memory, 1<<20)
	}
	opts = append(opts, manifest.Memory(int64(*memory)<<20))
	if *tf.seg <= 0 || *tf.seg > manifest.MaxSegment {
		return usageErrorf("-seg %d: want 1 to %d", *tf.seg, manifest.MaxSegment)
	}
	path := *out
	if path == "" {
		path = defaultManifest(args[0])
	}
	ins, mode, err := collect(args, path)
	if err != nil {
		return err
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
	err = tmp.Chmod(mode)
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
				"segments": f.Segments, "bytes": f.Size, "mode": fmt.Sprintf("%04o", f.Mode)}
		}
		return json.NewEncoder(e.stdout).Encode(map[string]any{"manifest": path, "version": m.Version, "hash": m.Hash.Name(),
			"segment_size": m.Segment, "segments": m.Segments(), "bytes": m.Size(), "parity": m.Parity * m.Stripes,
			"parity_per_stripe": m.Parity, "stripes": m.Stripes, "stripe_width": m.Width, "code": m.Code(),
			"parity_bytes": m.ParityBytes(), "manifest_bytes": m.Bytes(), "files": files})
	}
	for i, f := range m.Files {
		emit(e.stdout, "%s: %d byte%s in %d segment%s of %d, root %s (%s)", ins[i].path, f.Size, plural(int(f.Size)),
			f.Segments, plural(f.Segments), m.Segment, formatRoot(f.Root, m.Hash.Size()), m.Hash.Name())
	}
	emit(e.stdout, "wrote %s (%d bytes, %s)", path, m.Bytes(), parityWords(m))
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

// openSet reads [FILE|DIR|MANIFEST] [MANIFEST]: a manifest given alone,
// or the FILE (or DIR) whose manifest is FILE.sigcheck unless named
// second. Files are where the manifest says, relative to its directory;
// a one-file manifest's file is FILE when given.
func openSet(pos []string) (*manifest.Set, error) {
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
	if isDir(data) {
		data = ""
	}
	return manifest.OpenSet(mpath, data)
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
	f, _, err := openData(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 8)
	_, err = io.ReadFull(f, b)
	return err == nil && manifest.IsManifest(b)
}
