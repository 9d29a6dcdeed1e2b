package manifest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// A Dir is the directory a set's files are in, opened once (os.OpenRoot):
// every name is resolved inside it, so that nothing a manifest names, nor
// anything a hostile user puts in the directory, reaches a file outside
// it. Beyond that containment, a Dir follows no symbolic link at all, at
// any level of a name: a link in a file's place, or in place of one of
// its directories, is something else in the file's place, never the file.
// Only regular files are read or written; a FIFO, a device, a socket or a
// directory in a file's place is never opened (so never waited on), and
// a file is opened non-blocking and checked to be the one looked at.
//
// What a Dir cannot prevent: a user who may write in the directory can
// still swap a name between the look and the open; the open is then
// refused, or (through a link inside the set) reaches another file of the
// same directory tree, never one outside.
type Dir struct {
	root *os.Root
	path string
}

// OpenDir opens the directory at path.
func OpenDir(path string) (*Dir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r, path: path}, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Join returns the path of a name of the directory, as a user would type
// it.
func (d *Dir) Join(name string) string {
	if d.path == "." {
		return fromSlash(name)
	}
	return d.path + string(os.PathSeparator) + fromSlash(name)
}

func fromSlash(name string) string {
	if os.PathSeparator == '/' {
		return name
	}
	return strings.ReplaceAll(name, "/", string(os.PathSeparator))
}

// Kind is what a Dir finds at a name.
type Kind uint8

const (
	Missing Kind = iota // nothing there, nor its directory
	Regular             // a regular file
	Other               // something else: see Entry.What
)

// Entry is what is at a name of a Dir, looked at without following links.
type Entry struct {
	Kind  Kind
	What  string // for Other: "a symlink", "a FIFO", "a directory", …, "unreadable: …"
	Err   error  // for Other, when it cannot be looked at or read
	Size  int64
	Mode  fs.FileMode
	Links uint64 // hard links of a regular file (1 where the system does not say)
	info  fs.FileInfo
}

// what says what a file of a type is, with its article.
func what(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// Stat says what is at name (slash-separated, relative), following no
// link: each directory on the way must be a directory, not a link to one.
// An error is a failure to look (permission denied), not an absence.
func (d *Dir) Stat(name string) (Entry, error) {
	parts := strings.Split(name, "/")
	for k := range parts {
		p := path.Join(parts[:k+1]...)
		fi, err := d.root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return Entry{Kind: Missing}, nil
		case err != nil:
			return Entry{}, fmt.Errorf("%s: %w", d.Join(name), unwrapPath(err))
		case k < len(parts)-1 && !fi.IsDir():
			w := what(fi.Mode())
			if fi.Mode().IsRegular() {
				w = "a file"
			}
			return Entry{Kind: Other, What: w + " in place of directory " + d.Join(p)}, nil
		case k == len(parts)-1 && !fi.Mode().IsRegular():
			return Entry{Kind: Other, What: what(fi.Mode())}, nil
		case k == len(parts)-1:
			return Entry{Kind: Regular, Size: fi.Size(), Mode: fi.Mode(), Links: links(fi), info: fi}, nil
		}
	}
	return Entry{Kind: Missing}, nil
}

// unwrapPath keeps the reason of a path error, whose path is relative to
// the root; callers name the file as the user knows it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// errSwapped is returned when a name no longer leads to the file looked
// at: someone changed the directory meanwhile.
var errSwapped = fmt.Errorf("%w, while it was being opened", errChanged)

// open opens the regular file at name with flag, if Stat finds one and
// the file opened is the one found.
func (d *Dir) open(name string, flag int) (*os.File, Entry, error) {
	e, err := d.Stat(name)
	if err != nil {
		return nil, e, err
	}
	if e.Kind != Regular {
		return nil, e, nil
	}
	f, err := d.root.OpenFile(name, flag|openNonblock, 0)
	if err != nil {
		return nil, e, fmt.Errorf("%s: %w", d.Join(name), unwrapPath(err))
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !os.SameFile(fi, e.info) {
		f.Close()
		return nil, e, fmt.Errorf("%s: %w", d.Join(name), errSwapped)
	}
	return f, e, nil
}

// Open opens the regular file at name for reading. A nil file with no
// error means there is none: the entry says what is there instead.
func (d *Dir) Open(name string) (*os.File, Entry, error) { return d.open(name, os.O_RDONLY) }

// OpenWrite opens the regular file at name for reading and writing.
func (d *Dir) OpenWrite(name string) (*os.File, Entry, error) { return d.open(name, os.O_RDWR) }

// tempPrefix begins the names of the files a repair writes beside the
// names they will take: short, so that a name of the longest allowed still
// has its temporary file.
const tempPrefix = ".sigcheck-tmp-"

// isTemp says whether a base name is one of a repair's temporary files.
func isTemp(base string) bool { return strings.HasPrefix(base, tempPrefix) }

// CreateTemp makes a new regular file in the directory of name, where
// name will be, under a temporary name, and the directories on its way,
// none of which may be anything but a directory (nor a link to one). It
// returns the file's name, the file, open for reading and writing with
// mode 0600 (for its owner alone until it is whole), and the directories
// it made, for the caller to remove if it gives up.
func (d *Dir) CreateTemp(name string) (string, *os.File, []string, error) {
	dir := path.Dir(name)
	var made []string
	fail := func(err error) (string, *os.File, []string, error) { return "", nil, made, err }
	if dir != "." {
		parts := strings.Split(dir, "/")
		for k := range parts {
			p := path.Join(parts[:k+1]...)
			e, err := d.Stat(p)
			switch {
			case err != nil:
				return fail(err)
			case e.Kind == Missing:
				if err := d.root.Mkdir(p, 0o755); err != nil {
					return fail(fmt.Errorf("%s: %w", d.Join(p), unwrapPath(err)))
				}
				made = append(made, p)
			case e.Kind == Regular:
				return fail(fmt.Errorf("%s: a file in place of a directory", d.Join(p)))
			case e.What != "a directory":
				return fail(fmt.Errorf("%s: %s in place of a directory", d.Join(p), e.What))
			}
		}
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := path.Join(dir, fmt.Sprintf("%s%x", tempPrefix, rnd))
	f, err := d.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|openNonblock, 0o600)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", d.Join(name), unwrapPath(err)))
	}
	return tmp, f, made, nil
}

