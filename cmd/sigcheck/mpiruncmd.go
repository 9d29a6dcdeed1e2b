package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/sigcheck/sigcheck/internal/ranksum"
)

const mpirunHelp = `Runs an unmodified MPI program under Open MPI's mpirun with libsigcheck.so preloaded
into every rank (not into mpirun itself). Each rank then checks what it receives against
what its sender meant: the datatype signature of every message and collective, and with
-check checksum the data bytes too. mpirun gets the library and its settings as -x
arguments right after its name:

  -x LD_PRELOAD=LIB -x SIGCHECK_CHECK=… -x SIGCHECK_ON_ERROR=… -x SIGCHECK_SUMMARY=DIR
  -x GODEBUG=asyncpreemptoff=1 (after any GODEBUG of yours: Go's preemption signal would
     interrupt the program's system calls)

The program's standard input and output are its own; sigcheck writes to standard error
only: each finding as a rank makes it (lines starting "sigcheck:"), and when the job ends,
what every rank checked and found. The exit status is mpirun's: 86 means sigcheck ended
the job at its first finding (-on-error abort), which also leaves the ranks no time to
write their summaries.

The library is -lib, else $SIGCHECK_LIB, else libsigcheck.so beside the sigcheck
executable, else, in a clone of this module, built into the user cache directory (go's
build cache makes that quick after the first time). To build it by hand (cgo and Open
MPI's headers):

  go build -buildmode=c-shared -tags mpi -o libsigcheck.so ./cmd/libsigcheck

Example:

  sigcheck mpirun -on-error report -- mpirun -np 4 ./app input.dat`

// launchers are the names of the commands that take Open MPI's -x: the
// library's settings reach the ranks in no other way.
var launchers = map[string]bool{"mpirun": true, "mpiexec": true, "orterun": true}

// libBuild is the command that builds the library, said wherever the
// library is missing.
const libBuild = "go build -buildmode=c-shared -tags mpi -o libsigcheck.so ./cmd/libsigcheck"

// modulePath is this module's, to tell a clone that can build the library.
const modulePath = "github.com/sigcheck/sigcheck"

// mpirunSettings are what the ranks get besides the library, as the
// environment variables that cmd/libsigcheck reads at MPI_Init.
type mpirunSettings struct {
	check, onError string
	inject, seed   string // "" when not given: the library's defaults hold
	summaryDir     string
}

// exitStatus passes a child's exit status through runIO unchanged, so
// that a job's scripts see mpirun's status as if sigcheck were not there.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func runMpirun(e *env, args []string) error {
	fs := flags(e, "mpirun", mpirunHelp)
	check := fs.String("check", "types", "what the ranks check (`mode`): types (datatype signatures), checksum (the data bytes too), repair (and a corrupt message is fetched again from its sender before the receive returns)")
	onError := fs.String("on-error", "abort", "what to do at a finding (`action`): abort (end the job, exit 86) or report (run on, list the findings at the end)")
	lib := fs.String("lib", "", "`PATH` of libsigcheck.so (default: $SIGCHECK_LIB, beside sigcheck, or built in this clone)")
	inject := fs.Float64("inject", 0, "the `rate`, 0 to 1, at which received messages get one bit flipped, for -check checksum to catch")
	seed := fs.Uint64("seed", 1, "the `seed` of -inject's faults")
	summary := fs.String("summary", "", "also write the merged summary, each rank's row as it wrote it, to `FILE.json`")
	flagArgs, command, err := cutCommand(args)
	if err != nil {
		return err
	}
	pos, err := parse(fs, flagArgs, -1)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("%q: the command goes after --: sigcheck mpirun [flags] -- mpirun -np 4 ./app", pos[0])
	}
	set, err := mpirunSettingsOf(fs, *check, *onError, *inject, *seed)
	if err != nil {
		return err
	}
	if err := checkLauncher(command); err != nil {
		return err
	}
	if err := checkSummaryPath(*summary); err != nil {
		return err
	}
	path, err := findLib(e, *lib)
	if err != nil {
		return err
	}
	if strings.ContainsAny(path, " :") {
		return fmt.Errorf("%s: LD_PRELOAD splits paths at spaces and colons; move the library to a path without them", path)
	}
	return launch(e, command, path, set, *summary)
}

