package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/sigcheck/sigcheck/internal/progress"
	"github.com/sigcheck/sigcheck/tree/manifest"
)

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

// spans turns runs of segments of file i into byte ranges.
func spans(m *manifest.Manifest, i int, runs []manifest.Run) []span {
	out := []span{}
	for _, r := range runs {
		off, _ := m.SegmentRange(i, r.First)
		end, n := m.SegmentRange(i, r.First+r.N-1)
		out = append(out, span{First: r.First, Last: r.First + r.N - 1, Offset: off, Length: end + n - off})
	}
	return out
}

// moved is a run of segments found away from their place, by how many
// bytes (positive: later in the file, after bytes inserted before them).
type moved struct {
	First int   `json:"first_segment"`
	Last  int   `json:"last_segment"`
	Shift int64 `json:"shift"`
}

func (mv moved) String() string {
	segs := fmt.Sprintf("segment %d", mv.First)
	if mv.Last > mv.First {
		segs = fmt.Sprintf("segments %d-%d", mv.First, mv.Last)
	}
	dir, why, n := "later", "inserted", mv.Shift
	if n < 0 {
		dir, why, n = "earlier", "removed", -n
	}
	return fmt.Sprintf("%s found %d byte%s %s than their place (bytes %s before them)", segs, n, plural(int(n)), dir, why)
}

// fileVerdict is what verify and repair say of one file, in text or JSON.
type fileVerdict struct {
	File          string  `json:"file"`
	OK            bool    `json:"ok"`
	Missing       bool    `json:"missing,omitempty"`
	InPlace       string  `json:"in_place,omitempty"` // what is there instead of a regular file
	Size          int64   `json:"size"`               // bytes found (0 when absent)
	ExpectedSize  int64   `json:"expected_size"`      // bytes the manifest says
	Segments      int     `json:"segments"`
	Corrupted     []span  `json:"corrupted"`
	MissingFrom   int64   `json:"missing_from,omitempty"`
	MissingBytes  int64   `json:"missing_bytes,omitempty"`
	AppendedBytes int64   `json:"appended_bytes,omitempty"`
	Moved         []moved `json:"moved,omitempty"`        // segments found elsewhere in the file
	Unchecked     int64   `json:"unchecked,omitempty"`    // segments whose hashes the manifest lost
	RootChecked   bool    `json:"root_checked,omitempty"` // then the file was checked whole by its root
	RootMatches   bool    `json:"root_matches,omitempty"`
	ScanStopped   bool    `json:"scan_stopped,omitempty"`
	Problem       string  `json:"problem,omitempty"`
	FoundAs       string  `json:"found_as,omitempty"` // a missing file found renamed, which repair copies back
	// What repair did.
	CopiedFrom string `json:"copied_from,omitempty"`
	Created    bool   `json:"created,omitempty"`
	Mode       string `json:"mode,omitempty"`
	Repaired   int64  `json:"repaired_segments,omitempty"`
	PutBack    int64  `json:"moved_back_segments,omitempty"`
	Cut        int64  `json:"cut_bytes,omitempty"`
	Owner      string `json:"owner,omitempty"`
	LeftAlone  string `json:"left_alone,omitempty"`
	Written    int64  `json:"written_segments,omitempty"` // before a repair stopped
}

// verdict is what verify and repair say of a set.
type verdict struct {
	Manifest       string         `json:"manifest"`
	Version        int            `json:"version"`
	OK             bool           `json:"ok"`
	ManifestDamage *damageVerdict `json:"manifest_damage,omitempty"`
	Files          []*fileVerdict `json:"files"`
	Repairable     *bool          `json:"repairable,omitempty"`
	Repair         string         `json:"repair,omitempty"` // what the parity can do
	Problem        string         `json:"problem,omitempty"`
	Leftovers      []string       `json:"leftovers,omitempty"` // temporary files of killed repairs

	statuses []*manifest.Status
}

