// Command sigcheck checks that what moves between processes is what was
// meant: datatype signatures that sender and receiver compare, checksums,
// and Merkle trees that find and repair corrupted segments of files.
//
// Usage:
//
//	sigcheck <command> [flags] [arguments]
//
// Run sigcheck help for the commands, sigcheck <command> -h for one.
// Results go to standard output, errors and progress to standard error.
// The exit status is 0 for success, 1 for a negative answer (a mismatch),
// and 2 for bad input or usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"
)

type command struct {
	name    string
	usage   string // arguments after the flags
	summary string
	run     func(env *env, args []string) error
}

// env is what a command reads and writes; tests give it buffers.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// commands lists the subcommands in the order help shows them. A command
// that lives in a file of its own may add itself from that file's init
// (commands = append(commands, &command{…})): package-level variables are
// set before any init runs, so such commands follow these.
var commands []*command

func init() {
	commands = append([]*command{
		{"demo", "", "show what sigcheck catches, on built-in data, in a few seconds", runDemo},
		{"sig", "TYPE", "print the signature of a datatype", runSig},
		{"match", "SEND RECV", "check that a send and a receive datatype match by MPI's rules", runMatch},
		{"quality", "", "measure how well each signature algebra spreads Gropp's panel (the paper's Table 1)", runQuality},
		{"types", "", "list the predefined datatypes and the datatype syntax", runTypes},
		{"csum", "[FILE|-]...", "print checksums of files; list the algorithms and what they detect", runCsum},
		{"tree", "FILE...|-", "print the Merkle root of files (the paper's reference tree, hash for hash)", runTree},
		{"manifest", "FILE|DIR...", "write a recovery set, like par2's: each file's Merkle tree, parity shared across them", runManifest},
		{"verify", "[FILE|DIR] [MANIFEST]", "check files against their manifest: corrupted byte ranges, missing or appended bytes", runVerify},
		{"repair", "[FILE|DIR] [MANIFEST]", "rebuild damaged, truncated, missing files from their manifest's parity, checked", runRepair},
		{"tune", "", "measure the checksums on this machine and store the fastest as the default", runTune},
		{"run", "latency|bw|bcast|allgather", "measure transfers between ranks, OSU-style: each protection beside none, faults on demand", runRun},
		{"mpirun", "-- mpirun [MPIRUN FLAGS] PROGRAM [ARGS]", "run an unmodified MPI program with libsigcheck.so: every message's datatype checked, a summary at the end", runMpirun},
		{"bench", "csum", "print the bandwidth table of the checksums, with read and copy baselines", runBench},
	}, commands...)
}

func main() {
	os.Exit(runIO(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK          = 0
	exitNegative    = 1   // the check ran and the answer is no
	exitUsage       = 2   // bad input or usage
	exitInterrupted = 130 // stopped by Ctrl-C, as a shell reports a process killed by SIGINT
)

// negativeError is an answer, not a failure: printed already, exit 1.
type negativeError struct{}

func (negativeError) Error() string { return "negative" }

// usageError is a bad flag or argument. It prints as one line that says
// what is wrong and where the help is, never the whole usage (that is
// for -h): a typo should not scroll the mistake off the screen.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usageErrorf returns a usageError; commands use it for flag values and
// arguments they reject after parsing ("-ranks 3: bw runs between 2").
func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// interruptedError says that Ctrl-C stopped a command: what it measured
// so far is printed already; exit 130.
type interruptedError struct{ what string }

func (e *interruptedError) Error() string { return "interrupted: " + e.what }

func run(args []string, stdout, stderr io.Writer) int {
	return runIO(args, strings.NewReader(""), stdout, stderr)
}

func runIO(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "sigcheck: no command (sigcheck -h lists them)")
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c := find(args[1]); c != nil {
				return runIO([]string{c.name, "-h"}, stdin, stdout, stderr)
			}
		}
		usage(stdout)
		return exitOK
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, version())
		return exitOK
	}
	c := find(name)
	if c == nil {
		fmt.Fprintf(stderr, "sigcheck: unknown command %q (sigcheck -h lists them)\n", name)
		return exitUsage
	}
	err := c.run(e, args[1:])
	var (
		ue *usageError
		ie *interruptedError
		st *exitStatus
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &st):
		return st.code // a child's, passed through (sigcheck mpirun)
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(negativeError)):
		return exitNegative
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "sigcheck %s: %s (sigcheck %s -h for help)\n", c.name, esc(plain(ue.msg)), c.name)
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "sigcheck %s: %s\n", c.name, esc(plain(ie.Error())))
		return exitInterrupted
	}
	// One line, whatever names the message holds (escaped as report lines
	// escape them).
	fmt.Fprintf(stderr, "sigcheck %s: %s\n", c.name, esc(plain(err.Error())))
	return exitUsage
}

// version says what the binary was built from, in one line:
//
//	sigcheck devel+ea4a522 (2026-11-25, modified) go1.26.8 linux/amd64
//
// from go build or go install in a clone (changed since that commit);
// "sigcheck v1.2.3 go1.26.8 linux/amd64" from go install …@v1.2.3; and
// "sigcheck devel (no commit recorded: …)" from go run, which records no
// commit (nor does -buildvcs=false). go build and go install record
// vcs.revision, vcs.time and vcs.modified; a build from the module proxy
// has only a pseudo-version, which holds the commit and its time too.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "sigcheck (no build information)"
	}
	return versionLine(bi)
}