// cutCommand splits the arguments at "--" into sigcheck's flags and the
// mpirun command. Without "--" it says where the command went wrong
// rather than let the flag parser stumble over mpirun's own flags.
func cutCommand(args []string) (flagArgs, command []string, err error) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:], nil
	}
	for _, a := range args {
		if launchers[filepath.Base(a)] {
			return nil, nil, usageErrorf("put -- before %s: sigcheck mpirun [flags] -- %s -np 4 ./app", a, a)
		}
	}
	return args, nil, nil
}

// mpirunSettingsOf checks the flags' values as the library would, so
// that a mistake costs one line here instead of an aborted job.
func mpirunSettingsOf(fs *flag.FlagSet, check, onError string, inject float64, seed uint64) (mpirunSettings, error) {
	set := mpirunSettings{check: check, onError: onError}
	switch check {
	case "types", "checksum", "repair":
	default:
		return set, usageErrorf("-check %s: want types, checksum or repair", check)
	}
	if onError != "abort" && onError != "report" {
		return set, usageErrorf("-on-error %s: want abort or report", onError)
	}
	if inject < 0 || inject > 1 {
		return set, usageErrorf("-inject %v: want a probability from 0 to 1", inject)
	}
	if inject > 0 && check == "types" {
		return set, usageErrorf("-inject flips data bits, which only -check checksum (or repair) looks at")
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "inject":
			set.inject = strconv.FormatFloat(inject, 'g', -1, 64)
		case "seed":
			set.seed = strconv.FormatUint(seed, 10)
		}
	})
	return set, nil
}

func checkLauncher(command []string) error {
	if len(command) == 0 {
		return usageErrorf("no command: want sigcheck mpirun [flags] -- mpirun -np 4 ./app")
	}
	if !launchers[filepath.Base(command[0])] {
		return usageErrorf("%q is not mpirun, mpiexec or orterun: the library and its settings reach the ranks through Open MPI's -x", command[0])
	}
	return nil
}

// checkSummaryPath refuses a -summary file that could not be written,
// before the job runs rather than after.
func checkSummaryPath(path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageErrorf("-summary %s: no directory %s", path, dir)
	}
	return nil
}

// mpirunArgs is the command with the library and its settings inserted
// right after mpirun's name, where every launcher takes its options (the
// program and its arguments come last). godebug is the user's GODEBUG.
func mpirunArgs(command []string, lib string, set mpirunSettings, godebug string) []string {
	vars := []string{"LD_PRELOAD=" + lib, "SIGCHECK_CHECK=" + set.check, "SIGCHECK_ON_ERROR=" + set.onError,
		"SIGCHECK_SUMMARY=" + set.summaryDir}
	if set.inject != "" {
		vars = append(vars, "SIGCHECK_INJECT="+set.inject)
	}
	if set.seed != "" {
		vars = append(vars, "SIGCHECK_SEED="+set.seed)
	}
	vars = append(vars, "GODEBUG="+withAsyncPreemptOff(godebug))
	out := []string{command[0]}
	for _, v := range vars {
		out = append(out, "-x", v)
	}
	return append(out, command[1:]...)
}

// withAsyncPreemptOff adds asyncpreemptoff=1 to a GODEBUG value, last,
// since the last setting of a key wins. The library's Go runtime would
// otherwise preempt with SIGURG, and a C program's system calls that the
// signal interrupts fail with EINTR where the program does not expect it.
func withAsyncPreemptOff(godebug string) string {
	const off = "asyncpreemptoff=1"
	if godebug == "" {
		return off
	}
	items := strings.Split(godebug, ",")
	for i := len(items) - 1; i >= 0; i-- {
		if k, _, _ := strings.Cut(strings.TrimSpace(items[i]), "="); k == "asyncpreemptoff" {
			if strings.TrimSpace(items[i]) == off {
				return godebug
			}
			break
		}
	}
	return godebug + "," + off
}

