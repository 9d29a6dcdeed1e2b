#!/usr/bin/env bash
# libsigcheck-bench.sh: the cost of cmd/libsigcheck (the PMPI library a
# user preloads into an unmodified MPI program) against the same program
# without it, in one run: every measurement is taken RUNS times under each
# of three configurations, alternating (the order rotates each round, so
# that no configuration is always first or last), and the summary gives
# medians and ratios against the issue's goals:
#
#   plain     the program alone;
#   types     mpirun -x LD_PRELOAD=libsigcheck.so (SIGCHECK_CHECK=types);
#   checksum  the same with SIGCHECK_CHECK=checksum;
#   repair    the same with SIGCHECK_CHECK=repair (NetPIPE and memory only).
#
# What is measured, on 2 ranks of one machine (Open MPI's own choice of
# transport: shared memory):
#   - NetPIPE (NPopenmpi, Debian netpipe-openmpi), one size a run (-l S
#     -u S -p 0): one-way latency of 1 B, bandwidth at 64 KiB, 1, 4 and
#     16 MiB. NetPIPE's output file (-o) has three columns (netpipe.c):
#     bytes, "Mbps" = bits / (t * 2^20), and t, the one-way time in
#     seconds (half the round trip, the least of 3 trials). The round
#     trips a trial are fixed (-n): LAT_REPS (50000) at 1 B, 256 MiB's
#     worth at the other sizes (at least 16). Left to itself NetPIPE
#     sizes its trials from 100 round trips timed at the start, which
#     on a busy machine, or while a rank is still warming up, can come
#     out at a few dozen, and the least of 3 trials that short is luck.
#     t is printed to 10 ns only, so both figures are taken from
#     the second column: latency = 8 * bytes / (Mbps * 2^20) s, bandwidth
#     in MB/s (10^6 B/s) = Mbps * 2^20 / 8 / 10^6.
#     Goals: types latency <= 2x plain; types bandwidth >= 95 % of plain
#     at every size >= 64 KiB; checksum bandwidth >= 80 % at >= 1 MiB.
#   - hpcc (Debian hpcc) on a 1x2 grid with a small hpccinf.txt written
#     below (HPCC_N, 3000 by default: 10-20 s a run on an idle 2-core
#     machine; hpcc's MPIRandomAccess, all small messages, slows down
#     most on a busy one), each run in a directory of its own: wall time
#     of the whole mpirun. Goal: types <= 1.05x plain. Its hpccoutf.txt
#     must show no failed test (Success=1, no FAILED, no failed residual
#     checks, no "(failed)" RandomAccess) and the same results as plain
#     (HPL's norms and residual, PTRANS's residual, MPIFFT's error,
#     RandomAccess's error counts, compared as printed).
#   - Peak RSS per rank (/usr/bin/time's %M around each rank; the larger
#     rank's): NetPIPE at 1 B and at the largest size, hpcc. Goal: the
#     library adds at most 32 MiB per rank.
#   - RSS growth: a C program (written below, built with mpicc) exchanges
#     MSGS rounds of 8-byte messages (blocking ping-pong, Isend/Irecv,
#     Sendrecv, a derived type), and prints VmRSS after MSGS/10 and MSGS
#     rounds; once with a fixed set of datatypes ("messages") and once
#     with a derived type made, used and freed every 1000 rounds ("types
#     made and freed"). Goal: nothing grows per message (growth under the
#     library at most a byte a round above plain's: 879 kB for 10^6).
#
# Rows are printed as they are measured; then the table of medians, with
# each configuration against plain (the ratio of the medians, or for
# memory the difference), and the goals. A goal is judged on the ratio of
# the medians; its line also gives the ratios round by round (each
# configuration against plain measured in the same round), their median
# and range, and says when that median would judge otherwise: when the
# machine's load changes during the run, the pairs are the steadier
# figure.
#
# Every run with the library must have checked messages (SIGCHECK_SUMMARY's
# rank-N.json) and found nothing: these are correct programs, so a report,
# a crash, a hang (TIMEOUT) or an hpcc result that differs is the
# library misbehaving. The script exits 1 if that happened (the reruns'
# commands are printed), 2 if something it needs is missing, 3 if a
# performance goal was missed and STRICT=1, else 0: on a shared machine a
# missed goal is something to look at, not a failure by itself. The load
# average is printed at the start, after each round and at the end.
#
#   scripts/libsigcheck-bench.sh              # RUNS=5
#   scripts/libsigcheck-bench.sh -quick       # RUNS=1, 64 KiB and 1 MiB, hpcc N=1000, 2e5 rounds: a CI smoke run
#   scripts/libsigcheck-bench.sh -json >r.json   # the table as JSON on standard output, the rest on standard error
#   RUNS=3 HPCC_N=2500 OUT=/tmp/lsb scripts/libsigcheck-bench.sh
#
# Environment: RUNS, HPCC_N, MSGS, LAT_REPS, BW_SIZES (bytes, spaces
# between), OUT (keeps the raw rows and every run's output; a new
# temporary directory otherwise, printed), LIB (a built libsigcheck.so;
# otherwise built here from the working tree, or with REV=commit from
# that commit's tree, by git archive), ON_ERROR (the library's
# SIGCHECK_ON_ERROR: report, so that a false report is counted rather than
# ending the run; or abort), TIMEOUT (seconds a run, 900), MPIRUN_ARGS
# (more mpirun options, e.g. "--mca btl tcp,self"), JSON=1 (as -json),
# STRICT=1.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
json=${JSON:-0}
for a in "$@"; do
  case $a in
  -quick | --quick) quick=1 ;;
  -json | --json) json=1 ;;
  -h | -help | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "libsigcheck-bench: unknown argument $a (want -quick, -json)" >&2
    exit 2
    ;;
  esac
