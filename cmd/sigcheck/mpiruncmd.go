package main

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/sigcheck/sigcheck/channel/encrypt"
)

const mpirunHelp = `Runs an unmodified MPI program under Open MPI's mpirun with libsigcheck.so preloaded
into every rank (not into mpirun itself). Each rank then checks what it receives against
what its sender meant: the datatype signature of every message and collective, and with
-check checksum the data bytes too. mpirun gets the library and its settings as -x
arguments right after its name:

  -x LD_PRELOAD=LIB -x SIGCHECK_CHECK=… -x SIGCHECK_ON_ERROR=… -x SIGCHECK_SUMMARY=DIR
  -x GODEBUG=asyncpreemptoff=1 (after any GODEBUG of yours: Go's preemption signal would
     interrupt the program's system calls)

With -encrypt, MPI_Allgather between nodes is encrypted with AES-128-GCM, by one of the
algorithms of "Efficient Algorithms for Encrypted All-gather Operation" (-encrypt-alg; Auto
by default), under keys agreed at MPI_Init: an X25519 exchange over MPI, mixed with a
secret that sigcheck draws for the job and puts in mpirun's environment, passed on by name
(-x SIGCHECK_ENCRYPT=1 -x SIGCHECK_ENCRYPT_SECRET) so that it is on no command line.
Nodes are what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) finds; -nodes N splits the ranks
into N simulated nodes, to try it on one machine. Other collectives and point-to-point
messages between nodes go in the clear, and the summary counts them. A ciphertext altered
on the way is reported as a finding (tampered ciphertext).

With -replicate R (2 or 3), mpirun's -np is R times the program's ranks: the job runs as n
ranks of R replicas each, as RedMPI ran it. The program sees MPI_COMM_WORLD of n ranks, and
every message and collective result is compared between the replicas of its rank: -protocol
msgplushash (the default: each replica's own copy, and the hash of the previous replica's) or
alltoall (every replica's copy to every replica). With 3, a copy that two replicas do not
vouch for is replaced by the majority's before the receive returns; no majority, or any
disagreement with 2 (unless -on-error report), ends the job with status 86. Replica 0
answers what timing decides (MPI_Test, MPI_Iprobe, wildcard receives, MPI_Wtime) for all.
Replicas of one rank go on different nodes where the hosts allow. -inject RATE then flips one
bit of a message as sent (in a copy: the program's memory is untouched) with that
probability, on the replicas -inject-replicas names (0 by default). Replica 0's standard
output is the job's; the others' is discarded. The ranks also get -x GLIBC_TUNABLES with
glibc's malloc cache off and a perturb byte, so that bytes a program sends without having
written them are the same in every replica (keys of your own GLIBC_TUNABLES win).

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

Examples:

  sigcheck mpirun -on-error report -- mpirun -np 4 ./app input.dat
  sigcheck mpirun -encrypt -nodes 2 -- mpirun -np 8 ./app input.dat
  sigcheck mpirun -replicate 3 -inject 0.01 -- mpirun -np 12 ./app input.dat`

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
	replicate      string // -replicate R, "" when off
	protocol       string // "" when not given
	injectReplicas string
	tunables       string // the user's GLIBC_TUNABLES, which -replicate adds to
	summaryDir     string
	encrypt        bool
	encAlg, nodes  string // "" when not given
}

// secretVar carries the job's secret for -encrypt's key agreement: set
// in mpirun's environment and passed on by name, never on a command line
// that any user of the machine can read.
const secretVar = "SIGCHECK_ENCRYPT_SECRET"

