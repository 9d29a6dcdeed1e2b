package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/csum/sumfile"
)

// checkOptions are sha256sum -c's options, under the same names.
type checkOptions struct {
	alg           *csum.Algorithm // -alg when given: the algorithm of bare lines
	quiet         bool            // no OK lines
	status        bool            // no output at all
	strict        bool            // improperly formatted lines fail the check
	ignoreMissing bool            // listed files that do not exist are skipped
	warn          bool            // say which lines are improperly formatted
	json          bool
}

// maxCheckLine bounds a line of a checksum file: a name of PATH_MAX bytes
// escaped, and the widest sum, fit many times over.
const maxCheckLine = 64 << 10

// checkLists checks every checksum file in lists ("-" for standard input)
// and returns negativeError if any check failed.
func checkLists(e *env, lists []string, o checkOptions) error {
	ok := true
	for _, list := range lists {
		good, err := checkList(e, list, o)
		if err != nil {
			return err // standard output failed: nothing more can be said
		}
		ok = ok && good
	}
	if !ok {
		return negativeError{}
	}
	return nil
}

// checkTally counts what a checksum file's lines came to.
type checkTally struct {
	ok, failed, unreadable, missing, improper int
	guessed                                   []string // algorithms of failed bare lines, read by their length
}

// checkList checks the files one checksum file lists and reports whether
// all were good, as sha256sum -c counts it.
func checkList(e *env, list string, o checkOptions) (bool, error) {
	warnf := func(format string, args ...any) {
		fmt.Fprintf(e.stderr, "sigcheck csum: "+format+"\n", args...)
	}
	var r io.Reader = e.stdin
	if list != "-" {
		f, err := os.Open(list)
		if err != nil {
			warnf("%s", fileError(list, err))
			return false, nil
		}
		defer f.Close()
		r = f
	}
	report := func(row map[string]any, name, verdict string) error {
		if o.status {
			return nil
		}
		if o.json {
			return json.NewEncoder(e.stdout).Encode(row)
		}
		esc, escaped := sumfile.Escape(name)
		prefix := ""
		if escaped {
			prefix = "\\"
		}
		_, err := fmt.Fprintf(e.stdout, "%s%s: %s\n", prefix, esc, verdict)
		return err
	}
	var t checkTally
	good := true
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxCheckLine)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "#") {
			continue
		}
		l, err := sumfile.Parse(text)
		var a *csum.Algorithm
		if err == nil {
			a, err = l.Resolve(o.alg)
		}
		if err != nil {
			t.improper++
			if o.warn {
				warnf("%s:%d: %v", list, line, err)
			}
			continue
		}
		row := map[string]any{"file": l.Name, "algorithm": a.Name, "expected": hex.EncodeToString(l.Sum)}
		h, _, err := checksumFile(e, a, l.Name)
		if err != nil {
			if o.ignoreMissing && errors.Is(err, fs.ErrNotExist) {
				t.missing++
				continue
			}
			t.unreadable++
			warnf("%s", fileError(l.Name, err))
			row["status"], row["error"] = "unreadable", err.Error()
			if pe, ok := errors.AsType[*fs.PathError](err); ok {
				row["error"] = pe.Err.Error()
			}
			if err := report(row, l.Name, "FAILED open or read"); err != nil {
				return false, err
			}
			continue
		}
		sum := h.Sum(nil)
		row["actual"] = hex.EncodeToString(sum)
		verdict := "OK"
		if bytes.Equal(sum, l.Sum) {
			t.ok++
			row["status"] = "ok"
			if o.quiet {
				continue
			}
		} else {
			t.failed++
			row["status"], verdict = "failed", "FAILED"
			if l.Algorithm == nil && o.alg == nil && !slices.Contains(t.guessed, a.Name) {
				t.guessed = append(t.guessed, a.Name)
			}
		}
		if err := report(row, l.Name, verdict); err != nil {
			return false, err
		}
	}
	if err := sc.Err(); err != nil {
		good = false
		if errors.Is(err, bufio.ErrTooLong) {
			warnf("%s:%d: a line longer than %d KiB; the rest of the file is not read", list, line+1, maxCheckLine>>10)
		} else {
			warnf("%s: %v", list, err)
		}
	}
	if t.ok+t.failed+t.unreadable+t.missing == 0 {
		warnf("%s: no properly formatted checksum lines found", list)
		return false, nil
	}
	if !o.status {
		if t.improper > 0 {
			warnf("WARNING: %d %s improperly formatted", t.improper, pick(t.improper, "line is", "lines are"))
		}
		if t.unreadable > 0 {
			warnf("WARNING: %d listed %s not be read", t.unreadable, pick(t.unreadable, "file could", "files could"))
		}
		if t.failed > 0 {
			hint := ""
			if len(t.guessed) > 0 && t.ok == 0 { // all failed: the guess may be what is wrong
				hint = fmt.Sprintf(" (bare sums read as %s by their length; -alg says if they are another algorithm's)", strings.Join(t.guessed, ", "))
			}
			warnf("WARNING: %d computed %s did NOT match%s", t.failed, pick(t.failed, "checksum", "checksums"), hint)
		}
	}
	if o.ignoreMissing && t.ok+t.failed+t.unreadable == 0 {
		warnf("%s: no file was verified", list)
		return false, nil
	}
	return good && t.failed == 0 && t.unreadable == 0 && !(o.strict && t.improper > 0), nil
}

// pick returns one or many by n.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
