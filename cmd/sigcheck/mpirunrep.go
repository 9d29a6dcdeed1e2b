package main

// sigcheck mpirun -replicate: the flags that ask the library for
// replication (SIGCHECK_REPLICATE and its companions), and the lines that
// say what the replicas compared, as sigcheck redundancy counts it.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sigcheck/sigcheck/internal/ranksum"
)

// replicateSettings checks -replicate's flags as the library would, and
// returns them as the library's variables want them ("" when not given).
func replicateSettings(r int, protocol, replicas string) (rep, proto, reps string, err error) {
	if r == 0 {
		if protocol != "" || replicas != "" {
			return "", "", "", usageErrorf("-protocol and -inject-replicas only matter with -replicate")
		}
		return "", "", "", nil
	}
	if r != 2 && r != 3 {
		return "", "", "", usageErrorf("-replicate %d: want 2 (detection) or 3 (correction by vote)", r)
	}
	switch proto = strings.ToLower(protocol); proto {
	case "", "msgplushash", "alltoall":
	default:
		return "", "", "", usageErrorf("-protocol %s: want msgplushash or alltoall", protocol)
	}
	if replicas != "" {
		for _, f := range strings.Split(replicas, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || k < 0 || k >= r {
				return "", "", "", usageErrorf("-inject-replicas %s: want replica numbers from 0 to %d, separated by commas", replicas, r-1)
			}
		}
	}
	return strconv.Itoa(r), proto, replicas, nil
}

// replicaTunables are glibc's settings that make the bytes malloc returns
// the same in every replica: its per-thread cache off (it hands memory
// back untouched) and a perturb byte (memory malloc returns is filled with
// its complement). A program that sends bytes it never wrote (a buffer
// from malloc, partly filled, as hpcc's RandomAccess check and latency
// test do) would otherwise send what the heap held, which differs between
// processes, and the replicas' vote would disagree where nothing went
// wrong. A correct program never reads those bytes, so its results cannot
// change. Settings of the user's own GLIBC_TUNABLES come first and win.
const replicaTunables = "glibc.malloc.tcache_count=0:glibc.malloc.perturb=92"

// tunablesFor merges replicaTunables into the user's GLIBC_TUNABLES: a
// key the user set is left as the user set it.
func tunablesFor(user string) string {
	if user == "" {
		return replicaTunables
	}
	out := user
	for _, kv := range strings.Split(replicaTunables, ":") {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.Contains(":"+user, ":"+k+"=") {
			out += ":" + kv
		}
	}
	return out
}

// replicateVars are the library's variables for the settings.
func replicateVars(set mpirunSettings) []string {
	if set.replicate == "" {
		return nil
	}
	vars := []string{"SIGCHECK_REPLICATE=" + set.replicate, "GLIBC_TUNABLES=" + tunablesFor(set.tunables)}
	if set.protocol != "" {
		vars = append(vars, "SIGCHECK_REPLICATE_PROTOCOL="+set.protocol)
	}
	if set.injectReplicas != "" {
		vars = append(vars, "SIGCHECK_INJECT_REPLICAS="+set.injectReplicas)
	}
	return vars
}

// addReplication adds a process's counts to the job's; the settings are
// every process's alike.
func addReplication(to, from *ranksum.Replication) *ranksum.Replication {
	if from == nil {
		return to
	}
	if to == nil {
		to = &ranksum.Replication{Degree: from.Degree, Protocol: from.Protocol, AppSize: from.AppSize, Replica: -1, AppRank: -1,
			NotCompared: map[string]uint64{}}
	}
	to.Compared += from.Compared
	to.Found += from.Found
	to.Corrected += from.Corrected
	to.Uncorrectable += from.Uncorrectable
	to.Injected += from.Injected
	to.ClaimsSent += from.ClaimsSent
	to.CollCompared += from.CollCompared
	to.CollFound += from.CollFound
	to.CollCorrected += from.CollCorrected
	to.Agreed += from.Agreed
	to.Wildcards += from.Wildcards
	addCounts(to.NotCompared, from.NotCompared)
	return to
}

// replicationLines say what the replicas compared: the totals, a row per
// process when they disagreed somewhere, and what went uncompared.
func replicationLines(m *mpirunSummary, rows []rankSummary) []string {
	r := m.Replication
	if r == nil {
		return nil
	}
	line := fmt.Sprintf("replicated: r = %d (%s), %s of the program: %s compared, %d disagreed, %d corrected, %d uncorrectable; "+
		"%s voted on, %d disagreed, %d corrected", r.Degree, r.Protocol, counted(uint64(r.AppSize), "rank"),
		counted(r.Compared, "message"), r.Found, r.Corrected, r.Uncorrectable,
		countedAs(r.CollCompared, "collective result", "collective results"), r.CollFound, r.CollCorrected)
	if r.Injected > 0 {
		line += fmt.Sprintf(" (-inject flipped a bit in %s)", countedAs(r.Injected, "message sent", "messages sent"))
	}
	lines := []string{line}
	if r.Found+r.CollFound+r.Uncorrectable > 0 {
		var b strings.Builder
		cells := [][]string{{"rank", "replica", "of rank", "node", "compared", "disagreed", "corrected", "uncorrectable",
			"injected", "collectives", "disagreed", "corrected"}}
		for _, row := range rows {
			x := row.Replication
			if x == nil {
				continue
			}
			cells = append(cells, []string{strconv.Itoa(row.Rank), strconv.Itoa(x.Replica), strconv.Itoa(x.AppRank), x.Node,
				strconv.FormatUint(x.Compared, 10), strconv.FormatUint(x.Found, 10), strconv.FormatUint(x.Corrected, 10),
				strconv.FormatUint(x.Uncorrectable, 10), strconv.FormatUint(x.Injected, 10), strconv.FormatUint(x.CollCompared, 10),
				strconv.FormatUint(x.CollFound, 10), strconv.FormatUint(x.CollCorrected, 10)})
		}
		right := map[int]bool{}
		for i := range cells[0] {
			right[i] = i != 3
		}
		table(&b, cells, right)
		lines = append(lines, strings.Split(strings.TrimRight(b.String(), "\n"), "\n")...)
	}
	if len(r.NotCompared) > 0 {
		var parts []string
		for _, k := range sortedByCount(r.NotCompared) {
			parts = append(parts, fmt.Sprintf("%d %s", r.NotCompared[k], k))
		}
		lines = append(lines, "not compared between replicas: "+strings.Join(parts, "; "))
	}
	return lines
}
