package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"unicode/utf8"
)

func sigcheck(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

func TestUsageAndExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string // in stdout, or stderr when the code is not 0
	}{
		{nil, exitUsage, "sigcheck: no command (sigcheck -h lists them)"},
		{[]string{"help"}, exitOK, "Commands:"},
		{[]string{"-h"}, exitOK, "match"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"sig", "-h"}, exitOK, ""},
		{[]string{"help", "match"}, exitOK, ""},
		{[]string{"sig"}, exitUsage, "sigcheck sig: want 1 argument (TYPE), got 0 (sigcheck sig -h for help)"},
		{[]string{"sig", "int", "float"}, exitUsage, "want 1 argument (TYPE), got 2"},
		{[]string{"sig", "-q", "int"}, exitUsage, "sigcheck sig: unknown flag -q (sigcheck sig -h for help)"},
		{[]string{"sig", "int", "-alg"}, exitUsage, "sigcheck sig: -alg needs a value (sigcheck sig -h for help)"},
		{[]string{"sig", "-alg", "md5", "int"}, exitUsage, "unknown algebra"},
		{[]string{"sig", "flaot"}, exitUsage, `sigcheck sig: column 1: unknown datatype "flaot"`},
		{[]string{"sig", "-count", "-1", "int"}, exitUsage, "invalid value"},
		{[]string{"sig", "vector(1e10, 1e10, 1, double)"}, exitUsage, "more than 2^64 elements"},
		{[]string{"match", "int"}, exitUsage, "want 2 arguments"},
		{[]string{"match", "int", "int("}, exitUsage, "sigcheck match: RECV: column 1"},
		{[]string{"match", "int", "int"}, exitOK, "match (point-to-point)"},
		{[]string{"match", "int", "float"}, exitNegative, "mismatch (point-to-point) at element 0"},
		{[]string{"quality", "extra"}, exitUsage, `sigcheck quality: takes no arguments; got ["extra"] (sigcheck quality -h for help)`},
		{[]string{"types"}, exitOK, "long_double_int"},
	}
	for _, c := range cases {
		o, e, code := sigcheck(t, c.args...)
		if code != c.code {
			t.Errorf("sigcheck %q: exit %d, want %d\nstdout: %s\nstderr: %s", c.args, code, c.code, o, e)
			continue
		}
		where := o
		if code != exitOK {
			where = o + e
		}
		if !strings.Contains(where, c.out) {
			t.Errorf("sigcheck %q: output lacks %q:\nstdout: %s\nstderr: %s", c.args, c.out, o, e)
		}
		if code == exitUsage && (strings.Count(strings.TrimSpace(e), "\n") > 0 || o != "") {
			t.Errorf("sigcheck %q: error is not one line on standard error: %q, stdout %q", c.args, e, o)
		}
		if code != exitOK && strings.Contains(e, "sig: sig:") {
			t.Errorf("sigcheck %q: a prefix twice: %q", c.args, e)
		}
	}
}