done
if [[ $json == 1 ]]; then
  exec 3>&1 1>&2 # the JSON on standard output, everything else on standard error
fi

if ((quick)); then
  runs=${RUNS:-1}
  bw_sizes=${BW_SIZES:-"65536 1048576"}
  hpcc_n=${HPCC_N:-1000}
  msgs=${MSGS:-200000}
else
  runs=${RUNS:-5}
  bw_sizes=${BW_SIZES:-"65536 1048576 4194304 16777216"}
  hpcc_n=${HPCC_N:-3000}
  msgs=${MSGS:-1000000}
fi
on_error=${ON_ERROR:-report}
lat_reps=${LAT_REPS:-50000}
tmo=${TIMEOUT:-900}
configs=(plain types checksum repair)

need() { # command, Debian package
  command -v "$1" >/dev/null || {
    echo "libsigcheck-bench: $1 not found (apt-get install -y $2)" >&2
    exit 2
  }
}
need mpirun openmpi-bin
need mpicc libopenmpi-dev
need NPopenmpi netpipe-openmpi
need hpcc hpcc
need timeout coreutils
[[ -x /usr/bin/time ]] || {
  echo "libsigcheck-bench: /usr/bin/time not found (apt-get install -y time)" >&2
  exit 2
}
[[ -n ${LIB:-} ]] || need go golang-go

out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/libsigcheck-bench.XXXXXX")}
mkdir -p "$out"
out=$(cd "$out" && pwd)
: >"$out/rows.txt"
: >"$out/problems.txt"
: >"$out/notes.txt"

load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $load_start; $runs runs; raw rows and every run's output in $out"

if [[ -n ${LIB:-} ]]; then
  lib=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
  echo "# library: $lib (LIB)"
elif [[ -n ${REV:-} ]]; then
  # A commit's tree, not the working tree (which others may be editing).
  rev=$(git rev-parse --verify "$REV^{commit}")
  rm -rf "$out/src"
  mkdir -p "$out/src"
  git archive "$rev" | tar -x -C "$out/src"
  lib=$out/libsigcheck.so
  (cd "$out/src" && go build -buildmode=c-shared -tags mpi -o "$lib" ./cmd/libsigcheck)
  echo "# library: built from commit $rev (REV=$REV)"
else
  lib=$out/libsigcheck.so
  go build -buildmode=c-shared -tags mpi -o "$lib" ./cmd/libsigcheck
  dirty=$(git status --porcelain -- cmd/libsigcheck sig go.mod go.sum 2>/dev/null | wc -l)
  echo "# library: built from the working tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?')$( ((dirty)) && echo ", with $dirty uncommitted files under cmd/libsigcheck and sig (REV=HEAD builds the commit alone)")"
fi

# Each rank runs under /usr/bin/time, which writes its peak RSS (kB) and
# wall seconds to PREFIX.RANK. mpirun's -x LD_PRELOAD reaches this shell
# and time as well as the program: neither calls MPI_Init, so the library
# stays idle in them (and time counts only its child).
cat >"$out/rss.sh" <<'SH'
#!/bin/sh
prefix=$1
shift
exec /usr/bin/time -f '%M %e' -o "$prefix.${OMPI_COMM_WORLD_RANK:-0}" "$@"
SH
chmod +x "$out/rss.sh"

