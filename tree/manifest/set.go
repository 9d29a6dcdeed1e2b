package manifest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// A Set is a manifest opened with the directory its files are in. Every
// file of the set is reached through the Dir, so verify and repair never
// read or write outside it, nor follow a link inside it.
type Set struct {
	*Manifest
	Path  string // the manifest's path, as given
	Dir   *Dir
	file  *os.File
	self  fs.FileInfo // the manifest's own file: never one of the set's
	names []string    // each file's name in Dir
}

// ErrNotThisSet is returned by Repair when nothing of the files matches the
// manifest: it may not be theirs, and repair would overwrite them whole.
var ErrNotThisSet = errors.New("no segment of any file matches the manifest")

// OpenSet opens the manifest at mpath and the directory of its files: the
// manifest's own directory, where its files are by the names it keeps;
// or, for a manifest of one file, file's directory when file is given, the
// file being there under its own name (a file checked against the
// manifest of another name).
func OpenSet(mpath, file string) (*Set, error) {
	f, size, err := OpenRegular(mpath)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	m, err := Open(f, size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	s := &Set{Manifest: m, Path: mpath, file: f, self: fi}
	dir := filepath.Dir(mpath)
	for _, mf := range m.Files {
		s.names = append(s.names, mf.Name)
	}
	if file != "" && len(m.Files) == 1 {
		dir = filepath.Dir(file)
		s.names[0] = filepath.Base(file)
	}
	if s.Dir, err = OpenDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the manifest and the directory.
func (s *Set) Close() error {
	s.Dir.Close()
	return s.file.Close()
}

// Name returns where file i is looked for, as a user names it.
func (s *Set) Name(i int) string { return s.Dir.Join(s.names[i]) }

// Status is what Check found of one file of a set.
type Status struct {
	File    int
	Entry   Entry   // what is in its place
	Report  *Report // an absent file's when Entry is not Regular
	Scanned bool    // its lost segments were looked for elsewhere in it (Report.Moved)
}

// Check checks every file of the set. A file missing, or with something
// other than a regular file in its place, is reported absent, and the
// others are still checked. A file not of the size the manifest says,
// with corrupted segments, is also scanned for its lost segments at other
// offsets (Find): bytes inserted or removed. (With none corrupted, every
// byte it shares with the manifest's file is where it belongs.) A file
// that cannot be looked at or read (permission denied, an I/O error) is
// something else in its place too: reported, and the others checked.
// progress, if not nil, is called with the bytes read so far and their
// total. An error is only the context's.
func (s *Set) Check(ctx context.Context, progress func(done, total int64)) ([]*Status, error) {
	entries := make([]Entry, len(s.Files))
	var total, done int64
	for i := range s.Files {
		e, err := s.Dir.Stat(s.names[i])
		if err != nil {
			e = unreadable(err)
		}
		entries[i] = e
		if e.Kind == Regular {
			total += min(e.Size, s.Files[i].Size)
			if e.Size != s.Files[i].Size {
				total += e.Size // perhaps scanned too
			}
		}
	}
	var out []*Status
	for i := range s.Files {
		st := &Status{File: i, Entry: entries[i]}
		if st.Entry.Kind == Regular {
			at := func(d int64) {
				if progress != nil {
					progress(done+d, total)
				}
			}
			rep, e, err := s.checkFile(ctx, i, s.names[i], at)
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case err != nil:
				st.Entry = unreadable(err)
			case rep != nil:
				st.Entry, st.Report = e, rep
				done += max(0, min(rep.Size, rep.Want))
				if rep.Size != rep.Want && len(rep.Corrupted) > 0 {
					if err := s.find(ctx, st, at); err != nil {
						if ctx.Err() != nil {
							return nil, ctx.Err()
						}
						st.Entry, st.Report = unreadable(err), nil
					}
					done += rep.Size
				}
			default:
				st.Entry = e // gone meanwhile
			}
		}
		if st.Report == nil {
			st.Report = s.Absent(i)
		}
		out = append(out, st)
	}
	return out, nil
}

// unreadable is the entry of a file that cannot be looked at or read.
func unreadable(err error) Entry {
	return Entry{Kind: Other, What: "unreadable: " + unwrapPath(err).Error(), Err: err}
}

// find scans a regular file for its lost segments elsewhere in it.
func (s *Set) find(ctx context.Context, st *Status, progress func(int64)) error {
	st.Scanned = true
	if len(st.Report.Lost()) == 0 {
		return nil
	}
	f, e, err := s.Dir.Open(s.names[st.File])
	if err != nil || f == nil {
		return err
	}
	defer f.Close()
	if !os.SameFile(e.info, st.Entry.info) {
		return fmt.Errorf("%s: %w", s.Name(st.File), errSwapped)
	}
	if err := s.Manifest.Find(ctx, st.File, f, e.Size, st.Report, progress); err != nil {
		return fmt.Errorf("%s: %w", s.Name(st.File), err)
	}
	return nil
}

// checkFile checks the regular file at name as file i; a nil report
// when there is none there after all.
func (s *Set) checkFile(ctx context.Context, i int, name string, progress func(int64)) (*Report, Entry, error) {
	f, e, err := s.Dir.Open(name)
	if err != nil || f == nil {
		return nil, e, err
	}
	defer f.Close()
	rep, err := s.Manifest.Check(ctx, i, f, e.Size, progress)
	if err != nil {
		return nil, e, fmt.Errorf("%s: %w", s.Dir.Join(name), err)
	}
	return rep, e, nil
}

// OK reports whether every file is as the manifest says.
func OK(sts []*Status) bool {
	for _, st := range sts {
		if st.Entry.Kind != Regular || !st.Report.OK() {
			return false
		}
	}
	return true
}

// Recheck returns the files' statuses after Repair did done to them:
// unchanged files as they were, files made anew checked whole, and files
// repaired in place checked where they were written (Manifest.Recheck),
// so that what is reported is what is on disk, at the cost of the writes.
func (s *Set) Recheck(ctx context.Context, sts []*Status, done []Done) ([]*Status, error) {
	out := make([]*Status, len(sts))
	for i, st := range sts {
		d := done[i]
		if !d.Changed() {
			out[i] = st
			continue
		}
		e, err := s.Dir.Stat(s.names[i])
		if err != nil {
			return nil, err
		}
		now := &Status{File: i, Entry: e, Report: s.Absent(i)}
		out[i] = now
		if e.Kind != Regular {
			continue
		}
		if d.Created || d.CopiedFrom != "" || d.Moved > 0 {
			rep, e, err := s.checkFile(ctx, i, s.names[i], nil)
			if err != nil {
				return nil, err
			}
			if rep != nil {
				now.Entry, now.Report = e, rep
			}
			continue
		}
		f, e, err := s.Dir.Open(s.names[i])
		if err != nil || f == nil {
			return nil, err
		}
		rep, err := s.Manifest.Recheck(ctx, i, f, e.Size, st.Report, st.Report.Lost())
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name(i), err)
		}
		now.Entry, now.Report = e, rep
	}
	return out, nil
}

// Leftovers returns the temporary files of repairs that were killed
// before they could remove them (.sigcheck-tmp-…), in the directories
// of the set's files, as a user names them: for verify to say, since
// nothing else looks at them.
func (s *Set) Leftovers() []string {
	dirs := map[string]bool{}
	var out []string
	for _, n := range s.names {
		dir := path.Dir(n)
		if dirs[dir] {
			continue
		}
		dirs[dir] = true
		for _, name := range s.Dir.List(dir) {
			if isTemp(path.Base(name)) {
				out = append(out, s.Dir.Join(name))
			}
		}
	}
	return out
}
