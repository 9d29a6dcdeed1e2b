package manifest

import (
	"context"
	"crypto/rand"
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
// byte it shares with the manifest's file is where it belongs.) progress, if not nil, is called with the bytes
// read so far and their total.
func (s *Set) Check(ctx context.Context, progress func(done, total int64)) ([]*Status, error) {
	entries := make([]Entry, len(s.Files))
	var total, done int64
	for i := range s.Files {
		e, err := s.Dir.Stat(s.names[i])
		if err != nil {
			return nil, err
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
			if err != nil {
				return nil, err
			}
			st.Entry, st.Report = e, rep
			done += max(0, min(rep.Size, rep.Want))
			if rep.Size != rep.Want && len(rep.Corrupted) > 0 {
				if err := s.find(ctx, st, at); err != nil {
					return nil, err
				}
				done += rep.Size
			}
		}
		if st.Report == nil {
			st.Report = s.Absent(i)
		}
		out = append(out, st)
	}
	return out, nil
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

// Reports returns the statuses' reports.
func Reports(sts []*Status) []*Report {
	r := make([]*Report, len(sts))
	for i, st := range sts {
		r[i] = st.Report
	}
	return r
}

// RepairOptions are Repair's.
type RepairOptions struct {
	// Force rewrites files that look like others than the manifest's
	// (no segment matches, and the size or name differs), files with more
	// than one hard link, and sets of which nothing matches.
	Force bool
	// Memory bounds the rebuild's buffers (0: DefaultMemory).
	Memory int64
	// Progress, if not nil, follows the check of a file found renamed.
	Progress func(done, total int64)
}

// Done is what Repair did to one file, or why it left it alone.
type Done struct {
	File       int
	Rebuilt    int64       // segments rebuilt and written
	Created    bool        // the file was missing, and is made anew
	CopiedFrom string      // the file was missing and found under this name: copied, and the other left
	Cut        int64       // appended bytes cut
	Moved      int64       // segments found moved and put back in their places
	Mode       fs.FileMode // the mode a created file was given
	LeftAlone  string      // why a damaged or missing file was not touched
}

// Changed reports whether anything was written to the file.
func (d *Done) Changed() bool {
	return d.Rebuilt > 0 || d.Created || d.Cut > 0 || d.CopiedFrom != "" || d.Moved > 0
}

// Repair rebuilds what Check found lost, from the parity, into the set's
// directory. It writes only regular files that are the set's, and creates
// missing ones; it never follows a link, replaces something else in a
// file's place, moves a file, or writes the manifest. Nothing at all is
// written unless the parity suffices for everything it is to rebuild.
// It leaves alone (saying why in Done):
//   - something other than a regular file in a file's place;
//   - a file of which no segment matches the manifest and whose size or
//     name differs from the manifest's: it may be another file;
//   - a file with more than one hard link: writing it would change the
//     file under its other names too;
//
// the last two unless opt.Force. And a set of which no segment of any
// file matches is not repaired at all without opt.Force (ErrNotThisSet).
// A file left alone counts as lost for the parity, which then serves the
// others. A missing file found under another name in its directory (same
// size, same first segment) is copied back, the other left where it is.
// Created files get the mode the manifest keeps. A file whose segments
// were found moved (Find: bytes inserted or removed) is written anew beside
// itself, its segments in their places and the lost ones rebuilt, and
// renamed over itself once whole, with its mode. A file that matches
// nothing at its place, or a set whose parity falls short, is scanned for
// moved segments first.
func (s *Set) Repair(ctx context.Context, sts []*Status, opt RepairOptions) ([]Done, error) {
	done := make([]Done, len(s.Files))
	reports := make([]*Report, len(s.Files))
	found := map[int]string{} // renamed files: file → name found under
	matched, compared := false, false
	for i, st := range sts {
		done[i].File, reports[i] = i, st.Report
		switch st.Entry.Kind {
		case Other:
			done[i].LeftAlone = st.Entry.What + ": neither followed nor replaced (move it away, and repair again to rebuild the file)"
		case Missing:
			if name, rep := s.findRenamed(ctx, i, opt.Progress); rep != nil {
				found[i], reports[i] = name, rep
				matched = true
			}
		case Regular:
			r := st.Report
			if r.OK() {
				break
			}
			if r.Foreign() && !st.Scanned {
				if err := s.find(ctx, st, nil); err != nil {
					return done, err
				}
			}
			switch {
			case os.SameFile(st.Entry.info, s.self):
				done[i].LeftAlone = "is the manifest itself"
			case r.Foreign() && (r.Size != r.Want || path.Base(s.names[i]) != path.Base(s.Files[i].Name)) && !opt.Force:
				done[i].LeftAlone = fmt.Sprintf("no segment matches the manifest, and it is %s: is it the file the manifest was made of? (-force rebuilds it)",
					mismatch(r.Size, r.Want, path.Base(s.names[i]), path.Base(s.Files[i].Name)))
			case st.Entry.Links > 1 && !opt.Force:
				done[i].LeftAlone = fmt.Sprintf("has %d hard links: not written, so as not to change it under its other names (-force writes it)", st.Entry.Links)
			}
		}
		matched = matched || reports[i].Matched > 0 || len(reports[i].Moved) > 0
		compared = compared || len(reports[i].Corrupted) > 0
		if done[i].LeftAlone != "" {
			reports[i] = s.Absent(i)
		}
	}
	if !matched && compared && !opt.Force {
		return done, fmt.Errorf("%w: is it the manifest of these files? (-force repairs them anyway)", ErrNotThisSet)
	}
	err := s.Plan(reports)
	if errors.Is(err, ErrTooManyFaults) {
		// Perhaps segments were moved: look for them, and plan again.
		scanned := false
		for i, st := range sts {
			if st.Entry.Kind == Regular && !st.Scanned && done[i].LeftAlone == "" && len(st.Report.Lost()) > 0 {
				if err := s.find(ctx, st, nil); err != nil {
					return done, err
				}
				scanned = true
			}
		}
		if scanned {
			err = s.Plan(reports)
		}
	}
	if err != nil {
		return done, err
	}
	// The parity suffices: from here on, files are written.
	targets := newTargets(s.Dir)
	defer targets.close()
	ts := make([]Target, len(s.Files))
	relaid := map[int]string{} // files laid out anew: file → its new copy's name
	defer func() {
		for _, name := range relaid {
			s.Dir.root.Remove(name) // after a failure; renamed away after success
		}
	}()
	for i, st := range sts {
		r := reports[i]
		switch {
		case done[i].LeftAlone != "":
			continue
		case len(r.Moved) > 0:
			name, f, rel, err := s.relay(st)
			if err != nil {
				return done, err
			}
			relaid[i] = name
			ts[i], reports[i] = targets.add(name, f, true), rel
			done[i].Moved = Count(movedRuns(r.Moved))
		case found[i] != "":
			f, err := s.Dir.Copy(found[i], s.names[i])
			if err != nil {
				return done, err
			}
			ts[i], done[i].CopiedFrom = targets.add(s.names[i], f, true), s.Dir.Join(found[i])
		case st.Entry.Kind == Regular:
			ts[i] = targets.lazy(s.names[i], st.Entry, !r.OK())
		case st.Entry.Kind == Missing:
			f, err := s.Dir.Create(s.names[i])
			if err != nil {
				return done, err
			}
			ts[i], done[i].Created = targets.add(s.names[i], f, true), true
		}
		done[i].Rebuilt = Count(r.Lost())
		if done[i].Moved == 0 {
			done[i].Cut = r.Appended()
		}
	}
	if err := s.Manifest.Repair(ctx, ts, reports, opt.Memory); err != nil {
		return done, err
	}
	for i, name := range relaid {
		if err := targets.chmod(name, sts[i].Entry.Mode); err != nil {
			return done, err
		}
		if err := targets.sync(); err != nil {
			return done, err
		}
		if err := s.Dir.root.Rename(name, s.names[i]); err != nil {
			return done, fmt.Errorf("%s: %w", s.Name(i), unwrapPath(err))
		}
		delete(relaid, i)
	}
	for i := range done {
		if done[i].Created || done[i].CopiedFrom != "" {
			mode := s.Files[i].Mode
			if mode == 0 {
				mode = 0o644 // version 2 kept no modes: what it made files with
			}
			if err := targets.chmod(s.names[i], mode); err != nil {
				return done, err
			}
			done[i].Mode = mode
		}
	}
	return done, targets.sync()
}

func movedRuns(mv []Moved) []Run {
	runs := make([]Run, len(mv))
	for k, m := range mv {
		runs[k] = m.Run
	}
	return runs
}

// relay writes, beside file st.File, a new file holding its segments that
// are not lost in their places (those found moved from where they were
// found), of the manifest's size, the lost ones zero: for Repair to
// rebuild them in, and rename over the file. It returns the new file's
// name, the file, open, and its report.
func (s *Set) relay(st *Status) (string, *os.File, *Report, error) {
	i, r, m := st.File, st.Report, s.Manifest
	var rnd [6]byte
	rand.Read(rnd[:])
	name := path.Join(path.Dir(s.names[i]), fmt.Sprintf(".%s.sigcheck-%x", path.Base(s.names[i]), rnd))
	src, e, err := s.Dir.Open(s.names[i])
	if err != nil {
		return "", nil, nil, err
	}
	if src == nil || !os.SameFile(e.info, st.Entry.info) {
		if src != nil {
			src.Close()
		}
		return "", nil, nil, fmt.Errorf("%s: %w", s.Name(i), errSwapped)
	}
	defer src.Close()
	dst, err := s.Dir.Create(name)
	if err != nil {
		return "", nil, nil, err
	}
	fail := func(err error) (string, *os.File, *Report, error) {
		dst.Close()
		s.Dir.root.Remove(name)
		return "", nil, nil, fmt.Errorf("%s: laying it out anew: %w", s.Name(i), err)
	}
	lost := r.Lost()
	seg := int64(m.Segment)
	// from returns where segment j's bytes are in the file, or -1; it is
	// asked of segments in order.
	lc, mc := 0, 0
	from := func(j int) int64 {
		for lc < len(lost) && lost[lc].end() <= j {
			lc++
		}
		for mc < len(r.Moved) && r.Moved[mc].end() <= j {
			mc++
		}
		switch {
		case lc < len(lost) && lost[lc].First <= j:
			return -1
		case mc < len(r.Moved) && r.Moved[mc].First <= j:
			return r.Moved[mc].From + int64(j-r.Moved[mc].First)*seg
		}
		return int64(j) * seg
	}
	buf := make([]byte, readChunk)
	f := &m.Files[i]
	for j := 0; j < f.Segments; {
		at := from(j)
		if at < 0 {
			j++
			continue
		}
		k := j + 1
		for k < f.Segments && from(k) == at+int64(k-j)*seg {
			k++
		}
		off, _ := m.SegmentRange(i, j)
		end, n := m.SegmentRange(i, k-1)
		for c := int64(0); c < end+n-off; c += int64(len(buf)) {
			b := buf[:min(int64(len(buf)), end+n-off-c)]
			if got, err := src.ReadAt(b, at+c); got < len(b) {
				return fail(err)
			}
			if _, err := dst.WriteAt(b, off+c); err != nil {
				return fail(err)
			}
		}
		j = k
	}
	if err := dst.Truncate(f.Size); err != nil {
		return fail(err)
	}
	rel := &Report{File: i, Size: f.Size, Want: f.Size, Segments: f.Segments, Present: f.Segments,
		Matched: r.Matched, Corrupted: lost, Unchecked: r.Unchecked}
	return name, dst, rel, nil
}

// mismatch says how a file differs from the manifest's, besides its data.
func mismatch(size, want int64, name, wantName string) string {
	switch {
	case size != want && name != wantName:
		return fmt.Sprintf("%d bytes where the manifest says %d, and named %q where it says %q", size, want, name, wantName)
	case size != want:
		return fmt.Sprintf("%d bytes where the manifest says %d", size, want)
	}
	return fmt.Sprintf("named %q where the manifest says %q", name, wantName)
}

// findRenamed looks in the directory of missing file i for a regular file
// of its size, not one of the set, whose first segment matches, and
// checks it whole: a file renamed since the manifest was made.
func (s *Set) findRenamed(ctx context.Context, i int, progress func(done, total int64)) (string, *Report) {
	taken := map[string]bool{}
	for _, n := range s.names {
		taken[n] = true
	}
	for _, name := range s.Dir.List(path.Dir(s.names[i])) {
		if taken[name] {
			continue
		}
		e, err := s.Dir.Stat(name)
		if err != nil || e.Kind != Regular || e.Size != s.Files[i].Size || os.SameFile(e.info, s.self) {
			continue
		}
		f, _, err := s.Dir.Open(name)
		if err != nil || f == nil {
			continue
		}
		match := s.Matches(i, f, e.Size)
		f.Close()
		if !match {
			continue
		}
		rep, _, err := s.checkFile(ctx, i, name, func(d int64) {
			if progress != nil {
				progress(d, e.Size)
			}
		})
		if err == nil && rep != nil {
			return name, rep
		}
	}
	return "", nil
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
