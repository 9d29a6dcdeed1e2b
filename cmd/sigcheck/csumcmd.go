package main

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sigcheck/sigcheck/csum"
	"github.com/sigcheck/sigcheck/csum/sumfile"
	"github.com/sigcheck/sigcheck/internal/plot"
	"github.com/sigcheck/sigcheck/internal/progress"
)

func runCsum(e *env, args []string) error {
	fs := flags(e, "csum", "Prints the checksum of each FILE (standard input for - or no FILE) and its name, as\n"+
		"sha256sum and xxhsum do: lowercase hex, most significant digit first (what %08x or\n"+
		"%016x print), XXH3-64 sums marked XXH3_ as xxhsum 0.8.2 writes them; with -tag, BSD\n"+
		"lines (SHA256 (FILE) = …; XXH128 for xxh3-128, as xxhsum names it). A file that cannot\n"+
		"be read is reported, the others are still summed, and the exit status is 1.\n\n"+
		"With -c, reads checksum files (sha256sum's, b3sum's, xxhsum's, or -tag lines) and\n"+
		"checks every file they list: NAME: OK or NAME: FAILED; exit status 0 when all match.\n"+
		"A line's algorithm is its tag (or XXH3_), else -alg when given, else its length\n"+
		"as xxhsum and sha256sum read it: 8 hex digits xxh32, 16 xxh64, 32 xxh3-128, 64 sha256.\n\n"+
		"Algorithms: "+strings.Join(csum.Names(), ", ")+".")
	alg := fs.String("alg", csum.BuiltinDefault, "checksum `algorithm` (not the tuned default: a printed checksum must not depend on the machine);\nwith -c, when given, the algorithm of lines that do not name theirs (else their length says)")
	tag := fs.Bool("tag", false, "print BSD lines: ALG (FILE) = HASH")
	check := fs.Bool("c", false, "check the sums that the FILEs list")
	fs.BoolVar(check, "check", false, "the same as -c (sha256sum's --check)")
	quiet := fs.Bool("quiet", false, "with -c: do not print OK lines")
	status := fs.Bool("status", false, "with -c: print nothing; the exit status says it all")
	strict := fs.Bool("strict", false, "with -c: exit 1 when a line is improperly formatted")
	ignoreMissing := fs.Bool("ignore-missing", false, "with -c: skip listed files that do not exist")
	warn := fs.Bool("warn", false, "with -c: say which lines are improperly formatted")
	list := fs.Bool("list", false, "list the algorithms and what each detects")
	detect := fs.Bool("detect", false, "measure what each algorithm detects (1, 2, 3 flipped bits; two 64-bit words swapped) and print the table")
	trials := fs.Int("trials", 2000, "with -detect: corrupted messages per algorithm and class of error")
	size := fs.Int("size", 4096, "with -detect: message size in bytes (a multiple of 8)")
	md := fs.Bool("markdown", false, "with -list or -detect: print a Markdown table")
	asJSON := fs.Bool("json", false, "print JSON: one object per file (with -c, per listed file), or per row with -list/-detect")
	files, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !*check {
		for _, f := range []string{"quiet", "status", "strict", "ignore-missing", "warn"} {
			if set[f] {
				return usageErrorf("-%s is for checking: add -c", f)
			}
		}
	} else if *tag {
		return usageErrorf("-tag is for writing sums; -c reads both forms")
	}
	switch {
	case *list:
		return listAlgorithms(e, *md, *asJSON)
	case *detect:
		if *size < 16 || *size%8 != 0 || *size > 1<<26 {
			return usageErrorf("-size %d: want a multiple of 8 from 16 to 64 MiB", *size)
		}
		if *trials < 1 || *trials > 1e7 {
			return usageErrorf("-trials %d: want 1 to 10^7", *trials)
		}
		return detectTable(e, *size, *trials, *md, *asJSON)
	}
	a, err := lookupAlg("-alg", *alg)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	if *check {
		o := checkOptions{quiet: *quiet, status: *status, strict: *strict, ignoreMissing: *ignoreMissing, warn: *warn, json: *asJSON}
		if set["alg"] {
			o.alg = a
		}
		return checkLists(e, files, o)
	}
	enc := json.NewEncoder(e.stdout)
	failed := 0
	for _, name := range files {
		h, n, err := checksumFile(e, a, name)
		if err != nil {
			failed++
			msg := fileError(name, err)
			fmt.Fprintf(e.stderr, "sigcheck csum: %s\n", msg)
			if *asJSON { // a script reading the rows sees the failure too
				if err := enc.Encode(map[string]any{"algorithm": a.Name, "file": name, "error": strings.TrimPrefix(msg, name+": ")}); err != nil {
					return err
				}
			}
			continue
		}
		sum := h.Sum(nil) // the whole digest, also for sha256 and blake3
		if *asJSON {
			if err := enc.Encode(map[string]any{"algorithm": a.Name, "file": name, "bytes": n, "checksum": hex.EncodeToString(sum)}); err != nil {
				return err
			}
			continue
		}
		if _, err := e.stdout.Write(sumfile.Append(nil, a, sum, name, *tag)); err != nil {
			return err
		}
	}
	if failed > 0 {
		return negativeError{}
	}
	return nil
}