// findLib says which library to preload: the one asked for, else the
// one installed beside sigcheck, else this clone's, built.
func findLib(e *env, given string) (string, error) {
	if given != "" {
		return existingLib("-lib "+given, given)
	}
	if p := os.Getenv("SIGCHECK_LIB"); p != "" {
		return existingLib("SIGCHECK_LIB="+p, p)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "libsigcheck.so")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if root, ok := moduleRoot(); ok {
		return buildLib(e, root)
	}
	return "", fmt.Errorf("no libsigcheck.so: give -lib PATH, set SIGCHECK_LIB, put it beside sigcheck, or run in a clone of %s; "+
		"there, %s builds it (cgo and Open MPI's headers)", modulePath, libBuild)
}

// existingLib makes p absolute, since the ranks may start elsewhere, and
// says plainly when it is not there.
func existingLib(what, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s: no such file (%s builds it)", what, libBuild)
	case err != nil:
		return "", fmt.Errorf("%s: %w", what, err)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s: not a file", what)
	}
	return abs, nil
}

// moduleRoot is the root of the clone of this module that the current
// directory is in, if it is in one: there the library can be built.
func moduleRoot() (string, bool) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", false
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", false
	}
	b, err := os.ReadFile(gomod)
	if err != nil || moduleLine(b) != modulePath {
		return "", false
	}
	return filepath.Dir(gomod), true
}

// moduleLine is the module path that a go.mod declares.
func moduleLine(gomod []byte) string {
	for l := range strings.SplitSeq(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest, _, _ = strings.Cut(rest, "//")
			return strings.Trim(strings.TrimSpace(rest), `"`+"`")
		}
	}
	return ""
}

// buildLib builds the clone's library into the user cache directory. It
// builds beside the old library and renames over it, so that a job of
// another sigcheck mpirun that is loading the old one meanwhile never
// sees a half-written file; and it speaks only when it builds anew.
func buildLib(e *env, root string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no libsigcheck.so and nowhere to build it (%v): give -lib PATH", err)
	}
	dir := filepath.Join(cache, "sigcheck")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, "libsigcheck.so")
	old, _ := os.ReadFile(dst)
	if old == nil {
		fmt.Fprintf(e.stderr, "sigcheck: building %s from %s (go build -buildmode=c-shared -tags mpi)\n", dst, root)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "libsigcheck.so")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-tags", "mpi", "-o", out, "./cmd/libsigcheck")
	build.Dir, build.Stdout, build.Stderr = root, e.stderr, e.stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building libsigcheck.so in %s: %v (go build's messages above; it needs cgo and Open MPI's headers)", root, err)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		return "", err
	}
	if bytes.Equal(old, built) {
		return dst, nil
	}
	if old != nil {
		fmt.Fprintf(e.stderr, "sigcheck: rebuilt %s: the library's sources in %s changed\n", dst, root)
	}
	return dst, os.Rename(out, dst)
}

// launch runs the job with the library, then says what the ranks found.
// The summary's file is written and the ranks' directory removed before
// anything is printed, since a closed standard error (sigcheck mpirun …
// 2>&1 | head) ends the process at its first write.
func launch(e *env, command []string, lib string, set mpirunSettings, summaryFile string) error {
	dir, err := summaryDir()
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	set.summaryDir = dir
	args := mpirunArgs(command, lib, set, os.Getenv("GODEBUG"))
	status, err := runJob(e, args)
	if err != nil {
		return err
	}
	rows, bad := readSummaries(dir)
	os.RemoveAll(dir)
	m := mergeSummaries(args, status, rows)
	if summaryFile != "" {
		if err := writeJSONFile(summaryFile, m); err != nil {
			bad = append(bad, fmt.Errorf("-summary: %v", err))
			status = cmp.Or(status, exitUsage)
		}
	}
	for _, err := range bad {
		fmt.Fprintf(e.stderr, "sigcheck: %v\n", err)
	}
	writeMpirunSummary(e.stderr, m, rows, dir, summaryFile != "")
	if status != 0 {
		return &exitStatus{status}
	}
	return nil
}

