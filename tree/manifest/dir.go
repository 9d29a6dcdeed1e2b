package manifest

import (
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

// Path returns the directory's path, as opened.
func (d *Dir) Path() string { return d.path }

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
	What  string // for Other: "a symlink", "a FIFO", "a directory", …
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
			return Entry{Kind: Other, What: w + " in place of its directory " + p}, nil
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
var errSwapped = errors.New("changed while it was being opened")

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

// Create makes a new regular file at name, and the directories on its
// way, none of which may be anything but a directory. The file is made
// with mode 0600, for its owner alone until it is whole.
func (d *Dir) Create(name string) (*os.File, error) {
	if dir := path.Dir(name); dir != "." {
		e, err := d.Stat(dir)
		if err != nil {
			return nil, err
		}
		if e.Kind == Other && e.What != "a directory" {
			return nil, fmt.Errorf("%s: %s in place of a directory", d.Join(dir), e.What)
		}
		if e.Kind == Regular {
			return nil, fmt.Errorf("%s: a file in place of a directory", d.Join(dir))
		}
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Join(dir), unwrapPath(err))
		}
		if e, err := d.Stat(dir); err != nil || e.Kind != Other || e.What != "a directory" {
			return nil, fmt.Errorf("%s: %w", d.Join(dir), errSwapped)
		}
	}
	f, err := d.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|openNonblock, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Join(name), unwrapPath(err))
	}
	return f, nil
}

// Copy copies the regular file at from to a new file at to, made as
// Create makes it, and returns the copy, open.
func (d *Dir) Copy(from, to string) (*os.File, error) {
	src, e, err := d.Open(from)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, fmt.Errorf("%s: %s", d.Join(from), e.What)
	}
	defer src.Close()
	dst, err := d.Create(to)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		d.root.Remove(to)
		return nil, fmt.Errorf("copying %s to %s: %w", d.Join(from), d.Join(to), err)
	}
	return dst, nil
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
