package main

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/sigcheck/sigcheck/internal/ranksum"
)

func TestMpirunReplicateFlags(t *testing.T) {
	t.Setenv("SIGCHECK_LIB", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-replicate", "4", "--", "mpirun", "./app"}, "-replicate 4: want 2 (detection) or 3 (correction by vote)"},
		{[]string{"-replicate", "1", "--", "mpirun", "./app"}, "-replicate 1: want 2"},
		{[]string{"-replicate", "3", "-protocol", "gossip", "--", "mpirun", "./app"}, "-protocol gossip: want msgplushash or alltoall"},
		{[]string{"-replicate", "2", "-inject-replicas", "2", "--", "mpirun", "./app"}, "-inject-replicas 2: want replica numbers from 0 to 1"},
		{[]string{"-protocol", "alltoall", "--", "mpirun", "./app"}, "only matter with -replicate"},
		{[]string{"-inject-replicas", "0", "--", "mpirun", "./app"}, "only matter with -replicate"},
	} {
		o, e, code := sigcheck(t, append([]string{"mpirun"}, c.args...)...)
		if code != exitUsage || o != "" || strings.Count(e, "\n") != 1 || !strings.Contains(e, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line with %q", c.args, code, o, e, c.want)
		}
	}
}

func TestMpirunReplicateArgs(t *testing.T) {
	rep, proto, reps, err := replicateSettings(3, "AllToAll", "0,1")
	if err != nil {
		t.Fatal(err)
	}
	set := mpirunSettings{check: "types", onError: "abort", inject: "0.01", summaryDir: "/d",
		replicate: rep, protocol: proto, injectReplicas: reps}
	got := mpirunArgs([]string{"mpirun", "-np", "12", "./app"}, "/l.so", set, "")
	for _, v := range []string{"SIGCHECK_REPLICATE=3", "SIGCHECK_REPLICATE_PROTOCOL=alltoall", "SIGCHECK_INJECT_REPLICAS=0,1", "SIGCHECK_INJECT=0.01"} {
		if i := slices.Index(got, v); i < 1 || got[i-1] != "-x" {
			t.Errorf("%q lacks -x %s", got, v)
		}
	}
	if !slices.Contains(got, "GLIBC_TUNABLES="+replicaTunables) {
		t.Errorf("%q lacks glibc's settings for replicas", got)
	}
	if got[len(got)-1] != "./app" {
		t.Errorf("%q: the program is not last", got)
	}
	// -inject with the default -check types is the replicas' injector.
	if _, err := mpirunSettingsOf(flag.NewFlagSet("mpirun", flag.ContinueOnError), "types", "abort", 0.01, 1, true); err != nil {
		t.Errorf("-inject with -replicate and -check types: %v", err)
	}
}

// TestMpirunReplicateSummary: the totals over the processes, a row each
// when they disagreed, and what went uncompared.
func TestMpirunReplicateSummary(t *testing.T) {
	row := func(rank, replica, app int, found, corrected uint64) rankSummary {
		return rankSummary{Summary: ranksum.Summary{Rank: rank, Size: 4, Mode: "types", Checked: map[string]uint64{"recv": 10},
			Replication: &ranksum.Replication{Degree: 2, Protocol: "msgplushash", Replica: replica, AppRank: app, AppSize: 2,
				Node: "n" + string(rune('0'+replica)), Compared: 10, Found: found, Corrected: corrected, Uncorrectable: found,
				CollCompared: 3, NotCompared: map[string]uint64{"messages on a communicator with no cross-replica twin": 2}}},
			raw: []byte("{}")}
	}
	rows := []rankSummary{row(0, 0, 0, 0, 0), row(1, 0, 1, 1, 0), row(2, 1, 0, 0, 0), row(3, 1, 1, 1, 0)}
	m := mergeSummaries([]string{"mpirun"}, 0, rows)
	var b strings.Builder
	writeMpirunSummary(&b, m, rows, "/d", false)
	out := b.String()
	for _, want := range []string{
		"sigcheck: replicated: r = 2 (msgplushash), 2 ranks of the program: 40 messages compared, 2 disagreed, 0 corrected, 2 uncorrectable; 12 collective results voted on, 0 disagreed, 0 corrected\n",
		"sigcheck: rank  replica  of rank  node  compared  disagreed  corrected  uncorrectable  injected  collectives  disagreed  corrected\n",
		"sigcheck:    3        1        1  n1          10          1          0              1         0            3          0          0\n",
		"sigcheck: not compared between replicas: 8 messages on a communicator with no cross-replica twin\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
}

func TestMpirunReplicaTunables(t *testing.T) {
	for _, c := range []struct{ user, want string }{
		{"", replicaTunables},
		{"glibc.malloc.arena_max=2", "glibc.malloc.arena_max=2:" + replicaTunables},
		{"glibc.malloc.perturb=0", "glibc.malloc.perturb=0:glibc.malloc.tcache_count=0"},
		{"glibc.malloc.tcache_count=7:glibc.malloc.perturb=1", "glibc.malloc.tcache_count=7:glibc.malloc.perturb=1"},
	} {
		if got := tunablesFor(c.user); got != c.want {
			t.Errorf("tunablesFor(%q) = %q, want %q", c.user, got, c.want)
		}
	}
}