// exitStatus passes a child's exit status through runIO unchanged, so
// that a job's scripts see mpirun's status as if sigcheck were not there.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func runMpirun(e *env, args []string) error {
	fs := flags(e, "mpirun", mpirunHelp)
	check := fs.String("check", "types", "what the ranks check (`mode`): types (datatype signatures), checksum (the data bytes too), repair (and a corrupt message is fetched again from its sender before the receive returns)")
	onError := fs.String("on-error", "abort", "what to do at a finding (`action`): abort (end the job, exit 86) or report (run on, list the findings at the end)")
	lib := fs.String("lib", "", "`PATH` of libsigcheck.so (default: $SIGCHECK_LIB, beside sigcheck, or built in this clone)")
	inject := fs.Float64("inject", 0, "the `rate`, 0 to 1, at which received messages get one bit flipped, for -check checksum to catch (with -replicate, messages as sent, for the replicas' vote)")
	seed := fs.Uint64("seed", 1, "the `seed` of -inject's faults")
	summary := fs.String("summary", "", "also write the merged summary, each rank's row as it wrote it, to `FILE.json`")
	encryptFlag := fs.Bool("encrypt", false, "encrypt MPI_Allgather between nodes (AES-128-GCM, keys agreed at MPI_Init); count what else crosses in the clear")
	encAlg := fs.String("encrypt-alg", "", "the encrypted all-gather's `algorithm`: auto (the default), naive, o-ring, o-rd, o-rd2, c-ring, c-rd, hs1 or hs2")
	nodes := fs.String("nodes", "", "with -encrypt, split the ranks into `N` simulated nodes (N:cyclic deals them out in turn)")
	replicate := fs.Int("replicate", 0, "run the program as ranks of `R` replicas each (2 or 3), every message compared between them; mpirun's -np is R times the program's ranks")
	protocol := fs.String("protocol", "", "with -replicate, how the replicas compare a message (`name`): msgplushash (the default) or alltoall")
	injectReplicas := fs.String("inject-replicas", "", "with -replicate, the replicas that -inject flips bits in (`list`, default 0)")
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
	rep, proto, reps, err := replicateSettings(*replicate, *protocol, *injectReplicas)
	if err != nil {
		return err
	}
	set, err := mpirunSettingsOf(fs, *check, *onError, *inject, *seed, rep != "")
	if err != nil {
		return err
	}
	set.replicate, set.protocol, set.injectReplicas = rep, proto, reps
	set.tunables = os.Getenv("GLIBC_TUNABLES")
	if set.encrypt, set.encAlg, set.nodes, err = encryptSettings(*encryptFlag, *encAlg, *nodes); err != nil {
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
func mpirunSettingsOf(fs *flag.FlagSet, check, onError string, inject float64, seed uint64, replicated bool) (mpirunSettings, error) {
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
	if inject > 0 && check == "types" && !replicated {
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

// encryptSettings checks -encrypt's flags as the library would.
func encryptSettings(on bool, alg, nodes string) (bool, string, string, error) {
	if !on && (alg != "" || nodes != "") {
		return false, "", "", usageErrorf("-encrypt-alg and -nodes only matter with -encrypt")
	}
	if alg != "" {
		if _, err := encrypt.ParseAlgorithm(alg); err != nil {
			return false, "", "", usageErrorf("-encrypt-alg %s: want auto, naive, o-ring, o-rd, o-rd2, c-ring, c-rd, hs1 or hs2", alg)
		}
	}
	if nodes != "" {
		n, m, hasMap := strings.Cut(nodes, ":")
		k, err := strconv.Atoi(n)
		if err == nil && hasMap {
			_, err = encrypt.ParseMapping(m)
		}
		if err != nil || k < 1 || k > 1<<20 {
			return false, "", "", usageErrorf("-nodes %s: want a number of nodes, then :block (the default) or :cyclic", nodes)
		}
	}
	return on, alg, nodes, nil
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
	vars = append(vars, replicateVars(set)...)
	if set.encrypt {
		vars = append(vars, "SIGCHECK_ENCRYPT=1", secretVar)
		if set.encAlg != "" {
			vars = append(vars, "SIGCHECK_ENCRYPT_ALG="+set.encAlg)
		}
		if set.nodes != "" {
			vars = append(vars, "SIGCHECK_NODES="+set.nodes)
		}
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
	var env []string
	if set.encrypt {
		secret := make([]byte, 32)
		rand.Read(secret)
		env = append(os.Environ(), secretVar+"="+hex.EncodeToString(secret))
	}
	status, err := runJob(e, args, env)
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
// signals that would have stopped sigcheck passed on to it instead; env,
// if not nil, is its environment.
func runJob(e *env, args []string, env []string) (int, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
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