// runJob runs mpirun with the program's standard streams, and the
// signals that would have stopped sigcheck passed on to it instead.
func runJob(e *env, args []string) (int, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return runForwarding(cmd, sigs)
}

// summaryDir makes the directory the ranks write their summaries into,
// in the current directory, since on several nodes that is usually a
// file system they share, where a node's /tmp is its own.
func summaryDir() (string, error) {
	dir, err := os.MkdirTemp(".", ".sigcheck-mpirun-")
	if err != nil {
		dir, err = os.MkdirTemp("", "sigcheck-mpirun-")
	}
	if err != nil {
		return "", fmt.Errorf("no directory for the ranks' summaries: %w", err)
	}
	return filepath.Abs(dir)
}

// runForwarding runs cmd to its end and passes on the signals that
// arrive meanwhile, so that a job told to stop (Ctrl-C, a scheduler's
// SIGTERM) stops as mpirun stops it, and sigcheck still reads what the
// ranks wrote. The status is the child's exit code, or 128 plus the
// signal that killed it, as a shell reports it.
func runForwarding(cmd *exec.Cmd, sigs <-chan os.Signal) (int, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s)
		case err := <-done:
			return exitCode(cmd, err)
		}
	}
}

func exitCode(cmd *exec.Cmd, err error) (int, error) {
	var xe *exec.ExitError
	if err != nil && !errors.As(err, &xe) {
		return 0, err
	}
	ps := cmd.ProcessState
	if ws, ok := ps.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	}); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ps.ExitCode(), nil
}

// rankSummary is the rank-N.json that cmd/libsigcheck writes at
// MPI_Finalize (package ranksum), with the bytes as written kept for
// -summary, so that fields added there later still reach the file.
type rankSummary struct {
	ranksum.Summary
	raw json.RawMessage
}

type rankFinding = ranksum.Finding

// readSummaries reads every rank-N.json in dir, in rank order. A file
// that does not parse (a rank killed while writing it) is an error of
// its own; its rank counts as one that wrote none.
func readSummaries(dir string) ([]rankSummary, []error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "rank-*.json"))
	var (
		rows []rankSummary
		bad  []error
	)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		var s rankSummary
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %v", filepath.Base(p), err))
			continue
		}
		s.raw = bytes.TrimSpace(b)
		rows = append(rows, s)
	}
	slices.SortFunc(rows, func(a, b rankSummary) int { return cmp.Compare(a.Rank, b.Rank) })
	return rows, bad
}

// mpirunSummary is the job's summary: totals over the ranks that wrote
// one, which ranks did not, and each rank's row as it wrote it.
type mpirunSummary struct {
	Command    []string          `json:"command"`
	Exit       int               `json:"exit"`
	Ranks      int               `json:"ranks"` // the job's size as the ranks saw it; 0 when none wrote
	Reported   int               `json:"reported"`
	Missing    []int             `json:"missing"`
	Mode       string            `json:"mode"`
	Checked    map[string]uint64 `json:"checked"`
	Unchecked  map[string]uint64 `json:"unchecked"`
	Undecoded  map[string]int    `json:"undecoded,omitempty"`
	Mismatches uint64            `json:"mismatches"`
	Corrupt    uint64            `json:"corrupt"`
	Injected   uint64            `json:"injected"`
	Repaired   uint64            `json:"repaired"`
	Unrepaired uint64            `json:"unrepaired"`
	Findings   int               `json:"findings"`   // kept in the rows
	Suppressed int               `json:"suppressed"` // counted, not kept
	Rows       []json.RawMessage `json:"rows"`
}

