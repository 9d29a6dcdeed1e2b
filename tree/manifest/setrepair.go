package manifest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/sigcheck/sigcheck/csum"
)

// RepairOptions are Repair's.
type RepairOptions struct {
	// Force rewrites files that look like others than the manifest's
	// (nothing of them matches, and their size or name differs), files
	// with more than one hard link, and sets of which nothing matches.
	Force bool
	// Memory bounds the rebuild's buffers (0: DefaultMemory).
	Memory int64
}

// Done is what Repair did to one file, or why it left it alone.
type Done struct {
	File       int
	Rebuilt    int64       // segments rebuilt and written
	Created    bool        // the file was missing, and is made anew
	CopiedFrom string      // the file was missing and found under this name: copied, and the other left
	Cut        int64       // appended bytes cut
	Moved      int64       // segments found moved and put back in their places
	Mode       fs.FileMode // the mode a file made anew was given
	Owner      string      // why a file laid out anew could not keep its owner, if it could not
	LeftAlone  string      // why a damaged or missing file was not touched
}

// Changed reports whether anything was written to the file.
func (d *Done) Changed() bool {
	return d.Rebuilt > 0 || d.Created || d.Cut > 0 || d.CopiedFrom != "" || d.Moved > 0
}

// StoppedError is what Repair returns when it stopped after writing: a
// rebuilt segment did not check, or a write failed. What it wrote is
// correct (each segment was checked before it was written); Written says
// how many segments of each file.
type StoppedError struct {
	Written []int64
	Err     error
}

func (e *StoppedError) Error() string { return "stopped after writing: " + e.Err.Error() }
func (e *StoppedError) Unwrap() error { return e.Err }

// A Prepared repair is what Repair will do, decided without writing
// anything: which files it leaves alone and why, which missing ones it
// found renamed, where it found moved segments, and whether the parity
// suffices. verify says it; repair does it.
type Prepared struct {
	Done []Done // per file: what will be done, or why it will be left alone
	// Err is why the set cannot be repaired (wrapping ErrTooManyFaults,
	// ErrRepairCheck or ErrNotThisSet), nil if it can.
	Err error

	s        *Set
	sts      []*Status
	opt      RepairOptions
	reports  []*Report      // as the plan sees them: files left alone absent, renamed ones as found
	plan     *plan          // what the parity rebuilds, its parity read once
	found    map[int]string // missing files found renamed: file → the name found
	readOnly map[int]bool   // files left alone whose intact segments still serve the parity
}

// Lost returns the segments the repair rebuilds.
func (p *Prepared) Lost() int64 {
	var n int64
	for _, r := range p.reports {
		n += Count(r.Lost())
	}
	return n
}