type damageVerdict struct {
	MainCopiesIntact int   `json:"main_copies_intact"`
	MainCopies       int   `json:"main_copies"`
	DamagedBlocks    int   `json:"damaged_hash_blocks"`
	LostHashes       int64 `json:"lost_hashes"`
	DamagedParity    int   `json:"damaged_parity_chunks"`
	ParityChunk      int   `json:"parity_chunk_bytes,omitempty"`
}

// inspect checks every file of the set.
func inspect(ctx context.Context, e *env, s *manifest.Set) (*verdict, error) {
	v := &verdict{Manifest: s.Path, Version: s.Version, OK: true}
	if d := s.Damage; d.Any() || s.Parity > 0 {
		if p, chunk := s.DamagedParity(); d.Any() || p > 0 {
			v.ManifestDamage = &damageVerdict{d.MainCopies, 3, d.NodeBlocks + d.LeafBlocks + d.WeakBlocks, d.LostLeaves, p, chunk}
		}
	}
	bar := progress.New(e.stderr, "checking "+esc(filepath.Base(s.Path)), 0, "B")
	sts, err := s.Check(ctx, barProgress(bar))
	bar.Done()
	if err != nil {
		return nil, err
	}
	v.setStatuses(s, sts)
	v.Leftovers = s.Leftovers()
	return v, nil
}

func (v *verdict) setStatuses(s *manifest.Set, sts []*manifest.Status) {
	v.statuses, v.Files, v.OK = sts, nil, true
	for _, st := range sts {
		fv := fileVerdictOf(s, st)
		v.Files = append(v.Files, fv)
		v.OK = v.OK && fv.OK
	}
}

func fileVerdictOf(s *manifest.Set, st *manifest.Status) *fileVerdict {
	i, rep := st.File, st.Report
	mf := s.Files[i]
	fv := &fileVerdict{File: s.Name(i), ExpectedSize: mf.Size, Segments: mf.Segments, OK: st.Entry.Kind == manifest.Regular && rep.OK()}
	switch st.Entry.Kind {
	case manifest.Missing:
		fv.Missing = true
	case manifest.Other:
		fv.InPlace = st.Entry.What
	default:
		fv.Size = rep.Size
		fv.Corrupted = spans(s.Manifest, i, rep.Corrupted)
		if from, n := rep.Missing(); n > 0 {
			fv.MissingFrom, fv.MissingBytes = from, n
		}
		fv.AppendedBytes = rep.Appended()
		for _, mv := range rep.Moved {
			fv.Moved = append(fv.Moved, moved{mv.First, mv.First + mv.N - 1, mv.Shift(s.Segment)})
		}
		fv.RootChecked, fv.RootMatches, fv.ScanStopped = rep.RootChecked, rep.RootMatches, rep.ScanStopped
		if rep.Foreign() && manifest.Count(rep.Corrupted) > 1 {
			fv.Problem = fmt.Sprintf("every segment differs: is %s the manifest of this file? (it was made for %q)", s.Path, mf.Name)
		}
	}
	if fv.Corrupted == nil {
		fv.Corrupted = []span{}
	}
	fv.Unchecked = manifest.Count(rep.Unchecked)
	return fv
}

func (v *verdict) print(e *env, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(v)
	}
	w := e.stdout
	if d := v.ManifestDamage; d != nil {
		line := fmt.Sprintf("%s: damaged, still usable: %d of %d copies of its main block intact, %d damaged block%s of hashes",
			v.Manifest, d.MainCopiesIntact, d.MainCopies, d.DamagedBlocks, plural(d.DamagedBlocks))
		if d.DamagedParity > 0 {
			line += fmt.Sprintf(", %d damaged chunk%s of parity (of %s each)", d.DamagedParity, plural(d.DamagedParity), sizeWords(int64(d.ParityChunk)))
		}
		if d.LostHashes > 0 {
			hashes := "hashes"
			if d.LostHashes == 1 {
				hashes = "hash"
			}
			line += fmt.Sprintf(", %d segment %s lost", d.LostHashes, hashes)
		}
		emit(w, "%s", line)
	}
	for _, f := range v.Files {
		f.print(w, v.Manifest)
	}
	for _, l := range v.Leftovers {
		emit(w, "%s: a temporary file of a repair that was killed: remove it (a repair makes its own anew)", l)
	}
	for _, line := range []string{v.Repair, v.Problem} {
		if line != "" {
			emit(w, "%s: %s", v.Manifest, line)
		}
	}
	return nil
}