// lookupAlg finds an algorithm named by a flag; an unknown name gets the
// list of known ones, in one line.
func lookupAlg(flagName, name string) (*csum.Algorithm, error) {
	a, err := csum.Lookup(name)
	if err != nil {
		return nil, usageErrorf("%s %s: unknown algorithm; known: %s", flagName, name, strings.Join(csum.Names(), ", "))
	}
	return a, nil
}

// fileError says what went wrong with a file, once: "NAME: no such file
// or directory", not the operation and path twice over.
func fileError(name string, err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return name + ": " + pe.Err.Error()
	}
	if strings.HasPrefix(err.Error(), name+": ") {
		return err.Error()
	}
	return name + ": " + err.Error()
}

// readPiece is the unit of reading: large enough that a read costs
// nothing beside its copy, small enough to stay in L2 between the read
// and the checksum.
const readPiece = 1 << 20

// pipelineMin is the size from which checksumFile reads on a goroutine of
// its own while it checksums the previous piece (and always for input of
// unknown size): reading (a copy from the page cache, or a pipe) and
// checksumming then overlap on two cores, and a slow checksum (sha256,
// blake3) costs about max(read, sum) instead of read + sum. Below it, one
// piece or two, a goroutine and three buffers cost more than they hide.
// BenchmarkCsumFile's tool=sigcheck-serial rows set it out of reach.
var pipelineMin int64 = 2 * readPiece

// readSerial reads r to its end in pieces of up to readPiece bytes and
// hands each to consume, and returns the number of bytes. size is what r
// is expected to hold: the buffer is no larger than that (checking ten
// thousand small files should not allocate ten thousand MiB).
func readSerial(r io.Reader, size int64, consume func([]byte)) (int64, error) {
	buf := make([]byte, min(max(size+1, 512), readPiece))
	var n int64
	for {
		k, err := r.Read(buf)
		consume(buf[:k])
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// readPipelined is readSerial with the reading on a goroutine of its own,
// three pieces in flight: one read, one checksummed, one waiting. The
// goroutine has ended when it returns.
func readPipelined(r io.Reader, consume func([]byte)) (int64, error) {
	type piece struct {
		b   []byte
		err error // io.EOF after the last piece
	}
	full := make(chan piece, 2)
	free := make(chan []byte, 3)
	for range 3 {
		free <- make([]byte, readPiece)
	}
	go func() {
		for b := range free {
			k, err := io.ReadFull(r, b)
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			full <- piece{b[:k], err}
			if err != nil {
				close(full)
				return
			}
		}
	}()
	var n int64
	for p := range full {
		consume(p.b)
		n += int64(len(p.b))
		if p.err != nil {
			close(free) // the reader has returned: nothing waits on free
			if p.err == io.EOF {
				return n, nil
			}
			return n, p.err
		}
		free <- p.b[:cap(p.b)]
	}
	panic("unreachable: the reader closes full only after an error piece")
}

// maxHeld bounds the input of unknown size (a pipe) that an algorithm
// seeded with the length must hold in memory until its end.
var maxHeld int64 = 256 << 20

// heldLimit fails a read past maxHeld bytes, rather than let a pipe grow
// the process without bound.
type heldLimit struct {
	r    io.Reader
	left int64
	alg  string
}

func (l *heldLimit) Read(p []byte) (int, error) {
	if l.left <= 0 { // at the bound: fine if the input ends here
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%s starts from the length, so input of unknown size is held in memory, and this is over %s: give a file instead", l.alg, sizeLabel(int(maxHeld)))
	}
	n, err := l.r.Read(p[:min(int64(len(p)), l.left)])
	l.left -= int64(n)
	return n, err
}

// checksumFile streams a file (or standard input for "-") through a, with
// a progress bar on standard error for large files.
func checksumFile(e *env, a *csum.Algorithm, name string) (csum.Hash, int64, error) {
	var r io.Reader = e.stdin
	total := int64(-1)
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, 0, err
		}
		if fi.IsDir() {
			return nil, 0, errors.New("is a directory")
		}
		if fi.Mode().IsRegular() {
			total = fi.Size()
		}
		r = f
	}
	if total < 0 && a.SeededWithLength() {
		r = &heldLimit{r: r, left: maxHeld, alg: a.Name}
	}
	h := a.NewFor(total)
	bar := progress.New(e.stderr, a.Name+" "+name, total, "B")
	defer bar.Done()
	consume := func(p []byte) {
		h.Write(p)
		bar.Add(int64(len(p)))
	}
	var n int64
	var err error
	if total >= 0 && total < pipelineMin {
		n, err = readSerial(r, total, consume)
	} else {
		n, err = readPipelined(r, consume)
	}
	if err != nil {
		return nil, 0, err
	}
	if total >= 0 && n != total {
		return nil, 0, fmt.Errorf("changed while being read (%d bytes, then %d)", total, n)
	}
	return h, n, nil
}