func mergeSummaries(command []string, status int, rows []rankSummary) *mpirunSummary {
	m := &mpirunSummary{Command: command, Exit: status, Reported: len(rows), Missing: []int{},
		Checked: map[string]uint64{}, Unchecked: map[string]uint64{}, Rows: []json.RawMessage{}}
	seen := map[int]bool{}
	for _, r := range rows {
		m.Ranks = max(m.Ranks, r.Size, r.Rank+1)
		m.Mode = cmp.Or(m.Mode, r.Mode)
		if r.Mode != m.Mode {
			m.Mode = "mixed"
		}
		addCounts(m.Checked, r.Checked)
		addCounts(m.Unchecked, r.Unchecked)
		for why, n := range r.Undecoded {
			if m.Undecoded == nil {
				m.Undecoded = map[string]int{}
			}
			m.Undecoded[why] += n
		}
		m.Mismatches += r.Mismatches
		m.Corrupt += r.Corrupt
		m.Injected += r.Injected
		m.Repaired += r.Repaired
		m.Unrepaired += r.Unrepaired
		m.Findings += len(r.Findings)
		m.Suppressed += r.Suppressed
		m.Rows = append(m.Rows, r.raw)
		seen[r.Rank] = true
	}
	for k := range m.Ranks {
		if !seen[k] {
			m.Missing = append(m.Missing, k)
		}
	}
	return m
}

