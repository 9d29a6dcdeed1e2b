#!/usr/bin/env bash
# libsigcheck-encrypt-bench.sh: MPI_Allgather encrypted by libsigcheck
# (SIGCHECK_ENCRYPT=1) against MPI_Allgather unencrypted, as the paper
# "Efficient Algorithms for Encrypted All-gather Operation" measures it
# (Table III: p=128 on N=8 nodes of InfiniBand, OSU's osu_allgather), here
# at p = 4 and 8 ranks on 2 simulated nodes of this machine
# (SIGCHECK_NODES=2, block order), sizes 1 B to 1 MiB.
#
# Each job runs the benchmark (cmd/libsigcheck/testdata/enc_bench.c)
# under libsigcheck with SIGCHECK_ENCRYPT=1: Auto (the library's choice),
# then SIGCHECK_ENCRYPT_ALG forcing each of the paper's eight algorithms,
# RUNS rounds (the order rotates each round, so that none is always first
# or last). Within a job, each size is timed as osu_allgather times it,
# unencrypted (PMPI_Allgather, which the benchmark calls itself and the
# library does not wrap) and encrypted (MPI_Allgather) taking turns in
# blocks of calls, and the job reports the median block of each: on a
# machine whose load comes and goes, the two are measured under the same
# load, and their ratio is steadier than the times. The all-gathers run on
# a communicator made by MPI_Comm_idup, which libsigcheck does not shadow:
# the figures are the encryption's alone, without the library's type check
# of each collective (which costs one all-to-all of records a call;
# sigcheck mpirun -encrypt runs both).
#
# The table gives, by size, the median unencrypted latency over all jobs,
# each algorithm's overhead (%, as the paper's tables give it: the median
# over rounds of encrypted / unencrypted - 1 within a job), the best
# algorithm, Auto's overhead and the algorithm Auto ran (from the ranks'
# summaries), and the paper's best scheme at the sizes Table III has.
# Every run must have encrypted every all-gather and found nothing; the
# benchmark checks the data it gathered. The load average is printed at
# the start, after each round and at the end: the machine is shared, and
# a loaded one moves these figures.
#
#   scripts/libsigcheck-encrypt-bench.sh           # RUNS=5
#   RUNS=3 PS="4" MAX=65536 scripts/libsigcheck-encrypt-bench.sh
#
# Environment: RUNS (5), PS (the rank counts, "4 8"), MAX (the largest
# size, 1048576), OUT (keeps every run's output; a new temporary
# directory otherwise, printed), LIB (a built libsigcheck.so; otherwise
# built here from the working tree, or with REV=commit from that commit's
# tree, by git archive), TIMEOUT (seconds a run, 600),
# MPIRUN_ARGS (more mpirun options). Needs mpicc, mpirun, go (unless
# LIB), python3 (to read the ranks' summaries). Exits 1 if a run failed
# or found something, 2 if something it needs is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

case ${1:-} in
-h | -help | --help)
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
  ;;
"") ;;
*)
  echo "libsigcheck-encrypt-bench: unknown argument $1" >&2
  exit 2
  ;;
esac

runs=${RUNS:-5}
ps=${PS:-"4 8"}
max=${MAX:-1048576}
tmo=${TIMEOUT:-600}
algs=(naive o-ring o-rd o-rd2 c-ring c-rd hs1 hs2)
configs=(auto "${algs[@]}")

for t in mpicc mpirun python3 timeout; do
  command -v "$t" >/dev/null || {
    echo "libsigcheck-encrypt-bench: $t not found" >&2
    exit 2
  }
done
[[ -n ${LIB:-} ]] || command -v go >/dev/null || {
  echo "libsigcheck-encrypt-bench: go not found (or give LIB=libsigcheck.so)" >&2
  exit 2
}

out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/libsigcheck-encrypt-bench.XXXXXX")}
mkdir -p "$out"
out=$(cd "$out" && pwd)
: >"$out/problems.txt"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(load); $runs runs; every run's output in $out"

if [[ -n ${LIB:-} ]]; then
  lib=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
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
  echo "# library: built from the working tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
fi
mpicc -O2 -o "$out/enc_bench" cmd/libsigcheck/testdata/enc_bench.c

root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)
# Shared memory only: Open MPI's search for network interfaces costs a
# second a job and nothing here uses them.
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}

# run P CONFIG ROUND: one job, its "size plain encrypted" lines (µs) in
# $out/P/CONFIG.ROUND, its summaries in $out/P/CONFIG.ROUND.sum/.
run() {
  local p=$1 c=$2 r=$3 d=$out/$1
  local f=$d/$c.$r sum=$d/$c.$r.sum
  mkdir -p "$sum"
  SIGCHECK_ENCRYPT_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
  export SIGCHECK_ENCRYPT_SECRET
  local args=("${root[@]}" --oversubscribe -np "$p" -x "LD_PRELOAD=$lib" -x SIGCHECK_ENCRYPT=1 -x SIGCHECK_NODES=2
    -x SIGCHECK_ENCRYPT_SECRET -x GODEBUG=asyncpreemptoff=1 -x SIGCHECK_ON_ERROR=report -x "SIGCHECK_SUMMARY=$sum")
  [[ $c != auto ]] && args+=(-x "SIGCHECK_ENCRYPT_ALG=$c")
  # shellcheck disable=SC2086
  if ! timeout "$tmo" mpirun "${args[@]}" ${MPIRUN_ARGS:-} "$out/enc_bench" idup "$max" >"$f" 2>"$f.err"; then
    echo "p=$p $c round $r: mpirun failed (exit $?); see $f.err" | tee -a "$out/problems.txt"
    return
  fi
  python3 - "$sum" "$p" "$c" "$r" >>"$out/problems.txt" <<'PY'
import json, pathlib, sys
d, p, c, r = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rows = [json.loads(f.read_text()) for f in sorted(pathlib.Path(d).glob("rank-*.json"))]
bad = []
if len(rows) != p:
    bad.append(f"{len(rows)} summaries of {p}")
for s in rows:
    e = s.get("encryption") or {}
    n = sum((e.get("allgathers") or {}).values())
    if s.get("findings") or e.get("tampered") or n == 0 or e.get("one_node"):
        bad.append(f"rank {s['rank']}: {n} all-gathers encrypted, {e.get('one_node')} within a node, findings {s.get('findings')}")
for b in bad:
    print(f"p={p} {c} round {r}: {b}")
PY
}