func listAlgorithms(e *env, md, asJSON bool) error {
	rows := [][]string{{"name", "bits", "1 bit", "2 bits", "3 bits", "swap", "combine", "about", "also known as"}}
	enc := json.NewEncoder(e.stdout)
	for _, a := range csum.All() {
		d := a.Detects
		comb := "-"
		if a.Combinable() {
			comb = fmt.Sprintf("yes (align %d)", a.CombineAlign())
		}
		if asJSON {
			if err := enc.Encode(map[string]any{"algorithm": a.Name, "bits": 8 * a.Size, "aliases": a.Aliases,
				"bit1": d.Bit1.String(), "bit2": d.Bit2.String(), "bit3": d.Bit3.String(), "swap": d.Swap.String(),
				"combinable": a.Combinable(), "about": a.About}); err != nil {
				return err
			}
			continue
		}
		rows = append(rows, []string{a.Name, fmt.Sprint(8 * a.Size), d.Bit1.String(), d.Bit2.String(), d.Bit3.String(), d.Swap.String(), comb, a.About, strings.Join(a.Aliases, ", ")})
	}
	if !asJSON {
		printTable(e.stdout, rows, md)
	}
	return nil
}

func detectTable(e *env, size, trials int, md, asJSON bool) error {
	algs := csum.All()
	bar := progress.New(e.stderr, "corrupting", int64(len(algs)), "")
	defer bar.Done()
	rows := [][]string{{"algorithm", "bits", "1 bit", "2 bits", "3 bits", "swap of 64-bit words"}}
	enc := json.NewEncoder(e.stdout)
	for _, a := range algs {
		rates := csum.MeasureDetection(a, size, trials, 1)
		bar.Add(1)
		row := []string{a.Name, fmt.Sprint(8 * a.Size)}
		for _, r := range rates {
			level := a.Detects.Level(r.Fault)
			if asJSON {
				if err := enc.Encode(map[string]any{"algorithm": a.Name, "fault": r.Fault.String(), "claim": level.String(),
					"detected": r.Detected, "trials": r.Trials, "detected_pct": r.Percent()}); err != nil {
					return err
				}
			}
			row = append(row, fmt.Sprintf("%s (%s %%)", level, trimPercent(r.Percent())))
		}
		rows = append(rows, row)
	}
	if asJSON {
		return nil
	}
	printTable(e.stdout, rows, md)
	fmt.Fprintf(e.stdout, "\n%d corrupted %d-byte messages per cell; the word is the algorithm's documented guarantee\n"+
		"(always: by its arithmetic; likely: no structured blind spot; mostly: misses a structured share; never).\n", trials, size)
	return nil
}

func trimPercent(p float64) string {
	if p == 100 || p == 0 {
		return strconv.FormatFloat(p, 'f', 0, 64)
	}
	return strconv.FormatFloat(p, 'f', 2, 64)
}

// printTable prints aligned columns, or a Markdown table.
func printTable(w io.Writer, rows [][]string, md bool) {
	if !md {
		table(w, rows, nil)
		return
	}
	for i, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		if i == 0 {
			fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(r)))
		}
	}
}