// Prepare decides what Repair does with the files as Check found them.
// It leaves alone (saying why in Done):
//   - something other than a regular file in a file's place, or a file
//     that cannot be read;
//   - a file that may be another (Report.Foreign) and whose size or name
//     differs from the manifest's;
//   - a file with more than one hard link: writing it would change the
//     file under its other names too (its intact segments still serve);
//
// the last two unless opt.Force. And a set of which nothing matches, while
// something is there to compare, is not repaired at all without opt.Force
// (ErrNotThisSet). A file left alone counts as lost for the parity, which
// serves the others. A missing file found under another name in its
// directory (same size, same first segment) will be copied back. A file
// that matches nothing at its place, or a set whose parity falls short, is
// scanned for moved segments first.
func (s *Set) Prepare(ctx context.Context, sts []*Status, opt RepairOptions) (*Prepared, error) {
	p := &Prepared{s: s, sts: sts, opt: opt, Done: make([]Done, len(s.Files)), reports: make([]*Report, len(s.Files)),
		found: map[int]string{}, readOnly: map[int]bool{}}
	renamed := newRenamed(s)
	matched, suspect := false, false
	for i, st := range sts {
		d, r := &p.Done[i], st.Report
		d.File, p.reports[i] = i, r
		switch st.Entry.Kind {
		case Other:
			d.LeftAlone = st.Entry.What + ": neither followed nor replaced (move it away, and repair again to rebuild the file)"
			if st.Entry.Err != nil {
				d.LeftAlone = st.Entry.What + ": left as it is"
			}
		case Missing:
			if name, rep := renamed.find(ctx, i); rep != nil {
				p.found[i], p.reports[i] = name, rep
			}
		case Regular:
			if r.OK() {
				break
			}
			if os.SameFile(st.Entry.info, s.self) {
				d.LeftAlone = "is the manifest itself"
				break
			}
			if r.Foreign() && !st.Scanned {
				if err := s.find(ctx, st, nil); err != nil {
					return nil, err
				}
			}
			switch {
			case r.Foreign() && (r.Size != r.Want || path.Base(s.names[i]) != path.Base(s.Files[i].Name)) && !opt.Force:
				d.LeftAlone = fmt.Sprintf("nothing of it matches the manifest, and it is %s: is it the file the manifest was made of? (-force rebuilds it)",
					mismatch(r.Size, r.Want, path.Base(s.names[i]), path.Base(s.Files[i].Name)))
			case st.Entry.Links > 1 && !opt.Force:
				d.LeftAlone = fmt.Sprintf("has %d hard links: not written, so as not to change it under its other names (-force writes it)", st.Entry.Links)
				p.readOnly[i] = true
				if len(r.Moved) > 0 { // read where they should be, they are not: lost to the others
					rr := *r
					rr.Moved = nil
					p.reports[i] = &rr
				}
			case !writable(s.Dir, s.names[i]):
				d.LeftAlone = "cannot be opened for writing: left as it is"
				p.readOnly[i] = true
				if len(r.Moved) > 0 {
					rr := *r
					rr.Moved = nil
					p.reports[i] = &rr
				}
			}
		}
		rep := p.reports[i]
		matched = matched || rep.Matched > 0 || len(rep.Moved) > 0
		suspect = suspect || rep.Foreign()
		if d.LeftAlone != "" && !p.readOnly[i] {
			p.reports[i] = s.Absent(i)
		}
	}
	if !matched && suspect && !opt.Force {
		p.Err = fmt.Errorf("%w: is it the manifest of these files? (-force repairs them anyway)", ErrNotThisSet)
		return p, nil
	}
	pl, err := s.plan(p.reports)
	if errors.Is(err, ErrTooManyFaults) {
		// Perhaps segments were moved: look for them, and plan again.
		scanned := false
		for i, st := range sts {
			if st.Entry.Kind == Regular && !st.Scanned && p.Done[i].LeftAlone == "" && len(st.Report.Lost()) > 0 {
				if err := s.find(ctx, st, nil); err != nil {
					return nil, err
				}
				scanned = true
			}
		}
		if scanned {
			pl, err = s.plan(p.reports)
		}
	}
	p.Err, p.plan = err, pl
	for i, r := range p.reports {
		d := &p.Done[i]
		if d.LeftAlone != "" {
			continue
		}
		d.Rebuilt = Count(r.Lost())
		if len(r.Moved) > 0 {
			d.Moved = Count(movedRuns(r.Moved))
		} else {
			d.Cut = r.Appended()
		}
		if name := p.found[i]; name != "" {
			d.CopiedFrom = s.Dir.Join(name)
		}
		d.Created = sts[i].Entry.Kind == Missing && d.CopiedFrom == ""
	}
	return p, nil
}

// Repair prepares the repair and, if the parity suffices, applies it.
func (s *Set) Repair(ctx context.Context, sts []*Status, opt RepairOptions) ([]Done, error) {
	p, err := s.Prepare(ctx, sts, opt)
	if err != nil {
		return nil, err
	}
	if p.Err != nil {
		return p.Done, p.Err
	}
	return p.Apply(ctx)
}

// pending is a file written beside its name, renamed into place once the
// whole repair passed: a missing file made anew, one copied back, one laid
// out anew.
type pending struct {
	hold    *os.File    // the file it replaces, held open so that its number is not given to another meanwhile
	tmp     string      // its name while written
	replace bool        // whether it replaces a file (laid out anew) or must find its name free
	mode    fs.FileMode // what it is given
	owner   fs.FileInfo // whose owner it keeps, if any
}