// Every command's -h prints its usage and flags on standard output, exit
// 0; a bad flag prints one line naming the flag and the help, exit 2.
func TestHelpAndFlagErrors(t *testing.T) {
	for _, c := range commands {
		args := []string{c.name, "-h"}
		o, e, code := sigcheck(t, args...)
		if code != exitOK || !strings.HasPrefix(o, "Usage: sigcheck "+c.name) || e != "" {
			t.Errorf("sigcheck %s: exit %d, stdout %.60q, stderr %q", strings.Join(args, " "), code, o, e)
		}
		args[len(args)-1] = "-no-such-flag"
		o, e, code = sigcheck(t, args...)
		want := fmt.Sprintf("sigcheck %s: unknown flag -no-such-flag (sigcheck %s -h for help)\n", c.name, c.name)
		if code != exitUsage || e != want || o != "" {
			t.Errorf("sigcheck %s: exit %d, stderr %q, want %q (stdout %.60q)", strings.Join(args, " "), code, e, want, o)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"-version", "--version", "version"} {
		o, e, code := sigcheck(t, arg)
		// go test records no commit, as go run does not: the line says so.
		want := "sigcheck devel (no commit recorded: go run, or -buildvcs=false) go1."
		if code != exitOK || !strings.HasPrefix(o, want) || strings.Count(o, "\n") != 1 || e != "" {
			t.Errorf("sigcheck %s: exit %d, %q, %q; want %q…", arg, code, o, e, want)
		}
	}
}

// The build information each way of building leaves, and the line it
// gives.
func TestVersionLine(t *testing.T) {
	vcs := func(rev, when, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: when}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "ea4a522c97b1ba0e56f4645a10084c1769d1f2ec"
	tail := " go1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH
	for _, c := range []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"go build in a changed clone", "v0.0.0-20261125221530-ea4a522c97b1+dirty", vcs(rev, "2026-11-25T22:15:30Z", "true"),
			"sigcheck devel+ea4a522 (2026-11-25, modified)"},
		{"go build in a clean clone", "v0.0.0-20261125221530-ea4a522c97b1", vcs(rev, "2026-11-25T22:15:30Z", "false"),
			"sigcheck devel+ea4a522 (2026-11-25)"},
		{"go build before Go 1.24 stamped versions", "(devel)", vcs(rev, "2026-11-25T23:59:59-05:00", "true"),
			"sigcheck devel+ea4a522 (2026-11-26, modified)"}, // the date in UTC
		{"go build at a tag", "v1.2.3", vcs(rev, "2026-11-25T22:15:30Z", "false"), "sigcheck v1.2.3 (2026-11-25)"},
		{"go build at a tag, changed", "v1.2.3+dirty", vcs(rev, "2026-11-25T22:15:30Z", "true"), "sigcheck v1.2.3 (2026-11-25, modified)"},
		{"go install …@v1.2.3", "v1.2.3", nil, "sigcheck v1.2.3"},
		{"go install …@ea4a522", "v0.0.0-20261125221530-ea4a522c97b1", nil, "sigcheck devel+ea4a522 (2026-11-25)"},
		{"go install …@ea4a522 after v1.2.3", "v1.2.4-0.20261125221530-ea4a522c97b1", nil, "sigcheck devel+ea4a522 (2026-11-25)"},
		{"go install …@ea4a522 after v1.3.0-rc.1", "v1.3.0-rc.1.0.20261125221530-ea4a522c97b1", nil, "sigcheck devel+ea4a522 (2026-11-25)"},
		{"go run", "(devel)", nil, "sigcheck devel (no commit recorded: go run, or -buildvcs=false)"},
		{"go test", "", nil, "sigcheck devel (no commit recorded: go run, or -buildvcs=false)"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/sigcheck/sigcheck", Version: c.version}, Settings: c.settings}
		if got := versionLine(bi); got != c.want+tail {
			t.Errorf("%s: %q, want %q", c.name, got, c.want+tail)
		}
	}
}

// A binary built in this clone says which commit it was built from. Go
// records the commit on go build and go install only (not go run, not go
// test), so the test builds one; -buildvcs=true because a machine's go
// env may turn the recording off.
func TestVersionFromClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command (-short)")
	}
	head := func() string {
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			t.Skipf("not in a git checkout, or no git: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	before := head()
	bin := filepath.Join(t.TempDir(), "sigcheck")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("error obtaining VCS status")) {
			t.Skipf("git cannot read this checkout here: %s", out) // e.g. a checkout owned by another user
		}
		t.Fatalf("go build: %v\n%s", err, out)
	}
	after := head() // others may commit meanwhile
	out, err := exec.Command(bin, "-version").Output()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(out))
	m := regexp.MustCompile(`^sigcheck devel\+([0-9a-f]{7}) \(([0-9]{4}-[0-9]{2}-[0-9]{2})(, modified)?\) go1\.`).FindStringSubmatch(line)
	if m == nil || !strings.HasPrefix(before, m[1]) && !strings.HasPrefix(after, m[1]) {
		t.Fatalf("sigcheck -version: %q, want sigcheck devel+%.7s (YYYY-MM-DD[, modified]) go1.…", line, after)
	}
	show := exec.Command("git", "show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%d", m[1])
	show.Env = append(os.Environ(), "TZ=UTC") // Go records the commit time in UTC
	if date, err := show.Output(); err == nil && strings.TrimSpace(string(date)) != m[2] {
		t.Errorf("sigcheck -version: %q: the commit's date (UTC) is %s", line, bytes.TrimSpace(date))
	}
}