// parseSizes reads "64,4K,32KiB,1M,64MiB".
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mult := 1
		num := strings.TrimRight(f, "KMGiBkmgb")
		switch strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(f[len(num):], "B"), "iB")) {
		case "":
		case "K", "KI":
			mult = 1 << 10
		case "M", "MI":
			mult = 1 << 20
		case "G", "GI":
			mult = 1 << 30
		default:
			return nil, fmt.Errorf("size %q: unknown unit", f)
		}
		n, err := strconv.Atoi(num)
		if err != nil || n <= 0 || int64(n) > (4<<30)/int64(mult) || int64(n)*int64(mult) > math.MaxInt {
			return nil, fmt.Errorf("size %q: want a positive number of bytes up to 4 GiB (64, 4K, 1MiB)", f)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

func sizeLabel(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func runTune(e *env, args []string) error {
	fs := flags(e, "tune", "Measures, on this machine, every checksum that detects at least what -need asks, at each\n"+
		"size, beside a plain read and the fastest plain copy of the same buffers, picks the fastest\n"+
		"per size, and stores the choice in "+tuningPathForHelp()+".\n"+
		"The library uses it by default (csum.Default) unless the "+csum.EnvVar+" environment variable\n"+
		"names an algorithm.")
	sizes := fs.String("sizes", "64,4K,32K,1M,64M", "message `sizes` to tune for")
	need := fs.String("need", "likely", "required detection: likely (no structured blind spot), bits (every 1-3 bit error: the CRCs), any")
	asJSON := fs.Bool("json", false, "print the measurements and choices as JSON")
	noSave := fs.Bool("no-save", false, "do not store the choice")
	quick := fs.Bool("quick", false, "measure one short round per cell (less precise)")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	sz, err := parseSizes(*sizes)
	if err != nil {
		return usageErrorf("-sizes: %v", err)
	}
	var req csum.Detection
	switch *need {
	case "likely":
		req = csum.DefaultNeed
	case "bits":
		req = csum.Detection{Bit1: csum.Always, Bit2: csum.Always, Bit3: csum.Always, Swap: csum.Likely}
	case "any":
	default:
		return usageErrorf("-need %q: want likely, bits or any", *need)
	}
	opts := measureOpts(*quick)
	bar := progress.New(e.stderr, "tuning", 0, "")
	opts.Progress = func(done, total int) { bar.SetTotal(int64(total)); bar.Add(1) }
	t, err := csum.Tune(sz, req, opts)
	bar.Done()
	if err != nil {
		return err
	}
	saved := ""
	if !*noSave {
		path, err := csum.TuningPath()
		if err == nil {
			err = t.Save(path)
		}
		if err != nil {
			return fmt.Errorf("storing the tuning: %w", err)
		}
		saved = path
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"machine": t.Machine, "choices": t.Choices,
			"measurements": jsonMeasurements(t.Measured), "saved": saved})
	}
	printBandwidth(e.stdout, t.Measured, sz, t.Choices)
	fmt.Fprintf(e.stdout, "\nGB/s, medians; * marks the choice per size. Machine: %s.\n", t.Machine)
	if saved != "" {
		fmt.Fprintf(e.stdout, "Stored in %s (override with %s=NAME).\n", saved, csum.EnvVar)
	}
	return nil
}

func tuningPathForHelp() string {
	if p, err := csum.TuningPath(); err == nil {
		return p
	}
	return "the user's cache directory"
}

func measureOpts(quick bool) csum.MeasureOptions {
	if quick {
		return csum.MeasureOptions{Rounds: 1, MinTime: 5 * time.Millisecond}
	}
	return csum.MeasureOptions{}
}

func jsonMeasurements(ms []csum.Measurement) []map[string]any {
	out := make([]map[string]any, len(ms))
	for i, m := range ms {
		out[i] = map[string]any{"algorithm": m.Name, "size": m.Size, "gbps": roundTo(m.GBps, 3)}
	}
	return out
}