// Apply writes what Prepare decided: nothing unless the parity suffices
// (Err is nil). Files made anew, copied back or laid out anew are written
// beside their names and renamed into place once everything else passed;
// if the repair stops before, they are removed, with the directories made
// for them. Only the segments rebuilt in place into existing files can
// then have been written: a StoppedError says how many, all correct.
func (p *Prepared) Apply(ctx context.Context) (done []Done, err error) {
	if p.Err != nil {
		return p.Done, p.Err
	}
	s := p.s
	targets := newTargets(s.Dir)
	defer targets.close()
	ts := make([]Target, len(s.Files))
	reports := slices.Clone(p.reports)
	temps := map[int]*pending{}
	var made []string // directories made, deepest last
	defer func() {
		for _, t := range temps {
			if t.hold != nil {
				t.hold.Close()
			}
		}
		if err == nil {
			return
		}
		targets.close()
		for _, t := range temps {
			s.Dir.root.Remove(t.tmp)
		}
		for k := len(made) - 1; k >= 0; k-- {
			s.Dir.root.Remove(made[k]) // only if empty
		}
	}()
	for i, st := range p.sts {
		r := reports[i]
		d := &p.Done[i]
		switch {
		case p.readOnly[i]:
			ts[i] = discard{targets.lazy(s.names[i], st.Entry, false)}
		case d.LeftAlone != "":
			continue
		case p.found[i] != "":
			name, f, dirs, err := s.Dir.CreateTemp(s.names[i])
			made = append(made, dirs...)
			if err != nil {
				return p.Done, err
			}
			temps[i] = &pending{tmp: name, mode: p.mode(i)}
			if err := s.Dir.copyFrom(f, p.found[i]); err != nil {
				f.Close()
				return p.Done, err
			}
			ts[i] = targets.add(name, f, true)
		case len(r.Moved) > 0:
			name, f, src, rel, err := s.relay(ctx, st)
			if err != nil {
				return p.Done, err
			}
			temps[i] = &pending{hold: src, tmp: name, replace: true, mode: st.Entry.Mode, owner: st.Entry.info}
			ts[i], reports[i] = targets.add(name, f, true), rel
		case st.Entry.Kind == Regular:
			ts[i] = targets.lazy(s.names[i], st.Entry, !r.OK())
		case st.Entry.Kind == Missing:
			name, f, dirs, err := s.Dir.CreateTemp(s.names[i])
			made = append(made, dirs...)
			if err != nil {
				return p.Done, err
			}
			temps[i] = &pending{tmp: name, mode: p.mode(i)}
			ts[i] = targets.add(name, f, true)
		}
	}
	if testHookApply != nil {
		if err := testHookApply(); err != nil {
			return p.Done, err
		}
	}
	// The plan holds for the reports as Apply changed them: a file laid
	// out anew loses the same segments, now at their places.
	written, err := s.Manifest.repair(ctx, ts, reports, p.plan, p.opt.Memory)
	for i := range written {
		if temps[i] != nil || p.readOnly[i] {
			written[i] = 0 // removed, or never written
		}
	}
	if err != nil {
		for _, n := range written {
			if n > 0 {
				return p.Done, &StoppedError{Written: written, Err: err}
			}
		}
		return p.Done, err
	}
	for i, t := range temps {
		f, err := targets.file(t.tmp)
		if err != nil {
			return p.Done, err
		}
		// The owner first: a change of owner clears set-user-ID and
		// set-group-ID bits, which the mode then puts back.
		if t.owner != nil {
			if err := keepOwner(f, t.owner); err != nil {
				p.Done[i].Owner = err.Error()
			}
			if err := keepXattrs(f, s.Dir, s.names[i]); err != nil {
				p.Done[i].Owner = strings.TrimPrefix(p.Done[i].Owner+"; ", "; ") + err.Error()
			}
		} else {
			p.Done[i].Mode = t.mode
		}
		if err := f.Chmod(t.mode); err != nil {
			return p.Done, fmt.Errorf("%s: %w", s.Name(i), err)
		}
		if err := f.Sync(); err != nil {
			return p.Done, fmt.Errorf("%s: %w", s.Name(i), err)
		}
	}
	if err := targets.sync(); err != nil {
		return p.Done, err
	}
	// From here the files repaired in place are written: a failure to put
	// one in place leaves its repaired copy where it is, and says so.
	if testHookPlace != nil {
		testHookPlace()
	}
	var failed []error
	for i, t := range temps {
		f, err := targets.file(t.tmp)
		if err == nil {
			var orig fs.FileInfo
			if t.replace {
				orig = t.owner
			}
			err = s.Dir.place(f, t.tmp, s.names[i], orig)
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", s.Name(i), err))
			p.Done[i].LeftAlone = err.Error()
			p.Done[i].Rebuilt, p.Done[i].Moved, p.Done[i].Created, p.Done[i].CopiedFrom = 0, 0, false, ""
		}
		if t.hold != nil {
			t.hold.Close()
		}
		delete(temps, i)
	}
	if len(failed) > 0 {
		return p.Done, &StoppedError{Written: written, Err: errors.Join(failed...)}
	}
	return p.Done, nil
}