for p in $ps; do
  mkdir -p "$out/$p"
  for ((r = 1; r <= runs; r++)); do
    n=${#configs[@]}
    for ((i = 0; i < n; i++)); do
      run "$p" "${configs[$(((i + r - 1) % n))]}" "$r"
    done
    echo "# p=$p round $r of $runs done, load $(load)"
  done
done

# The paper's Table III: the best scheme's overhead (%) by size (bytes).
paper="1 31.49 O-RD2
2 51.49 HS1
4 51.50 HS1
8 55.96 O-RD
16 53.06 O-RD
32 50.86 O-RD
64 39.14 O-RD
1024 9.91 O-RD
2048 -0.05 C-RD
4096 -16.02 C-RD
8192 6.25 C-Ring
16384 -45.89 HS2
32768 -33.54 HS2
262144 -12.42 HS2
2097152 -13.97 HS2"

for p in $ps; do
  # What Auto ran, by size, from rank 0's summary of its first run.
  auto=$(python3 - "$out/$p/auto.1.sum/rank-0.json" <<'PY' 2>/dev/null || true
import json, sys
for a, (lo, hi) in json.load(open(sys.argv[1]))["encryption"].get("auto_sizes", {}).items():
    print(a, lo, hi)
PY
  )
  echo
  echo "## p=$p on 2 simulated nodes (block order, ℓ=$(((p + 1) / 2))): median µs of unencrypted MPI_Allgather, and each algorithm's overhead (%) against it; medians of $runs runs"
  # Rows "mpi SIZE µs" (every job's unencrypted time) and "CONFIG SIZE
  # ratio" (its encrypted time over its unencrypted one).
  for c in "${configs[@]}"; do
    for ((r = 1; r <= runs; r++)); do
      [[ -f $out/$p/$c.$r ]] && awk -v c="$c" 'NF == 3 && $2 > 0 { print "mpi", $1, $2; print c, $1, $3 / $2 }' "$out/$p/$c.$r"
    done
  done | sort -k1,1 -k2,2n -k3,3g | awk -v paper="$paper" -v auto="$auto" -v algs="${algs[*]}" '
    function sortn(a, n,    i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
    function median(k,    n, a, i) { n = cnt[k]; for (i = 1; i <= n; i++) a[i] = v[k, i]; sortn(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    function hsize(s) { return s >= 1048576 ? sprintf("%g MiB", s / 1048576) : s >= 1024 ? sprintf("%g KiB", s / 1024) : sprintf("%d B", s) }
    function title(a) { return a == "naive" ? "Naive" : a == "o-ring" ? "O-Ring" : a == "o-rd" ? "O-RD" : a == "o-rd2" ? "O-RD2" : a == "c-ring" ? "C-Ring" : a == "c-rd" ? "C-RD" : toupper(a) }
    { k = $1 SUBSEP $2; v[k, ++cnt[k]] = $3; sizes[$2] = 1 }
    END {
      np = split(paper, pl, "\n"); for (i = 1; i <= np; i++) { split(pl[i], f, " "); pp[f[1]] = sprintf("%+.0f%% %s", f[2], f[3]) }
      na = split(auto, al, "\n"); for (i = 1; i <= na; i++) { split(al[i], f, " "); if (f[1] != "") { alo[f[1]] = f[2]; ahi[f[1]] = f[3] } }
      nalg = split(algs, alg, " ")
      printf "%8s %9s", "size", "MPI µs"
      for (i = 1; i <= nalg; i++) printf " %7s", title(alg[i])
      printf "  %-13s %7s %-6s  %s\n", "best", "Auto", "(ran)", "paper: best (Table III)"
      n = 0; for (s in sizes) ss[++n] = s + 0; sortn(ss, n)
      for (j = 1; j <= n; j++) {
        s = ss[j]; base = median("mpi" SUBSEP s)
        if (base <= 0) continue
        printf "%8s %9.2f", hsize(s), base
        best = ""; bo = 1e18
        for (i = 1; i <= nalg; i++) {
          k = alg[i] SUBSEP s
          if (!cnt[k]) { printf " %7s", "-"; continue }
          o = 100 * (median(k) - 1); printf " %+6.0f%%", o
          if (o < bo) { bo = o; best = title(alg[i]) }
        }
        ran = "?"; for (a in alo) if (s >= alo[a] && s <= ahi[a]) ran = a
        ao = cnt["auto" SUBSEP s] ? sprintf("%+6.0f%%", 100 * (median("auto" SUBSEP s) - 1)) : "-"
        printf "  %-6s %+5.0f%% %7s %-6s  %s\n", best, bo, ao, "(" ran ")", (s in pp) ? pp[s] : ""
      }
    }'
done
echo
echo "# $(date -u +%FT%TZ) load $(load) at the end"
if [[ -s $out/problems.txt ]]; then
  echo "# problems:"
  cat "$out/problems.txt"
  exit 1
fi