func roundTo(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// printBandwidth prints one row per kernel, one column per size; chosen
// algorithms are starred.
func printBandwidth(w io.Writer, ms []csum.Measurement, sizes []int, chosen []csum.Choice) {
	head := []string{"algorithm"}
	for _, s := range sizes {
		head = append(head, sizeLabel(s))
	}
	rows := [][]string{head}
	var order []string
	cell := map[string]map[int]float64{}
	for _, m := range ms {
		if cell[m.Name] == nil {
			cell[m.Name] = map[int]float64{}
			order = append(order, m.Name)
		}
		cell[m.Name][m.Size] = m.GBps
	}
	for _, name := range order {
		row := []string{name}
		for _, s := range sizes {
			v, ok := cell[name][s]
			mark := ""
			for _, c := range chosen {
				if c.Size == s && c.Algorithm == name {
					mark = "*"
				}
			}
			if ok {
				row = append(row, fmt.Sprintf("%.2f%s", v, mark))
			} else {
				row = append(row, "-")
			}
		}
		rows = append(rows, row)
	}
	right := map[int]bool{}
	for i := 1; i <= len(sizes); i++ {
		right[i] = true
	}
	table(w, rows, right)
}

func runBench(e *env, args []string) error {
	fs := flags(e, "bench", "Prints the bandwidth of every checksum (GB/s, medians) at each size, beside the\n"+
		"baselines read (a memory-bound read loop over 64-bit words, eight accumulators) and copy\n"+
		"(the fastest plain copy: Go's copy or csum.Copy, whichever is faster at that size), and the\n"+
		"fused copy+NAME of each checksum. Buffers are filled with random bytes first.")
	sizes := fs.String("sizes", "64,4K,32K,1M,64M", "message `sizes`")
	algs := fs.String("algs", "", "comma-separated `algorithms` (default: all)")
	fused := fs.Bool("fused", true, "also measure copy+NAME for each algorithm")
	asJSON := fs.Bool("json", false, "print one JSON object per measurement: algorithm, size, gbps")
	asCSV := fs.Bool("csv", false, "print CSV: algorithm,size,gbps")
	img := fs.String("plot", "", "also write a chart of GB/s against size to this `file`: .svg, .png or .pdf, as its name ends")
	quick := fs.Bool("quick", false, "measure one short round per cell (less precise)")
	// The target may come before the flags or after them (sigcheck bench
	// -sizes 1M csum), as the other commands' arguments may.
	target, err := parse(fs, args, -1)
	if err != nil {
		return err
	}
	switch {
	case len(target) == 0:
		return usageErrorf("want a target: sigcheck bench csum")
	case len(target) > 1 || target[0] != "csum":
		return usageErrorf("the one target is csum; got %q", strings.Join(target, " "))
	}
	sz, err := parseSizes(*sizes)
	if err != nil {
		return usageErrorf("-sizes: %v", err)
	}
	// A name the chart cannot be written as is refused now, not after
	// the measurement.
	var imgFormat string
	if *img != "" {
		if imgFormat, err = plot.Format(*img); err != nil {
			return usageErrorf("-plot %v", err)
		}
	}
	names := []string{"read", "copy"}
	var picked []string
	if *algs == "" {
		picked = csum.Names()
	} else {
		for _, n := range strings.Split(*algs, ",") {
			a, err := lookupAlg("-algs", strings.TrimSpace(n))
			if err != nil {
				return err
			}
			picked = append(picked, a.Name)
		}
	}
	names = append(names, picked...)
	if *fused {
		for _, n := range picked {
			names = append(names, "copy+"+n)
		}
	}
	opts := measureOpts(*quick)
	bar := progress.New(e.stderr, "measuring", int64(len(names)*len(sz)), "")
	opts.Progress = func(done, total int) { bar.Add(1) }
	ms, err := csum.Measure(names, sz, opts)
	bar.Done()
	if err != nil {
		return err
	}
	if *img != "" {
		if err := plotBandwidth(*img, imgFormat, ms, names); err != nil {
			return err
		}
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(e.stdout)
		for _, m := range jsonMeasurements(ms) {
			if err := enc.Encode(m); err != nil {
				return err
			}
		}
	case *asCSV:
		w := csv.NewWriter(e.stdout)
		w.Write([]string{"algorithm", "size", "gbps"})
		for _, m := range ms {
			w.Write([]string{m.Name, strconv.Itoa(m.Size), strconv.FormatFloat(m.GBps, 'f', 3, 64)})
		}
		w.Flush()
		return w.Error()
	default:
		printBandwidth(e.stdout, ms, sz, nil)
		fmt.Fprintln(e.stdout, "\nGB/s (10^9 bytes per second), medians of five rounds.")
	}
	return nil
}

// plotBandwidth writes a chart of GB/s against size, one line per
// measured name, to path in format (see plot.Format).
func plotBandwidth(path, format string, ms []csum.Measurement, names []string) error {
	var series []plot.Series
	for _, n := range names {
		s := plot.Series{Name: n}
		for _, m := range ms {
			if m.Name == n {
				s.X = append(s.X, float64(m.Size))
				s.Y = append(s.Y, m.GBps)
			}
		}
		series = append(series, s)
	}
	// Drawn whole before the file is created, so that a chart that cannot
	// be drawn leaves no file.
	var b bytes.Buffer
	if err := plot.SizePanels(&b, format, "Checksum bandwidth on "+csum.Machine(), []plot.Panel{{YLabel: "GB/s", Series: series}}); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o666)
}