cat >"$out/rssgrow.c" <<'C'
// rssgrow: 2 ranks exchange N rounds of 8-byte messages, cycling through a
// blocking ping-pong, Isend/Irecv/Waitall both ways, Sendrecv of 8 bytes
// and Sendrecv of a derived type (2 ints, made once); with CHURN > 0, every
// CHURN-th round's derived type is instead made, used and freed. Prints
// "rss RANK ROUND VmRSS VmHWM" (kB, /proc/self/status) after N/10 and N
// rounds.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long status_kb(const char *key) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	if (!f) return -1;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			v = atol(line + n + 1);
			break;
		}
	fclose(f);
	return v;
}

int main(int argc, char **argv) {
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	long churn = argc > 2 ? atol(argv[2]) : 0;
	if (size != 2) {
		if (rank == 0) fprintf(stderr, "rssgrow: run on 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int peer = 1 - rank;
	MPI_Datatype two;
	MPI_Type_contiguous(2, MPI_INT, &two);
	MPI_Type_commit(&two);
	double out = rank, in = 0;
	int iout[2] = {rank, rank}, iin[2];
	for (long i = 1; i <= n; i++) {
		switch (i % 4) {
		case 0:
			if (rank == 0) {
				MPI_Send(&out, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
				MPI_Recv(&in, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(&in, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(&out, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
			}
			break;
		case 1: {
			MPI_Request r[2];
			MPI_Irecv(&in, 1, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &r[0]);
			MPI_Isend(&out, 1, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &r[1]);
			MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
			break;
		}
		case 2:
			MPI_Sendrecv(&out, 8, MPI_BYTE, peer, 3, &in, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			break;
		case 3:
			if (churn > 0 && i % churn == 3) {
				MPI_Datatype t;
				MPI_Type_vector(1, 2, 2, MPI_INT, &t);
				MPI_Type_commit(&t);
				MPI_Sendrecv(iout, 1, t, peer, 4, iin, 1, t, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Type_free(&t);
			} else {
				MPI_Sendrecv(iout, 1, two, peer, 4, iin, 1, two, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
			break;
		}
		if (i == n / 10 || i == n) {
			printf("rss %d %ld %ld %ld\n", rank, i, status_kb("VmRSS"), status_kb("VmHWM"));
			fflush(stdout);
		}
	}
	MPI_Type_free(&two);
	MPI_Finalize();
	return 0;
}
C
mpicc -O2 -Wall -o "$out/rssgrow" "$out/rssgrow.c"

# hpcc's input: Debian's example (/usr/share/doc/hpcc/examples/_hpccinf.txt)
# with one N of HPCC_N and a 1x2 process grid.
hpccinf() {
  cat <<EOF
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
$hpcc_n      Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
EOF
}

# shellcheck disable=SC2206
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to none ${MPIRUN_ARGS:-})

problem() { echo "$*" >>"$out/problems.txt"; echo "# PROBLEM: $*"; }

# launch CONFIG DIR PROG ARGS...: runs PROG on 2 ranks under CONFIG with
# DIR as its working directory. DIR gets cmd (the command, to rerun it),
# log (both ranks' output), rss.0 and rss.1, wall (seconds, mpirun's) and,
# under the library, sum/rank-N.json. Fails, after saying why in
# problems.txt, if the run failed, or under the library if the library
# reported anything or checked nothing.
launch() {
  local cfg=$1 d=$2
  shift 2
  mkdir -p "$d"
  local x=()
  if [[ $cfg != plain ]]; then
    rm -rf "$d/sum"
    mkdir -p "$d/sum"
    x=(-x "LD_PRELOAD=$lib" -x "SIGCHECK_CHECK=$cfg" -x "SIGCHECK_ON_ERROR=$on_error" -x "SIGCHECK_SUMMARY=$d/sum")
  fi
  local cmd=("${mpirun[@]}" "${x[@]}" "$@")
  printf 'cd %q &&' "$d" >"$d/cmd"
  printf ' %q' "${cmd[@]}" >>"$d/cmd"
  echo >>"$d/cmd"
  rm -f "$d"/rss.*
  local rc=0 t0=$EPOCHREALTIME
  (cd "$d" && timeout -k 10 "$tmo" "${mpirun[@]}" "${x[@]}" "$out/rss.sh" "$d/rss" "$@") >"$d/log" 2>&1 || rc=$?
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }' >"$d/wall"
  local bad=0
  if [[ $rc == 124 || $rc == 137 ]]; then
    problem "$cfg: $* hung: killed after ${tmo} s (log $d/log; rerun: $(cat "$d/cmd"))"
    bad=1
  elif [[ $rc != 0 ]]; then
    problem "$cfg: $* failed, exit $rc (log $d/log; rerun: $(cat "$d/cmd"))"
    bad=1
  fi
  if [[ $cfg != plain ]]; then
    if grep -q '^sigcheck:' "$d/log"; then
      problem "$cfg: the library reported on a correct program, $*: $(grep -m 3 '^sigcheck:' "$d/log" | tr '\n' ' ') (log $d/log; rerun: $(cat "$d/cmd"))"
      bad=1
    fi
    if ((!bad)); then
      local r
      for r in 0 1; do
        local s=$d/sum/rank-$r.json
        if [[ ! -s $s ]]; then
          problem "$cfg: rank $r wrote no summary: was the library loaded? $* (rerun: $(cat "$d/cmd"))"
          bad=1
          continue
        fi
        # rank-N.json is indented JSON (report.go's Summary).
        local v
        v=$(awk '
          /^  "checked": \{$/ { c = 1; next }
          /^  "unchecked": \{$/ { u = 1; next }
          /^  \}/ { c = u = 0 }
          c { gsub(/[",]/, ""); n += $2 }
          u { gsub(/^ +|,$/, ""); un = un (un == "" ? "" : "; ") $0 }
          /^  "mismatches":/ { gsub(/,/, ""); m = $2 }
          /^  "corrupt":/ { gsub(/,/, ""); k = $2 }
          /^  "findings":/ { f = ($2 ~ /^(null|\[\])/) ? 0 : 1 }
          END { printf "%d %d %d %d %s\n", n, m, k, f, un }' "$s")
        local nchecked nmis ncor nfind rest
        read -r nchecked nmis ncor nfind rest <<<"$v"
        if ((nmis || ncor || nfind)); then
          problem "$cfg: rank $r's summary shows $nmis mismatches, $ncor corrupt messages on a correct program, $* ($s; rerun: $(cat "$d/cmd"))"
          bad=1
        elif ((nchecked == 0)); then
          problem "$cfg: rank $r checked no message, $* ($s; rerun: $(cat "$d/cmd"))"
          bad=1
        fi
        [[ -n ${rest:-} ]] && echo "$cfg $(basename "$1"): passed unchecked: $rest" >>"$out/notes.txt"
      done
    fi
  fi
  return $bad
}

# peak RSS of the larger rank, MiB.
peak() { cat "$1"/rss.* 2>/dev/null | awk '$1 > m { m = $1 } END { printf "%.1f\n", m / 1024 }'; }
hsize() { awk -v s="$1" 'BEGIN { if (s >= 1048576) printf "%g MiB", s / 1048576; else if (s >= 1024) printf "%g KiB", s / 1024; else printf "%d B", s }'; }
row() { echo "$*" >>"$out/rows.txt"; } # metric config key value round

# netpipe CONFIG SIZE RUN
netpipe() {
  local cfg=$1 s=$2 run=$3 d=$out/np/$1-$2-$3
  local n=$((s == 1 ? lat_reps : 268435456 / s))
  ((n >= 16)) || n=16
  launch "$cfg" "$d" NPopenmpi -l "$s" -u "$s" -p 0 -n "$n" -o "$d/np.out" || return 0
  local mbps
  mbps=$(awk -v s="$s" '$1 == s { print $2 }' "$d/np.out")
  if [[ -z $mbps ]]; then
    problem "$cfg: NetPIPE wrote no row for $s bytes ($d/np.out; rerun: $(cat "$d/cmd"))"
    return 0
  fi
  local v unit metric
  if ((s == 1)); then
    metric=lat unit=us
    v=$(awk -v m="$mbps" -v s="$s" 'BEGIN { printf "%.4f", 8 * s / (m * 1048576) * 1e6 }')
  else
    metric=bw unit=MB/s
    v=$(awk -v m="$mbps" 'BEGIN { printf "%.1f", m * 1048576 / 8 / 1e6 }')
  fi
  local rss
  rss=$(peak "$d")
  row "$metric" "$cfg" "$s" "$v" "$run"
  row rss "$cfg" "np$s" "$rss" "$run"
  printf 'run %d/%d  %-8s %-9s %-8s %12s %-5s  peak RSS %7.1f MiB\n' "$run" "$runs" netpipe "$cfg" "$(hsize "$s")" "$v" "$unit" "$rss"
}

# hpcc's results, as printed: what must not change under the library.
hpcc_fields='Success HPL_N HPL_RnormI HPL_Anorm1 HPL_AnormI HPL_Xnorm1 HPL_XnormI HPL_BnormI PTRANS_residual MPIFFT_maxErr MPIRandomAccess_Errors MPIRandomAccess_LCG_Errors'
hpcc_ref=

# hpcc CONFIG RUN
hpcc_run() {
  local cfg=$1 run=$2 d=$out/hpcc/$1-$2
  mkdir -p "$d"
  rm -f "$d/hpccoutf.txt"
  hpccinf >"$d/hpccinf.txt"
  launch "$cfg" "$d" hpcc || return 0
  local o=$d/hpccoutf.txt
  if [[ ! -s $o ]] || ! grep -q 'End of HPC Challenge tests' "$o"; then
    problem "$cfg: hpcc ended without finishing $o (rerun: $(cat "$d/cmd"))"
    return 0
  fi
  # Failed tests: Success=0, FAILED (HPL, PTRANS), "N tests completed and
  # failed residual checks" with N > 0, RandomAccess's "(failed)".
  local failed
  failed=$(awk '
    /^Success=/ { split($0, a, "="); if (a[2] != 1) f++ }
    /FAILED/ { f++ }
    /tests completed and failed residual checks/ { f += $1 }
    /\(failed\)/ { f++ }
    END { print f + 0 }' "$o")
  local f
  for f in $hpcc_fields; do
    grep -m 1 "^$f=" "$o" || echo "$f=(missing)"
  done >"$d/results.txt"
  local same=-
  if [[ $cfg == plain && -z $hpcc_ref && $failed == 0 ]]; then
    hpcc_ref=$d/results.txt
  fi
  if [[ -n $hpcc_ref ]]; then
    if cmp -s "$hpcc_ref" "$d/results.txt"; then
      same=same
    else
      same=DIFFERENT
      local what
      what=$(diff "$hpcc_ref" "$d/results.txt" | grep '^>' | cut -c3- | tr '\n' ' ')
      if [[ $cfg == plain ]]; then
        echo "hpcc: plain's results differ from run to run: $what ($d)" >>"$out/notes.txt"
      else
        problem "$cfg: hpcc's results differ from plain's ($hpcc_ref): $what ($o; rerun: $(cat "$d/cmd"))"
      fi
    fi
  fi
  if ((failed)); then
    if [[ $cfg == plain ]]; then
      echo "hpcc: $failed tests failed without the library ($o)" >>"$out/notes.txt"
    else
      problem "$cfg: $failed hpcc tests failed ($o; rerun: $(cat "$d/cmd"))"
    fi
  fi
  local wall rss hpl ra
  wall=$(cat "$d/wall")
  rss=$(peak "$d")
  hpl=$(sed -n 's/^HPL_time=//p' "$o")
  ra=$(sed -n 's/^MPIRandomAccess_time=//p' "$o")
  row wall "$cfg" hpcc "$wall" "$run"
  row hpl "$cfg" hpcc "${hpl:-nan}" "$run"
  row ra "$cfg" hpcc "${ra:-nan}" "$run"
  row rss "$cfg" hpcc "$rss" "$run"
  row failed "$cfg" hpcc "$failed" "$run"
  printf 'run %d/%d  %-8s %-9s N=%-6s %10.2f s      peak RSS %7.1f MiB  HPL %s s, MPIRandomAccess %s s, %d failed, results %s\n' \
    "$run" "$runs" hpcc "$cfg" "$hpcc_n" "$wall" "$rss" "${hpl:-?}" "${ra:-?}" "$failed" "$same"
}

# rssgrow CONFIG CHURN NAME
rssgrow() {
  local cfg=$1 churn=$2 name=$3 d=$out/rss/$1-$2
  launch "$cfg" "$d" "$out/rssgrow" "$msgs" "$churn" || return 0
  local g
  # growth: the larger rank's VmRSS after MSGS rounds minus after MSGS/10.
  g=$(awk -v a="$((msgs / 10))" -v b="$msgs" '
    $1 == "rss" && $3 == a { r0[$2] = $4 }
    $1 == "rss" && $3 == b { r1[$2] = $4; h[$2] = $5 }
    END {
      for (r in r1) { if (!(r in r0)) continue; d = r1[r] - r0[r]; if (n++ == 0 || d > g) g = d; if (h[r] > hw) hw = h[r]; s = s sprintf(" rank %s %d->%d kB", r, r0[r], r1[r]) }
      if (n == 2) printf "%d %.1f%s\n", g, hw / 1024, s
    }' "$d/log")
  if [[ -z $g ]]; then
    problem "$cfg: rssgrow printed no figures ($d/log; rerun: $(cat "$d/cmd"))"
    return 0
  fi
  local grow hwm detail
  read -r grow hwm detail <<<"$g"
  row grow "$cfg" "$name" "$grow" 1
  row rss "$cfg" "rss-$name" "$hwm" 1
  printf 'rss      rssgrow  %-9s %-24s VmRSS after %d and %d rounds: %s; growth %d kB, VmHWM %.1f MiB\n' \
    "$cfg" "$name" "$((msgs / 10))" "$msgs" "$detail" "$grow" "$hwm"
}

echo "# NetPIPE sizes: 1 B (latency) and $bw_sizes (bandwidth); hpcc N=$hpcc_n on 1x2; rssgrow $msgs rounds"
for run in $(seq "$runs"); do
  # This round's order: the configurations rotated by one each round.
  order=()
  for i in 0 1 2 3; do order+=("${configs[$(((run - 1 + i) % 4))]}"); done
  for s in 1 $bw_sizes; do
    for cfg in "${order[@]}"; do netpipe "$cfg" "$s" "$run"; done
  done
  for cfg in "${order[@]}"; do [[ $cfg == repair ]] || hpcc_run "$cfg" "$run"; done
  echo "# round $run of $runs done (order ${order[*]}), load $(load)"
done
for cfg in "${configs[@]}"; do rssgrow "$cfg" 0 messages; done
for cfg in "${configs[@]}"; do rssgrow "$cfg" 1000 types-made-and-freed; done
load_end=$(load)

# Medians per metric, configuration and key: "metric config key median n min max".
sort -k1,1 -k2,2 -k3,3 -k4,4g "$out/rows.txt" | awk -v CONVFMT=%.10g -v OFMT=%.10g '
  function flush() {
    if (key == "") return
    m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    printf "%s %s %d %s %s\n", key, m, n, a[1], a[n]
  }
  { k = $1 " " $2 " " $3; if (k != key) { flush(); key = k; n = 0 }; a[++n] = $4 }
  END { flush() }' >"$out/medians.txt"
declare -A med cnt spread
while read -r m c k v n lo hi; do
  med["$m $c $k"]=$v
  cnt["$m $c $k"]=$n
  spread["$m $c $k"]="$lo–$hi"
done <"$out/medians.txt"

jrows=()
jnum() { [[ -n $1 && $1 != nan ]] && echo "${1#+}" || echo null; }
# line METRIC KEY LABEL UNIT HOW: one row of the table, from the medians;
# HOW is ratio (config / plain) or diff (config − plain).
line() {
  local m=$1 k=$2 label=$3 unit=$4 how=$5
  local p=${med["$m plain $k"]:-} t=${med["$m types $k"]:-} c=${med["$m checksum $k"]:-} r=${med["$m repair $k"]:-}
  local rt rc rr
  cmpf() { # value, plain
    [[ -z $1 || -z $2 || $1 == nan || $2 == nan ]] && return
    if [[ $how == ratio ]]; then awk -v a="$1" -v b="$2" 'BEGIN { if (b != 0) printf "%.3f", a / b }'; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", a - b }'; fi
  }
  rt=$(cmpf "$t" "$p")
  rc=$(cmpf "$c" "$p")
  rr=$(cmpf "$r" "$p")
  local sfx=x
  [[ $how == diff ]] && sfx=" $unit"
  printf '%-36s %-5s %10s %10s %10s %10s   %14s %14s %14s   %s\n' "$label" "$unit" "${p:-n/a}" "${t:-n/a}" "${c:-n/a}" "${r:-n/a}" \
    "${rt:+$rt$sfx}" "${rc:+$rc$sfx}" "${rr:+$rr$sfx}" "${cnt["$m types $k"]:-0} runs; plain ${spread["$m plain $k"]:-}, types ${spread["$m types $k"]:-}, checksum ${spread["$m checksum $k"]:-}, repair ${spread["$m repair $k"]:-}"
  jrows+=("$(printf '{"metric": "%s", "key": "%s", "label": "%s", "unit": "%s", "plain": %s, "types": %s, "checksum": %s, "repair": %s, "compare": "%s", "types_vs_plain": %s, "checksum_vs_plain": %s, "repair_vs_plain": %s, "runs": %s}' \
    "$m" "$k" "$label" "$unit" "$(jnum "$p")" "$(jnum "$t")" "$(jnum "$c")" "$(jnum "$r")" "$how" "$(jnum "$rt")" "$(jnum "$rc")" "$(jnum "$rr")" "${cnt["$m types $k"]:-0}")")
}

echo
echo "# medians of $runs runs (load at the start $load_start, at the end $load_end); vs plain: ratio, or difference for memory"
printf '%-36s %-5s %10s %10s %10s %10s   %14s %14s %14s   %s\n' "" unit plain types checksum repair "types/plain" "checksum/plain" "repair/plain" "spread (min–max)"
line lat 1 "NetPIPE latency 1 B, one way" us ratio
for s in $bw_sizes; do line bw "$s" "NetPIPE bandwidth $(hsize "$s")" MB/s ratio; done
line wall hpcc "hpcc N=$hpcc_n wall time" s ratio
line hpl hpcc "  hpcc HPL_time" s ratio
line ra hpcc "  hpcc MPIRandomAccess_time" s ratio
line failed hpcc "hpcc failed tests" tests diff
rss_keys="np1"
largest=${bw_sizes##* }
rss_keys+=" np$largest hpcc rss-messages rss-types-made-and-freed"
line rss np1 "peak RSS/rank, NetPIPE 1 B" MiB diff
line rss "np$largest" "peak RSS/rank, NetPIPE $(hsize "$largest")" MiB diff
line rss hpcc "peak RSS/rank, hpcc" MiB diff
line rss rss-messages "peak RSS/rank, rssgrow" MiB diff
line rss rss-types-made-and-freed "peak RSS/rank, rssgrow + types" MiB diff
line grow messages "RSS growth, rounds $((msgs / 10)) to $msgs" kB diff
line grow types-made-and-freed "  the same, a type made/freed/1000" kB diff

# Goals.
echo
echo "# goals"
jgoals=()
missed=0
# goal TEXT VALUE OP LIMIT [PAIRED]: VALUE OP LIMIT is the goal (OP <= or
# >=). PAIRED, for a ratio, is "median min max" of the ratios round by
# round (each configuration against plain measured in the same round,
# seconds apart): on a busy machine a cross-check of the ratio of the
# medians, which decides; the line says when the two disagree.
goal() {
  local text=$1 v=$2 op=$3 lim=$4 pm pl ph ok pok extra= jp=
  read -r pm pl ph <<<"${5:-}"
  if [[ -z $v || $v == nan ]]; then
    ok=null
    printf '  %-8s %s: no figure\n' "[n/a]" "$text"
  else
    ok=$(awk -v v="$v" -v l="$lim" -v op="$op" 'BEGIN { print ((op == "<=") ? (v <= l) : (v >= l)) ? "true" : "false" }')
    [[ $ok == false ]] && missed=1
    if [[ -n ${pm:-} ]]; then
      pok=$(awk -v v="$pm" -v l="$lim" -v op="$op" 'BEGIN { print ((op == "<=") ? (v <= l) : (v >= l)) ? "true" : "false" }')
      extra="; round by round: median $pm, $pl–$ph"
      [[ $pok != "$ok" ]] && extra+=", which $([[ $pok == true ]] && echo meets || echo misses) the goal"
      jp=$(printf ', "paired_median": %s, "paired_min": %s, "paired_max": %s' "$pm" "$pl" "$ph")
    fi
    printf '  %-8s %s: %s (goal %s %s%s)\n' "$([[ $ok == true ]] && echo '[met]' || echo '[MISSED]')" "$text" "$v" "$op" "$lim" "$extra"
  fi
  jgoals+=("$(printf '{"goal": "%s", "value": %s, "op": "%s", "limit": %s, "met": %s%s}' "$text" "$(jnum "$v")" "$op" "$lim" "$ok" "$jp")")
}
ratio() { # metric config key
  local a=${med["$1 $2 $3"]:-} b=${med["$1 plain $3"]:-}
  [[ -n $a && -n $b ]] && awk -v a="$a" -v b="$b" 'BEGIN { if (b != 0) printf "%.3f", a / b }'
}
paired() { # metric config key: "median min max" of config/plain, round by round
  awk -v m="$1" -v c="$2" -v k="$3" '
    $1 == m && $3 == k && $2 == "plain" { p[$5] = $4 }
    $1 == m && $3 == k && $2 == c { x[$5] = $4 }
    END {
      for (r in x) if ((r in p) && p[r] != 0) {
        v = x[r] / p[r]
        for (j = n; j > 0 && a[j] > v; j--) a[j + 1] = a[j]
        a[j + 1] = v; n++
      }
      if (n) printf "%.3f %.3f %.3f\n", (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, a[1], a[n]
    }' "$out/rows.txt"
}
goal "types: NetPIPE 1 B latency, types/plain" "$(ratio lat types 1)" "<=" 2 "$(paired lat types 1)"
for s in $bw_sizes; do
  goal "types: NetPIPE bandwidth $(hsize "$s"), types/plain" "$(ratio bw types "$s")" ">=" 0.95 "$(paired bw types "$s")"
done
for s in $bw_sizes; do
  ((s >= 1048576)) || continue
  goal "checksum: NetPIPE bandwidth $(hsize "$s"), checksum/plain" "$(ratio bw checksum "$s")" ">=" 0.80 "$(paired bw checksum "$s")"
  goal "repair: NetPIPE bandwidth $(hsize "$s"), repair/plain" "$(ratio bw repair "$s")" ">=" 0.70 "$(paired bw repair "$s")"
done
goal "types: hpcc wall time, types/plain" "$(ratio wall types hpcc)" "<=" 1.05 "$(paired wall types hpcc)"
# Memory: the most the library added to a rank's peak over the workloads.
for cfg in types checksum repair; do
  worst=
  for k in $rss_keys; do
    a=${med["rss $cfg $k"]:-}
    b=${med["rss plain $k"]:-}
    [[ -n $a && -n $b ]] || continue
    worst=$(awk -v a="$a" -v b="$b" -v w="$worst" 'BEGIN { d = a - b; printf "%.1f", (w == "" || d > w) ? d : w }')
  done
  goal "$cfg: peak RSS added per rank, most over the workloads (MiB)" "$worst" "<=" 32
done
grow_limit=$(((msgs - msgs / 10) / 1024)) # a byte a round, in kB,
((grow_limit >= 64)) || grow_limit=64      # but a few pages at least
for cfg in types checksum repair; do
  for name in messages types-made-and-freed; do
    a=${med["grow $cfg $name"]:-}
    b=${med["grow plain $name"]:-}
    d=
    [[ -n $a && -n $b ]] && d=$(awk -v a="$a" -v b="$b" 'BEGIN { print a - b }')
    goal "$cfg: RSS growth over plain's, rounds $((msgs / 10)) to $msgs, $name (kB)" "$d" "<=" "$grow_limit"
  done
done

nprob=$(wc -l <"$out/problems.txt")
echo
if [[ -s $out/notes.txt ]]; then
  echo "# notes"
  sort "$out/notes.txt" | uniq -c | sed 's/^ */  /'
fi
if ((nprob)); then
  echo "# $nprob problems: runs that failed or hung, reports on a correct program, changed hpcc results (under plain, not the library's doing):"
  sed 's/^/  /' "$out/problems.txt"
else
  echo "# every run with the library checked messages and reported nothing; hpcc's results were the same as without it"
fi
echo "# raw rows: $out/rows.txt; medians: $out/medians.txt; every run's command, output and summaries under $out"

if [[ $json == 1 ]]; then
  {
    printf '{\n  "date": "%s",\n  "cores": %d,\n  "runs": %d,\n  "quick": %s,\n' "$(date -u +%FT%TZ)" "$(nproc)" "$runs" "$([[ $quick == 1 ]] && echo true || echo false)"
    printf '  "load_start": "%s",\n  "load_end": "%s",\n  "hpcc_n": %d,\n  "rssgrow_rounds": %d,\n  "out": "%s",\n' "$load_start" "$load_end" "$hpcc_n" "$msgs" "$out"
    printf '  "table": [\n'
    for i in "${!jrows[@]}"; do printf '    %s%s\n' "${jrows[$i]}" "$([[ $i -lt $((${#jrows[@]} - 1)) ]] && echo ,)"; done
    printf '  ],\n  "goals": [\n'
    for i in "${!jgoals[@]}"; do printf '    %s%s\n' "${jgoals[$i]}" "$([[ $i -lt $((${#jgoals[@]} - 1)) ]] && echo ,)"; done
    printf '  ],\n  "problems": ['
    sep=
    while IFS= read -r p; do
      printf '%s\n    "%s"' "$sep" "$(sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/ /g' <<<"$p")"
      sep=,
    done <"$out/problems.txt"
    printf '\n  ]\n}\n'
  } >&3
fi
if ((nprob)); then exit 1; fi
if ((missed)) && [[ ${STRICT:-0} == 1 ]]; then exit 3; fi
exit 0