func (f *fileVerdict) print(w io.Writer, manifestPath string) {
	name := f.File
	if f.CopiedFrom != "" {
		emit(w, "%s: missing, found as %s: copied from it (left where it was)", name, f.CopiedFrom)
	}
	if f.Created {
		emit(w, "%s: missing: made anew, mode %s", name, f.Mode)
	}
	if f.LeftAlone != "" {
		emit(w, "%s: left alone: %s", name, f.LeftAlone)
	}
	if f.Written > 0 {
		emit(w, "%s: %d segment%s rebuilt and written before the repair stopped (each checked first)", name, f.Written, plural(int(f.Written)))
	}
	all := fmt.Sprintf("all %d segments", f.Segments)
	if f.Segments == 1 {
		all = "its segment"
	}
	switch {
	case f.OK && f.Repaired > 0:
		emit(w, "%s: repaired %d segment%s from parity; %s now match %s", name, f.Repaired, plural(int(f.Repaired)), all, manifestPath)
	case f.OK && (f.PutBack > 0 || f.Cut > 0 || f.CopiedFrom != "" || f.Created):
		emit(w, "%s: %s now match %s", name, all, manifestPath)
	case f.OK && f.RootChecked:
		emit(w, "%s: OK, %s match %s (%d checked by the file's root: the manifest lost their hashes)", name, all, manifestPath, f.Unchecked)
	case f.OK:
		emit(w, "%s: OK, %s match %s", name, all, manifestPath)
	case f.Missing && f.FoundAs != "" && f.CopiedFrom == "":
		emit(w, "%s: missing (%d byte%s), found as %s (repair copies it back)", name, f.ExpectedSize, plural(int(f.ExpectedSize)), f.FoundAs)
	case f.Missing:
		emit(w, "%s: missing (%d byte%s)", name, f.ExpectedSize, plural(int(f.ExpectedSize)))
	case strings.HasPrefix(f.InPlace, "unreadable"):
		emit(w, "%s: %s: counted as missing (%d byte%s)", name, f.InPlace, f.ExpectedSize, plural(int(f.ExpectedSize)))
	case f.InPlace != "":
		emit(w, "%s: not a regular file but %s: not followed, counted as missing (%d byte%s)", name, f.InPlace, f.ExpectedSize, plural(int(f.ExpectedSize)))
	}
	if f.PutBack > 0 {
		emit(w, "%s: laid out anew: %d segment%s found moved put back in their places", name, f.PutBack, plural(int(f.PutBack)))
	}
	if f.Owner != "" {
		emit(w, "%s: laid out anew, it %s", name, f.Owner)
	}
	if f.Cut > 0 {
		emit(w, "%s: cut %d appended byte%s", name, f.Cut, plural(int(f.Cut)))
	}
	if len(f.Corrupted) > 0 {
		var n int
		for _, s := range f.Corrupted {
			n += s.Last - s.First + 1
		}
		emit(w, "%s: %d of %d segment%s corrupted:", name, n, f.Segments, plural(f.Segments))
		for _, s := range f.Corrupted {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	for _, mv := range f.Moved {
		emit(w, "%s: %s", name, mv)
	}
	if f.ScanStopped {
		emit(w, "%s: the search for moved segments gave up: the manifest's weak sums matched too often where its hashes did not (forged?)", name)
	}
	if f.MissingBytes > 0 && !f.Missing {
		emit(w, "%s: truncated: %d byte%s missing from offset %d (the manifest says %d bytes)",
			name, f.MissingBytes, plural(int(f.MissingBytes)), f.MissingFrom, f.ExpectedSize)
	}
	if f.AppendedBytes > 0 {
		emit(w, "%s: extended: %d byte%s appended at offset %d", name, f.AppendedBytes, plural(int(f.AppendedBytes)), f.ExpectedSize)
	}
	switch {
	case f.RootChecked && !f.RootMatches:
		emit(w, "%s: its root differs from the manifest's: damaged among the %d segment%s whose hashes the manifest lost", name, f.Unchecked, plural(int(f.Unchecked)))
	case f.Unchecked > 0 && !f.RootChecked && !f.Missing && f.InPlace == "":
		emit(w, "%s: %d segment%s not checked: the manifest lost their hashes", name, f.Unchecked, plural(int(f.Unchecked)))
	}
	if f.Problem != "" {
		emit(w, "%s: %s", name, f.Problem)
	}
}

// prepare decides the repair (verify says what it would do) and says in
// the verdict whether it can be done.
func prepare(ctx context.Context, s *manifest.Set, v *verdict, opt manifest.RepairOptions) (*manifest.Prepared, error) {
	p, err := s.Prepare(ctx, v.statuses, opt)
	if err != nil {
		return nil, err
	}
	v.setStatuses(s, v.statuses) // what the scans found
	for i, d := range p.Done {
		v.Files[i].LeftAlone, v.Files[i].FoundAs = d.LeftAlone, d.CopiedFrom
	}
	alone := 0
	for _, d := range p.Done {
		if d.LeftAlone != "" {
			alone++
		}
	}
	ok := p.Err == nil && alone == 0
	v.Repairable = &ok
	if p.Err == nil {
		n := p.Lost()
		v.Repair = fmt.Sprintf("repairable: the parity rebuilds the %d lost segment%s (sigcheck repair)", n, plural(int(n)))
		if n == 0 {
			v.Repair = "repairable without parity (sigcheck repair)"
		}
		if alone > 0 {
			v.Repair = fmt.Sprintf("repairable in part: the parity rebuilds the %d lost segment%s, and repair leaves %d file%s alone, as said above (sigcheck repair)",
				n, plural(int(n)), alone, plural(alone))
		}
	} else {
		v.Repair = "not repairable: " + plain(p.Err.Error())
	}
	return p, nil
}

const verifyHelp = "[FILE|DIR] [MANIFEST], or MANIFEST alone: the manifest is FILE" + manifestSuffix + " (DIR" + manifestSuffix + ")\n" +
	"unless named, and the files are where it says, relative to its directory (a\n" +
	"one-file manifest's file is FILE when given)."

// interrupted turns the context's cancellation by Ctrl-C into the error
// that says so.
func interrupted(ctx context.Context, err error, what string) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return &interruptedError{what}
	}
	return err
}