// The summaries in sigcheck -h start in one column, whatever the length
// of the names, those of commands added from other files too.
func TestUsageAligned(t *testing.T) {
	check := func() {
		t.Helper()
		o, _, _ := sigcheck(t, "-h")
		_, list, _ := strings.Cut(o, "Commands:\n")
		list, _, _ = strings.Cut(list, "\n\n")
		col := -1
		for _, l := range strings.Split(list, "\n") {
			name := strings.Fields(l)[0]
			rest := strings.TrimLeft(strings.TrimPrefix(l, "  "+name), " ")
			at := utf8.RuneCountInString(l) - utf8.RuneCountInString(rest)
			if col < 0 {
				col = at
			}
			if at != col || !strings.Contains(l, name+"  ") {
				t.Errorf("%q: its summary starts at column %d, the first one's at %d", l, at, col)
			}
		}
	}
	check()
	saved := commands
	defer func() { commands = saved }()
	commands = append(commands[:len(commands):len(commands)], &command{name: "a-much-longer-command-name", summary: "does nothing"})
	check()
}

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"sig: column 1: unknown datatype":          "column 1: unknown datatype",
		"RECV: sig: column 3":                      "RECV: column 3",
		"rank 1: channel: tree: root mismatch":     "rank 1: root mismatch",
		"file.sig: 3 segments":                     "file.sig: 3 segments",
		"unknown algebra \"sig\": want gfd or crc": "unknown algebra \"sig\": want gfd or crc",
		"a: sig": "a: sig",
	} {
		if got := plain(in); got != want {
			t.Errorf("plain(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSigCommand(t *testing.T) {
	o, _, code := sigcheck(t, "sig", "-alg", "gfd:w=8,m=2", "vector(1e9, 3, 5, double)")
	if code != 0 || !strings.Contains(o, "0xf5ac") || !strings.Contains(o, "3000000000") {
		t.Fatalf("exit %d:\n%s", code, o)
	}
	// Flags after the datatype, and JSON.
	o, _, code = sigcheck(t, "sig", "byte", "-alg", "crc32", "-count", "9", "-json")
	var got map[string]any
	if code != 0 || json.Unmarshal([]byte(o), &got) != nil {
		t.Fatalf("exit %d: %s", code, o)
	}
	// CRC-32 of nine bytes whose code is byte's low byte, 0xf4.
	if got["algebra"] != "crc32" || got["elements"] != 9.0 || got["class"] != "bytes" || got["value"] != "0x847d6790" {
		t.Errorf("json %v", got)
	}
}

func TestMatchCommand(t *testing.T) {
	o, _, code := sigcheck(t, "match", "struct([1, 3], [0, 8], [int, double])", "struct([1, 6], [0, 8], [int, float])",
		"-send-count", "10", "-recv-count", "10")
	if code != exitNegative {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"at element 1 (zero-based)", "sender    double", "receiver  float",
		"item 0 → struct member 1 → element 0, byte 8", "[double] @8"} {
		if !strings.Contains(o, want) {
			t.Errorf("output lacks %q:\n%s", want, o)
		}
	}
	o, _, code = sigcheck(t, "match", "-json", "vector(4, 2, 3, double)", "contiguous(8, double)", "-send-count", "2")
	var got map[string]any
	if code != exitNegative || json.Unmarshal([]byte(o), &got) != nil {
		t.Fatalf("exit %d: %s", code, o)
	}
	if got["match"] != false || got["index"] != 8.0 || got["truncated"] != true || got["send_type"] != "double" || got["recv_type"] != "" {
		t.Errorf("json %v", got)
	}
	o, _, code = sigcheck(t, "match", "-collective", "-json", "contiguous(2, int)", "int", "-recv-count", "2")
	if code != exitOK || !strings.Contains(o, `"match":true`) {
		t.Errorf("exit %d: %s", code, o)
	}
	o, _, code = sigcheck(t, "match", "packed", "double", "-send-count", "17", "-recv-count", "2")
	if code != exitNegative || !strings.Contains(o, "matched by size") {
		t.Errorf("exit %d: %s", code, o)
	}
}

func TestQualityCommand(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "q.svg")
	o, _, code := sigcheck(t, "quality", "-json", "-plot", svg)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(o), "\n")
	if len(lines) != 18 {
		t.Fatalf("%d rows", len(lines))
	}
	for _, l := range lines {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"algebra", "bits", "collisions_pct", "duplicates_pct", "expected_pct"} {
			if _, ok := row[f]; !ok {
				t.Errorf("row %s lacks %s", l, f)
			}
		}
		if row["algebra"] == "gfd:w=8,m=2" && row["collisions_pct"].(float64) > 1.5*row["expected_pct"].(float64) {
			t.Errorf("gfd:w=8,m=2: %v", row)
		}
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("gfd:w=8,m=2")) {
		t.Errorf("plot: %v", err)
	}
	o, _, code = sigcheck(t, "quality", "-algs", "gfd:w=8,m=2,crc32c")
	if code != 0 || !strings.Contains(o, "gfd:w=8,m=2 ") || !strings.Contains(o, "crc32c") {
		t.Errorf("exit %d:\n%s", code, o)
	}
}