func addCounts(to, from map[string]uint64) {
	for k, n := range from {
		to[k] += n
	}
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// callOrder is the library's order of call kinds (its callNames), which
// the table's columns follow; the first three are point-to-point.
var callOrder = []string{"send", "recv", "sendrecv", "bcast", "reduce", "allreduce", "scan",
	"gather", "scatter", "allgather", "alltoall", "other"}

// maxShownFindings and maxRows keep the end of a big job's output to a
// screen or two; -summary keeps everything.
const (
	maxShownFindings = 20
	maxRows          = 32
)

// writeMpirunSummary prints the job's summary, each line begun as the
// library begins its own: a clean run in a line or two; otherwise each
// rank's row, then the findings, then the ranks that wrote nothing.
func writeMpirunSummary(w io.Writer, m *mpirunSummary, rows []rankSummary, dir string, toFile bool) {
	var b strings.Builder
	if len(rows) > 0 {
		fmt.Fprintln(&b, headline(m))
		if !clean(m) {
			writeRankTable(&b, m, rows)
		}
		if line := uncheckedLine(m); line != "" {
			fmt.Fprintln(&b, line)
		}
		if line := undecodedLine(m); line != "" {
			fmt.Fprintln(&b, line)
		}
		writeFindings(&b, m, rows, toFile)
	}
	if line := missingLine(m, dir); line != "" {
		fmt.Fprintln(&b, line)
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if l != "" {
			fmt.Fprintln(w, "sigcheck: "+l)
		}
	}
}

func clean(m *mpirunSummary) bool {
	return m.Mismatches == 0 && m.Corrupt == 0 && m.Findings == 0 && len(m.Missing) == 0
}

// headline is the run in one line: how many ranks, what they checked,
// what they found.
func headline(m *mpirunSummary) string {
	var p2p, coll uint64
	for k, n := range m.Checked {
		if k == "send" || k == "recv" || k == "sendrecv" {
			p2p += n
		} else {
			coll += n
		}
	}
	ranks := counted(uint64(m.Ranks), "rank")
	if len(m.Missing) > 0 {
		ranks = fmt.Sprintf("%d of %d ranks", m.Reported, m.Ranks)
	}
	var checked []string
	if p2p > 0 {
		checked = append(checked, counted(p2p, "message"))
	}
	if coll > 0 {
		checked = append(checked, counted(coll, "collective call"))
	}
	what := "nothing checked"
	if len(checked) > 0 {
		what = strings.Join(checked, " and ") + " checked"
	}
	return fmt.Sprintf("%s, %s: %s, %s", ranks, m.Mode, what, foundPhrase(m))
}

func foundPhrase(m *mpirunSummary) string {
	var found []string
	if m.Mismatches > 0 {
		found = append(found, countedAs(m.Mismatches, "type mismatch", "type mismatches"))
	}
	if m.Corrupt > 0 {
		found = append(found, counted(m.Corrupt, "corrupt message"))
	}
	if m.Mode == "repair" && m.Corrupt > 0 {
		found = append(found, fmt.Sprintf("%d repaired", m.Repaired))
		if m.Unrepaired > 0 {
			found = append(found, fmt.Sprintf("%d not repaired", m.Unrepaired))
		}
	}
	if len(found) == 0 {
		found = append(found, "nothing found")
	}
	s := strings.Join(found, ", ")
	if m.Injected > 0 {
		s += fmt.Sprintf(" (-inject flipped a bit in %s)", counted(m.Injected, "message"))
	}
	return s
}

func counted(n uint64, noun string) string { return countedAs(n, noun, noun+"s") }

func countedAs(n uint64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeRankTable writes a row per rank, with a column for each kind of
// call that some rank checked. Past maxRows ranks, only the rows that
// found something or left calls unchecked are shown.
func writeRankTable(b *strings.Builder, m *mpirunSummary, rows []rankSummary) {
	kinds := callKinds(m.Checked)
	checksum := m.Mode != "types"
	head := append([]string{"rank"}, kinds...)
	head = append(head, "mismatches")
	if checksum {
		head = append(head, "corrupt", "injected")
	}
	repair := m.Mode == "repair"
	if repair {
		head = append(head, "repaired", "unrepaired")
	}
	unchecked := len(m.Unchecked) > 0
	if unchecked {
		head = append(head, "unchecked")
	}
	cells := [][]string{head}
	hidden := 0
	for _, r := range rows {
		skipped := sum(r.Unchecked)
		if len(rows) > maxRows && r.Mismatches == 0 && r.Corrupt == 0 && skipped == 0 {
			hidden++
			continue
		}
		row := []string{strconv.Itoa(r.Rank)}
		for _, k := range kinds {
			row = append(row, strconv.FormatUint(r.Checked[k], 10))
		}
		row = append(row, strconv.FormatUint(r.Mismatches, 10))
		if checksum {
			row = append(row, strconv.FormatUint(r.Corrupt, 10), strconv.FormatUint(r.Injected, 10))
		}
		if repair {
			row = append(row, strconv.FormatUint(r.Repaired, 10), strconv.FormatUint(r.Unrepaired, 10))
		}
		if unchecked {
			row = append(row, strconv.FormatUint(skipped, 10))
		}
		cells = append(cells, row)
	}
	right := map[int]bool{}
	for i := range head {
		right[i] = true
	}
	table(b, cells, right)
	if hidden > 0 {
		fmt.Fprintf(b, "(and %d ranks that found nothing and checked everything)\n", hidden)
	}
}

// callKinds are the kinds of call in counts, in the library's order,
// any it adds later after them.
func callKinds(counts map[string]uint64) []string {
	var kinds []string
	for _, k := range callOrder {
		if counts[k] > 0 {
			kinds = append(kinds, k)
		}
	}
	var extra []string
	for k := range counts {
		if !slices.Contains(callOrder, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	return append(kinds, extra...)
}

func sum(counts map[string]uint64) uint64 {
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n
}

// uncheckedLine says which calls went through unchecked and why, most
// first: a clean run that checked little is not a clean bill of health.
func uncheckedLine(m *mpirunSummary) string {
	if len(m.Unchecked) == 0 {
		return ""
	}
	keys := sortedByCount(m.Unchecked)
	parts := make([]string, len(keys))
	for i, k := range keys {
		call, why, ok := strings.Cut(k, ": ")
		if !ok {
			call, why = k, "?"
		}
		parts[i] = fmt.Sprintf("%d %s (%s)", m.Unchecked[k], call, why)
	}
	return "unchecked: " + strings.Join(parts, ", ")
}

func undecodedLine(m *mpirunSummary) string {
	if len(m.Undecoded) == 0 {
		return ""
	}
	counts := map[string]uint64{}
	for k, n := range m.Undecoded {
		counts[k] = uint64(n)
	}
	var parts []string
	for _, k := range sortedByCount(counts) {
		times := "once"
		if counts[k] > 1 {
			times = fmt.Sprintf("%d times", counts[k])
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", k, times))
	}
	return "datatypes not decoded: " + strings.Join(parts, "; ")
}

func sortedByCount(counts map[string]uint64) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	return keys
}

// writeFindings lists the findings as the library reported them while
// the job ran: where, then what, on the line below.
func writeFindings(b *strings.Builder, m *mpirunSummary, rows []rankSummary, toFile bool) {
	shown := 0
	for _, r := range rows {
		for _, f := range r.Findings {
			if shown == maxShownFindings {
				break
			}
			shown++
			fmt.Fprintln(b, findingWhere(f, r.Rank))
			if d := strings.Join(strings.Fields(f.Detail), " "); d != "" {
				fmt.Fprintln(b, "  "+d)
			}
		}
	}
	more := m.Findings - shown
	switch {
	case more > 0 && toFile:
		fmt.Fprintf(b, "%s more in the -summary file\n", counted(uint64(more), "finding"))
	case more > 0:
		fmt.Fprintf(b, "%s more: -summary FILE.json keeps them all\n", counted(uint64(more), "finding"))
	}
	if m.Suppressed > 0 {
		fmt.Fprintf(b, "%s more counted but not kept (a rank keeps its first ones only)\n", counted(uint64(m.Suppressed), "finding"))
	}
}

// findingWhere names the place as the library's own report line does;
// the world rank too when the communicator is another.
func findingWhere(f rankFinding, world int) string {
	s := fmt.Sprintf("%s: %s on rank %d of %s", f.Kind, f.Call, f.Rank, f.Comm)
	if f.Comm != "MPI_COMM_WORLD" && f.Rank != world {
		s += fmt.Sprintf(" (world rank %d)", world)
	}
	switch {
	case f.Tag >= 0:
		s += fmt.Sprintf(", from rank %d, tag %d", f.Peer, f.Tag)
	case f.Peer >= 0:
		s += fmt.Sprintf(", against rank %d", f.Peer)
	}
	if f.Element >= 0 {
		s += fmt.Sprintf(", element %d", f.Element)
	}
	return s
}

// missingLine names the ranks that wrote no summary, and the likely
// reason, which mpirun's exit status mostly tells.
func missingLine(m *mpirunSummary, dir string) string {
	var who string
	switch {
	case m.Reported == 0:
		who = "no rank wrote a summary"
	case len(m.Missing) > 0:
		who = fmt.Sprintf("%s of %d wrote no summary", rankList(m.Missing), m.Ranks)
	default:
		return ""
	}
	switch {
	case m.Exit == 86:
		return who + ": sigcheck ended the job at its first finding (mpirun's exit status 86; the sigcheck lines above say what it found; -on-error report lets the job run on)"
	case m.Exit != 0:
		return fmt.Sprintf("%s: mpirun exited %d before they reached MPI_Finalize", who, m.Exit)
	case m.Reported == 0:
		return who + ": the library never reached MPI_Finalize in a rank (a program that does not call it, is linked statically, or is started by a script that resets LD_PRELOAD, runs unchecked)"
	}
	return fmt.Sprintf("%s: they ended without MPI_Finalize, or ran on nodes that do not share %s", who, filepath.Dir(dir))
}

// rankList writes ranks as ranges: "ranks 2-5, 9", "rank 3".
func rankList(ranks []int) string {
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ranks[i], ranks[j]))
		} else {
			parts = append(parts, strconv.Itoa(ranks[i]))
		}
		i = j + 1
	}
	if len(ranks) == 1 {
		return "rank " + parts[0]
	}
	return "ranks " + strings.Join(parts, ", ")
}
