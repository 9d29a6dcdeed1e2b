package manifest

import (
	"fmt"
	"io/fs"
	"os"
)

// targets are the files of a set being repaired, opened as they are
// needed and closed when too many are open: a set of many thousands of
// files reads one stripe from all of them. A file reopened must still be
// the one first opened.
type targets struct {
	dir  *Dir
	all  map[string]*target
	open []*target // least recently used first
}

// maxOpen bounds the files targets keep open.
const maxOpen = 64

func newTargets(d *Dir) *targets { return &targets{dir: d, all: map[string]*target{}} }

type target struct {
	ts    *targets
	name  string
	write bool
	dirty bool
	f     *os.File
	info  fs.FileInfo // the file's identity
}

// add adds a file already open, for writing.
func (ts *targets) add(name string, f *os.File, write bool) *target {
	fi, _ := f.Stat()
	t := &target{ts: ts, name: name, write: write, dirty: true, f: f, info: fi}
	ts.all[name] = t
	ts.touch(t)
	return t
}

// lazy adds the file at name, found as e, to be opened when first used.
func (ts *targets) lazy(name string, e Entry, write bool) *target {
	t := &target{ts: ts, name: name, write: write, info: e.info}
	ts.all[name] = t
	return t
}

func (ts *targets) touch(t *target) {
	for k, u := range ts.open {
		if u == t {
			ts.open = append(ts.open[:k], ts.open[k+1:]...)
			break
		}
	}
	ts.open = append(ts.open, t)
	for len(ts.open) > maxOpen {
		old := ts.open[0]
		ts.open = ts.open[1:]
		old.shut()
	}
}

// shut closes a target's file, syncing it if written.
func (t *target) shut() error {
	if t.f == nil {
		return nil
	}
	var err error
	if t.dirty {
		err = t.f.Sync()
		t.dirty = false
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	t.f = nil
	return err
}

func (t *target) file() (*os.File, error) {
	if t.f == nil {
		open := t.ts.dir.Open
		if t.write {
			open = t.ts.dir.OpenWrite
		}
		f, e, err := open(t.name)
		if err != nil {
			return nil, err
		}
		if f == nil || (t.info != nil && !os.SameFile(e.info, t.info)) {
			if f != nil {
				f.Close()
			}
			return nil, fmt.Errorf("%s: %w", t.ts.dir.Join(t.name), errSwapped)
		}
		t.f, t.info = f, e.info
	}
	t.ts.touch(t)
	return t.f, nil
}

func (t *target) ReadAt(p []byte, off int64) (int, error) {
	f, err := t.file()
	if err != nil {
		return 0, err
	}
	return f.ReadAt(p, off)
}

func (t *target) WriteAt(p []byte, off int64) (int, error) {
	if !t.write {
		return 0, fmt.Errorf("%s: %w", t.ts.dir.Join(t.name), fs.ErrPermission)
	}
	f, err := t.file()
	if err != nil {
		return 0, err
	}
	t.dirty = true
	return f.WriteAt(p, off)
}

func (t *target) Truncate(size int64) error {
	if !t.write {
		return fmt.Errorf("%s: %w", t.ts.dir.Join(t.name), fs.ErrPermission)
	}
	f, err := t.file()
	if err != nil {
		return err
	}
	t.dirty = true
	return f.Truncate(size)
}

// file returns the open file of the target at name, for what is done to
// it through its descriptor (a name could be swapped for a link between a
// look and a chmod).
func (ts *targets) file(name string) (*os.File, error) { return ts.all[name].file() }

// sync syncs and closes every file written.
func (ts *targets) sync() error {
	var first error
	for _, t := range ts.all {
		if err := t.shut(); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", ts.dir.Join(t.name), err)
		}
	}
	ts.open = nil
	return first
}

func (ts *targets) close() { ts.sync() }