func TestDemo(t *testing.T) {
	o, e, code := sigcheck(t, "demo")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	for _, want := range []string{"accepted", "refused", "mismatch (point-to-point) at element 1", "3000000000000000 elements", "gfd:w=8,m=2", "segments [512 513 20480] found in 15 rounds", "whole again: true", "Merkle layer: 0 of 160 blocks wrong"} {
		if !strings.Contains(o, want) {
			t.Errorf("demo lacks %q:\n%s", want, o)
		}
	}
	// Unprotected, the damage goes through; protected, all of it is caught.
	var wrong, damaged, caught int
	if i := strings.Index(o, "unprotected:"); i < 0 {
		t.Fatal("no unprotected line")
	} else if _, err := fmt.Sscanf(o[i:], "unprotected: %d of 160 blocks", &wrong); err != nil || wrong == 0 {
		t.Errorf("unprotected: %d wrong blocks (%v)", wrong, err)
	}
	if i := strings.Index(o, "blocks wrong; "); i < 0 {
		t.Fatal("no Merkle line")
	} else if _, err := fmt.Sscanf(o[i:], "blocks wrong; %d frames damaged, %d caught", &damaged, &caught); err != nil || damaged == 0 || caught != damaged {
		t.Errorf("Merkle layer: %d damaged, %d caught (%v)", damaged, caught, err)
	}
}

func TestSplitSpecs(t *testing.T) {
	got := splitSpecs("gfd:w=8,m=2, crc32c,xor-bs1:m=1,w=16,crc-32/iscsi")
	want := []string{"gfd:w=8,m=2", "crc32c", "xor-bs1:m=1,w=16", "crc-32/iscsi"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%q", got)
	}
}

// Every command's -json speaks one dialect: snake_case keys, and numbers
// without float noise (at most six decimals: 23.909777777777776 is noise).
func TestJSONWords(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "data.bin")
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(i * 31)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"sig", "-json", "vector(3, 2, 4, double)"},
		{"match", "-json", "int", "float"},
		{"csum", "-json", file},
		{"tree", "-json", file},
		{"manifest", "-json", "-parity", "2", file},
		{"verify", "-json", file},
		{"repair", "-json", file},
		{"run", "-json", "-f", "-m", "1K:2K", "-i", "3", "-protect", "none,merkle", "latency"},
		{"bench", "csum", "-json", "-quick", "-sizes", "64", "-algs", "sum"},
		{"quality", "-json", "-algs", "gfd:w=8,m=2,crc32c"},
	} {
		o, e, code := sigcheck(t, args...)
		if code == exitUsage {
			t.Errorf("sigcheck %v: exit %d: %s", args, code, e)
			continue
		}
		dec := json.NewDecoder(strings.NewReader(o))
		dec.UseNumber()
		values := 0
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Errorf("sigcheck %v: not JSON: %v\n%s", args, err, o)
				break
			}
			values++
			checkJSONWords(t, strings.Join(args[:1], " "), "", v)
		}
		if values == 0 {
			t.Errorf("sigcheck %v: no JSON on standard output", args)
		}
	}
}

func checkJSONWords(t *testing.T, cmd, path string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k != strings.ToLower(k) || strings.ContainsAny(k, "- ") {
				t.Errorf("sigcheck %s: key %s%s is not snake_case", cmd, path, k)
			}
			checkJSONWords(t, cmd, path+k+".", x)
		}
	case []any:
		for _, x := range v {
			checkJSONWords(t, cmd, path, x)
		}
	case json.Number:
		if _, frac, ok := strings.Cut(strings.TrimLeft(v.String(), "-"), "."); ok && len(strings.TrimRight(strings.SplitN(frac, "e", 2)[0], "0")) > 6 {
			t.Errorf("sigcheck %s: %s = %s: float noise", cmd, strings.TrimSuffix(path, "."), v)
		}
	}
}