// pseudo matches a pseudo-version's time and commit (vX.0.0-yyyymmddhhmmss-abcdefabcdef,
// vX.Y.Z-pre.0.yyyymmddhhmmss-…, vX.Y.(Z+1)-0.yyyymmddhhmmss-…), with the
// +dirty that go build adds for a modified checkout.
var pseudo = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-(?:.*\.)?([0-9]{14})-([0-9a-f]{12})(\+dirty)?$`)

func versionLine(bi *debug.BuildInfo) string {
	var rev, date string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				date = t.UTC().Format(time.DateOnly)
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	v := bi.Main.Version
	if m := pseudo.FindStringSubmatch(v); m != nil {
		if rev == "" {
			rev = m[2]
		}
		if t, err := time.Parse("20060102150405", m[1]); err == nil && date == "" {
			date = t.Format(time.DateOnly)
		}
		modified = modified || m[3] != ""
		v = ""
	} else if base, dirty := strings.CutSuffix(v, "+dirty"); dirty {
		v, modified = base, true // a tagged commit, changed
	}
	if v == "(devel)" {
		v = ""
	}
	var b strings.Builder
	b.WriteString("sigcheck ")
	switch {
	case v != "":
		b.WriteString(v) // a release
	case rev != "":
		b.WriteString("devel+" + rev[:min(7, len(rev))])
	default:
		b.WriteString("devel (no commit recorded: go run, or -buildvcs=false)")
	}
	if rev != "" || v != "" {
		var notes []string
		if date != "" {
			notes = append(notes, date)
		}
		if modified {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			b.WriteString(" (" + strings.Join(notes, ", ") + ")")
		}
	}
	fmt.Fprintf(&b, " %s %s/%s", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// packageNames are the library's packages, whose names begin their error
// messages (sig: column 3: …) as Go's convention has it. The command names
// itself instead, so they are dropped: "sigcheck sig: column 3: …", not
// "sigcheck sig: sig: column 3: …".
var packageNames = map[string]bool{"sig": true, "csum": true, "tree": true, "manifest": true, "channel": true, "gf": true,
	"osu": true, "wire": true, "replicate": true, "encrypt": true, "mpi": true}

// plain drops the package prefixes from an error message, wherever a
// wrapping put them ("RECV: sig: column 3" → "RECV: column 3").
func plain(msg string) string {
	parts := strings.Split(msg, ": ")
	out := parts[:0]
	for i, p := range parts {
		if i < len(parts)-1 && packageNames[p] {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

func find(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "sigcheck checks that data moved between processes is what was sent, and what the receiver expects.")
	fmt.Fprintln(w, "\nUsage: sigcheck <command> [flags] [arguments]\n\nCommands:")
	// The summaries start one column past the longest name, whichever
	// file added it (enc-allgather and redundancy come from their own).
	width := 0
	for _, c := range commands {
		width = max(width, utf8.RuneCountInString(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun sigcheck <command> -h for the flags of one command, sigcheck -version for the version.")
}

// flags returns a FlagSet for c whose help (-h) names the command and
// describes it. The help goes to standard output, as requested output.
func flags(e *env, c string, describe string) *flag.FlagSet {
	fs := flag.NewFlagSet("sigcheck "+c, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		cmd := find(c)
		w := e.stdout
		fmt.Fprintf(w, "Usage: sigcheck %s [flags] %s\n\n%s\n", c, cmd.usage, describe)
		var has bool
		fs.VisitAll(func(*flag.Flag) { has = true })
		if has {
			fmt.Fprintln(w, "\nFlags:")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	return fs
}

// parse parses flags that may come before, between or after the
// positional arguments ("sigcheck sig vector(…) -count 4"), and checks
// that there are exactly want of the latter (want < 0: any number).
// On -h it prints the help and returns flag.ErrHelp (exit 0); on a bad
// flag or count, a one-line usageError. The flag package calls fs.Usage
// on errors too, and so may a command that rejects its arguments, so
// from here on fs.Usage prints nothing: the full help is only for -h.
func parse(fs *flag.FlagSet, args []string, want int) ([]string, error) {
	help := fs.Usage
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				help()
				return nil, err
			}
			return nil, &usageError{flagMessage(err)}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if want == 0 && len(pos) > 0 {
		return nil, usageErrorf("takes no arguments; got %q", pos)
	}
	if want >= 0 && len(pos) != want {
		form := ""
		if c := find(strings.TrimPrefix(fs.Name(), "sigcheck ")); c != nil && c.usage != "" {
			form = " (" + c.usage + ")"
		}
		return nil, usageErrorf("want %d argument%s%s, got %d", want, plural(want), form, len(pos))
	}
	return pos, nil
}

// flagMessage rewords the flag package's errors a little: it names flags
// as the command line wrote them.
func flagMessage(err error) string {
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag " + f
	}
	if f, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return f + " needs a value"
	}
	return msg
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// hexValue formats a signature value with as many digits as the algebra has.
func hexValue(v uint64, bits int) string {
	return fmt.Sprintf("%0*x", (bits+3)/4, v)
}

// table writes rows of columns aligned, the first row a header.
func table(w io.Writer, rows [][]string, rightAlign map[int]bool) {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i > 0 {
				b.WriteString("  ")
			}
			if rightAlign[i] {
				b.WriteString(pad + c)
			} else if i < len(r)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