// copyFrom copies the regular file at from into dst.
func (d *Dir) copyFrom(dst *os.File, from string) error {
	src, e, err := d.Open(from)
	if err != nil {
		return err
	}
	if src == nil {
		return fmt.Errorf("%s: %s", d.Join(from), e.What)
	}
	defer src.Close()
	if _, err := io.Copy(dst, src); err != nil {
		return fmt.Errorf("copying %s: %w", d.Join(from), err)
	}
	return nil
}

// errChanged is returned when a name changed while a repair wrote the
// file that was to take it.
var errChanged = errors.New("changed meanwhile")

// place gives f, the file written at tmp beside name, that name. A file
// made anew (orig nil) takes the name only if it is still free: a file
// made there meanwhile is never clobbered. A file laid out anew replaces
// orig only if orig is still there: where it can (Linux), the two names
// are exchanged atomically and what was taken out checked after, and
// exchanged back if it was not orig. Either way the name must end up
// holding f itself: a temporary file swapped for a link meanwhile is not
// put in place. On failure, f stays at tmp, for the caller to say where.
func (d *Dir) place(f *os.File, tmp, name string, orig fs.FileInfo) error {
	mine, err := f.Stat()
	if err != nil {
		return err
	}
	is := func(n string, fi fs.FileInfo) bool {
		e, err := d.root.Lstat(n)
		return err == nil && os.SameFile(e, fi)
	}
	// unchanged says whether n is still orig as it was looked at: the
	// same file, and not written since (a file removed and another made
	// may get its number back).
	unchanged := func(n string, fi fs.FileInfo) bool {
		e, err := d.root.Lstat(n)
		return err == nil && os.SameFile(e, fi) && e.Size() == fi.Size() && e.ModTime().Equal(fi.ModTime())
	}
	if !is(tmp, mine) {
		return fmt.Errorf("its repaired copy %s was replaced meanwhile: %w", d.Join(tmp), errChanged)
	}
	kept := fmt.Errorf("%w: left as it is; the repaired file is %s", errChanged, d.Join(tmp))
	if orig == nil {
		err := d.root.Link(tmp, name)
		switch {
		case errors.Is(err, fs.ErrExist):
			return kept
		case err != nil: // no hard links here: a rename, if the name is still free
			if e, serr := d.Stat(name); serr != nil || e.Kind != Missing {
				return kept
			}
			if err := d.root.Rename(tmp, name); err != nil {
				return unwrapPath(err)
			}
			return nil
		}
		if !is(name, mine) { // tmp was swapped between the look and the link
			d.root.Remove(name)
			return kept
		}
		return unwrapPath(d.root.Remove(tmp))
	}
	dir, err := d.root.Open(path.Dir(name))
	if err != nil {
		return unwrapPath(err)
	}
	defer dir.Close()
	if err := exchange(dir, path.Base(tmp), path.Base(name)); err != nil {
		// Not here, or not on this file system: look, then rename.
		if !unchanged(name, orig) {
			return kept
		}
		return unwrapPath(d.root.Rename(tmp, name))
	}
	if !is(name, mine) || !unchanged(tmp, orig) {
		exchange(dir, path.Base(tmp), path.Base(name)) // put back what was there
		if !is(tmp, mine) {
			return fmt.Errorf("%w: left as it is, and its repaired copy was replaced meanwhile too", errChanged)
		}
		return kept
	}
	return unwrapPath(d.root.Remove(tmp))
}

// List returns the names of the regular files directly in the directory
// dir (slash-separated, relative, "." for the top), if it is one reached
// without links.
func (d *Dir) List(dir string) []string {
	if dir != "." {
		if e, err := d.Stat(dir); err != nil || e.Kind != Other || e.What != "a directory" {
			return nil
		}
	}
	f, err := d.root.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, _ := f.ReadDir(-1)
	var names []string
	for _, de := range entries {
		if de.Type().IsRegular() {
			names = append(names, path.Join(dir, de.Name()))
		}
	}
	return names
}

// OpenRegular opens the file at path (the user's own path: links are
// followed) for reading if it is a regular file, without waiting on a
// FIFO, and returns its size.
func OpenRegular(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %s, not a regular file", path, what(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// writable says whether the regular file at name can be opened for
// writing, as a repair would.
func writable(d *Dir, name string) bool {
	f, _, err := d.OpenWrite(name)
	if err != nil || f == nil {
		return false
	}
	f.Close()
	return true
}