// openChecked opens the set the arguments name and checks it, under a
// context that Ctrl-C cancels; closeSet releases both.
func openChecked(e *env, pos []string, interruptedWhat string) (ctx context.Context, s *manifest.Set, v *verdict, closeSet func(), err error) {
	if s, err = openSet(pos); err != nil {
		return nil, nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	closeSet = func() {
		stop()
		s.Close()
	}
	if v, err = inspect(ctx, e, s); err != nil {
		closeSet()
		return nil, nil, nil, nil, interrupted(ctx, err, interruptedWhat)
	}
	return ctx, s, v, closeSet, nil
}

func runVerify(e *env, args []string) error {
	fs := flags(e, "verify", "Checks files against their manifest: "+verifyHelp+"\n\n"+
		"Reports, per file, the corrupted segments as byte ranges, the bytes missing from a\n"+
		"truncated file or appended to an extended one (the common part is checked), runs\n"+
		"of segments moved by bytes inserted or removed, a missing file, damage to the\n"+
		"manifest itself, and whether repair can repair it all, and what it would leave\n"+
		"alone. It follows no symlink in the set's directory and opens nothing but\n"+
		"regular files: a symlink, FIFO, device or directory in a file's place, or a file\n"+
		"that cannot be read, counts as the file missing. Names with a backslash or a\n"+
		"control character are escaped as sha256sum escapes them. Exit status 0 when\n"+
		"every file matches, 1 when any does not, 2 when the manifest is unreadable.")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	ctx, s, v, closeSet, err := openChecked(e, pos, "nothing checked to the end")
	if err != nil {
		return err
	}
	defer closeSet()
	if !v.OK {
		if _, err := prepare(ctx, s, v, manifest.RepairOptions{}); err != nil {
			return interrupted(ctx, err, "checked, not planned")
		}
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
		"Checks every file, rebuilds corrupted segments, the tail of a truncated file,\n"+
		"files with bytes inserted or removed, and missing files, checks each rebuilt\n"+
		"segment against the manifest's hashes before writing it, and cuts appended\n"+
		"bytes, as par2 does. A missing file found renamed in its directory (same size,\n"+
		"same first segment) is copied back; the other file stays. A file made anew gets\n"+
		"the mode the manifest kept; one laid out anew keeps its own mode and owner.\n"+
		"Files made or laid out anew are written beside their names and renamed into\n"+
		"place only once the whole repair passed.\n\n"+
		"It writes only inside the set's directory, follows no symlink there, and leaves\n"+
		"alone, saying so: a symlink, FIFO, device or directory in a file's place, or a\n"+
		"file it cannot read; a file of which nothing matches and whose size or name\n"+
		"differs from the manifest's (it may be another file); a file with other hard\n"+
		"links (its intact segments still serve); and, when nothing of any file matches,\n"+
		"the whole set (the wrong manifest). -force writes the last three anyway.\n"+
		"Nothing is changed unless the parity suffices. Exit status 0 when every file\n"+
		"matches at the end, 1 when they cannot all be repaired, 2 for an unreadable\n"+
		"manifest.")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	force := fs.Bool("force", false, "rewrite files that look like others than the manifest's, and files with other hard links")
	memory := fs.Int("m", manifest.DefaultMemory>>20, "bound the rebuild's buffers to `MiB`, as par2's -m")
	pos, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	if *memory < 1 || *memory > 1<<20 {
		return usageErrorf("-m %d: want 1 to %d MiB", *memory, 1<<20)
	}
	ctx, s, v, closeSet, err := openChecked(e, pos, "nothing checked to the end, nothing changed")
	if err != nil {
		return err
	}
	defer closeSet()
	if v.OK {
		return v.print(e, *asJSON)
	}
	p, err := prepare(ctx, s, v, manifest.RepairOptions{Force: *force, Memory: int64(*memory) << 20})
	if err != nil {
		return interrupted(ctx, err, "nothing changed")
	}
	if p.Err != nil {
		v.Problem = "cannot repair, nothing was changed: " + strings.TrimPrefix(v.Repair, "not repairable: ")
		v.Repair = ""
		if err := v.print(e, *asJSON); err != nil {
			return err
		}
		return negativeError{}
	}
	done, err := p.Apply(ctx)
	if err != nil {
		var stopped *manifest.StoppedError
		if !errors.As(err, &stopped) {
			return interrupted(ctx, fmt.Errorf("%w (nothing was changed)", err), "nothing changed")
		}
		f := false
		v.Repairable, v.Repair = &f, ""
		v.Problem = "repair stopped: " + plain(stopped.Err.Error())
		for i, n := range stopped.Written {
			v.Files[i].Written = n
		}
		if err := v.print(e, *asJSON); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return &interruptedError{"stopped after writing what is said above"}
		}
		return negativeError{}
	}
	// Check again what was written: what is reported is what is on disk.
	sts, err := s.Recheck(ctx, v.statuses, done)
	if err != nil {
		return interrupted(ctx, err, "repaired, not checked again")
	}
	after := &verdict{Manifest: v.Manifest, Version: v.Version, ManifestDamage: v.ManifestDamage}
	after.setStatuses(s, sts)
	for i, d := range done {
		f := after.Files[i]
		f.Repaired, f.Cut, f.Created, f.CopiedFrom, f.LeftAlone, f.PutBack, f.Owner = d.Rebuilt, d.Cut, d.Created, d.CopiedFrom, d.LeftAlone, d.Moved, d.Owner
		if d.Mode != 0 || d.Created {
			f.Mode = fmt.Sprintf("%04o", d.Mode)
		}
	}
	if !after.OK {
		after.Problem = "not every file could be repaired: see above"
	}
	if err := after.print(e, *asJSON); err != nil {
		return err
	}
	if !after.OK {
		return negativeError{}
	}
	return nil
}