// testHookApply, if set, runs after Apply has made its temporary files
// and before it writes anything else; an error stops it there.
// testHookPlace, if set, runs before the repaired copies are put in place.
var (
	testHookApply func() error
	testHookPlace func()
)

// mode returns the mode a file made anew gets: the manifest's (version 2
// kept none: 0644, what it made files with).
func (p *Prepared) mode(i int) fs.FileMode {
	if p.s.Version < 3 {
		return 0o644
	}
	return p.s.Files[i].Mode.Perm()
}

// discard is a file left alone that still serves the parity: read, never
// written.
type discard struct{ *target }

func (discard) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }
func (discard) Truncate(int64) error                   { return nil }

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
// name, the file, open, the file it replaces, open (held until it is
// replaced), and its report.
func (s *Set) relay(ctx context.Context, st *Status) (string, *os.File, *os.File, *Report, error) {
	i, r, m := st.File, st.Report, s.Manifest
	src, e, err := s.Dir.Open(s.names[i])
	if err != nil {
		return "", nil, nil, nil, err
	}
	if src == nil || !os.SameFile(e.info, st.Entry.info) {
		if src != nil {
			src.Close()
		}
		return "", nil, nil, nil, fmt.Errorf("%s: %w", s.Name(i), errSwapped)
	}
	name, dst, _, err := s.Dir.CreateTemp(s.names[i])
	if err != nil {
		src.Close()
		return "", nil, nil, nil, err
	}
	fail := func(err error) (string, *os.File, *os.File, *Report, error) {
		src.Close()
		dst.Close()
		s.Dir.root.Remove(name)
		return "", nil, nil, nil, fmt.Errorf("%s: laying it out anew: %w", s.Name(i), err)
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
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
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
	return name, dst, src, rel, nil
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

// renamed finds missing files under other names in their directories:
// each directory is listed once, its regular files that are not the set's
// indexed by size, and each candidate's first segment hashed once (the
// files of a size share their first leaf's place in their trees, so one
// hash serves every missing file of that size): many missing files in a
// large directory cost the listing and a hash a candidate, not a listing
// and a hash a pair.
type renamed struct {
	s     *Set
	dirs  map[string]map[int64][]candidate // directory → size → candidates
	taken map[string]bool
}

type candidate struct {
	name  string
	first csum.Value // its first segment's leaf hash, as a file of its size
	ok    bool       // hashed
}

func newRenamed(s *Set) *renamed {
	r := &renamed{s: s, dirs: map[string]map[int64][]candidate{}, taken: map[string]bool{}}
	for _, n := range s.names {
		r.taken[n] = true
	}
	return r
}

// find looks in the directory of missing file i for a regular file of its
// size, not one of the set nor found already, whose first segment
// matches, and checks it whole.
func (r *renamed) find(ctx context.Context, i int) (string, *Report) {
	s := r.s
	dir := path.Dir(s.names[i])
	bySize, ok := r.dirs[dir]
	if !ok {
		bySize = map[int64][]candidate{}
		for _, name := range s.Dir.List(dir) {
			if r.taken[name] || isTemp(path.Base(name)) {
				continue
			}
			if e, err := s.Dir.Stat(name); err == nil && e.Kind == Regular && !os.SameFile(e.info, s.self) {
				bySize[e.Size] = append(bySize[e.Size], candidate{name: name})
			}
		}
		r.dirs[dir] = bySize
	}
	want, ok, err := s.Leaf(i, 0)
	if err != nil || !ok {
		return "", nil
	}
	cands := bySize[s.Files[i].Size]
	for k := range cands {
		c := &cands[k]
		if r.taken[c.name] {
			continue
		}
		if !c.ok {
			c.first, c.ok = r.firstLeaf(i, c.name)
		}
		if c.first != want {
			continue
		}
		if rep, _, err := s.checkFile(ctx, i, c.name, nil); err == nil && rep != nil {
			r.taken[c.name] = true
			return c.name, rep
		}
	}
	return "", nil
}

// firstLeaf hashes the first segment of the file at name as file i's.
func (r *renamed) firstLeaf(i int, name string) (csum.Value, bool) {
	s := r.s
	f, _, err := s.Dir.Open(name)
	if err != nil || f == nil {
		return csum.Value{}, false
	}
	defer f.Close()
	_, n := s.SegmentRange(i, 0)
	b := make([]byte, n)
	if k, _ := f.ReadAt(b, 0); int64(k) != n {
		return csum.Value{}, false
	}
	return s.Hash.Leaf(b, uint64(s.Files[i].Segments-1)), true
}
