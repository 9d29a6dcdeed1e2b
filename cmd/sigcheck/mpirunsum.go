package main

// The summary of a job under sigcheck mpirun: the ranks' rank-N.json
// files read, merged, and written for a person (standard error) and, with
// -summary, as JSON.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sigcheck/sigcheck/internal/ranksum"
)

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
	Command    []string            `json:"command"`
	Exit       int                 `json:"exit"`
	Ranks      int                 `json:"ranks"` // the job's size as the ranks saw it; 0 when none wrote
	Reported   int                 `json:"reported"`
	Missing    []int               `json:"missing"`
	Mode       string              `json:"mode"`
	Checked    map[string]uint64   `json:"checked"`
	Unchecked  map[string]uint64   `json:"unchecked"`
	Undecoded  map[string]int      `json:"undecoded,omitempty"`
	Mismatches uint64              `json:"mismatches"`
	Corrupt    uint64              `json:"corrupt"`
	Injected   uint64              `json:"injected"`
	Repaired   uint64              `json:"repaired"`
	Unrepaired uint64              `json:"unrepaired"`
	Findings   int                 `json:"findings"`             // kept in the rows
	Suppressed int                 `json:"suppressed"`           // counted, not kept
	Encryption *ranksum.Encryption `json:"encryption,omitempty"` // -encrypt: the ranks' counts summed
	// -replicate: the processes' counts summed.
	Replication *ranksum.Replication `json:"replication,omitempty"`
	Rows        []json.RawMessage    `json:"rows"`
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
		m.Encryption = addEncryption(m.Encryption, r.Encryption)
		m.Replication = addReplication(m.Replication, r.Replication)
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

// addEncryption adds a rank's encryption counts to the job's; the
// settings are every rank's alike.
func addEncryption(to, from *ranksum.Encryption) *ranksum.Encryption {
	if from == nil {
		return to
	}
	if to == nil {
		to = &ranksum.Encryption{Keys: from.Keys, Nodes: from.Nodes, Simulated: from.Simulated, Algorithm: from.Algorithm,
			Allgathers: map[string]uint64{}, Clear: map[string]uint64{}}
	}
	addCounts(to.Allgathers, from.Allgathers)
	addCounts(to.Clear, from.Clear)
	to.Packed += from.Packed
	to.Sealed += from.Sealed
	to.SealedB += from.SealedB
	to.Opened += from.Opened
	to.OpenedB += from.OpenedB
	to.Tampered += from.Tampered
	to.OneNode += from.OneNode
	return to
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
		for _, line := range encryptionLines(m.Encryption) {
			fmt.Fprintln(&b, line)
		}
		for _, line := range replicationLines(m, rows) {
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
	if e := m.Encryption; e != nil && e.Tampered > 0 {
		found = append(found, counted(e.Tampered, "tampered ciphertext"))
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

// encryptionLines say what -encrypt did: the all-gathers encrypted, by
// algorithm, and what crossed between nodes in the clear.
func encryptionLines(e *ranksum.Encryption) []string {
	if e == nil {
		return nil
	}
	var total uint64
	for _, n := range e.Allgathers {
		total += n
	}
	nodes := counted(uint64(e.Nodes), "node")
	if e.Simulated {
		nodes = counted(uint64(e.Nodes), "simulated node")
	}
	line := fmt.Sprintf("encrypted: %s between %s", countedAs(total, "all-gather", "all-gathers"), nodes)
	if len(e.Allgathers) > 0 {
		var parts []string
		for _, a := range sortedByCount(e.Allgathers) {
			parts = append(parts, fmt.Sprintf("%s %d", a, e.Allgathers[a]))
		}
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if e.OneNode > 0 {
		line += fmt.Sprintf("; %d within one node", e.OneNode)
	}
	lines := []string{line}
	if len(e.Clear) > 0 {
		var parts []string
		for _, k := range sortedByCount(e.Clear) {
			call, why, _ := strings.Cut(k, ": ")
			parts = append(parts, fmt.Sprintf("%d %s (%s)", e.Clear[k], call, why))
		}
		lines = append(lines, "in the clear between nodes: "+strings.Join(parts, ", "))
	}
	return lines
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
