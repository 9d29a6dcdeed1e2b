#!/usr/bin/env bash
# libsigcheck-replicate-bench.sh: what replication (SIGCHECK_REPLICATE, the
# RedMPI of issue 27) costs an unmodified C program, against the same job
# unreplicated on the same cores: the program is
# cmd/libsigcheck/testdata/jacobi.c on n = 2 ranks, the figure its own
# seconds for the steps (MPI_Wtime around the loop, not mpirun's start-up),
# and the configurations are
#
#   alone        the program alone, n processes
#   types        the same with the library, replication off (its default
#                check, SIGCHECK_CHECK=types: a header a message)
#   plain×R      R jobs of the program alone at once (R·n processes, the
#                replicated job's number); the time of the slowest
#   msgplushash  one job of R·n processes, SIGCHECK_REPLICATE=R: each
#                message plus the hash of the previous replica's
#   alltoall     the same, SIGCHECK_REPLICATE_PROTOCOL=alltoall: every
#                replica's copy to every replica
#
# for R = 2 and 3, on two workloads:
#
#   stencil   N=2048, 150 steps: 16 KiB halos (past Open MPI's eager
#             limit on shared memory), mostly arithmetic
#   halo      N=256, 3000 steps: 2 KiB halos every step, little
#             arithmetic between them (message-bound)
#
# The paper ran each replica on cores of its own, so that its overhead is
# the protocol's alone. A machine with fewer cores than R·n cannot: the
# replicated job needs R times the arithmetic of the job alone on the same
# cores. So the table gives, for each replicated configuration, its time
# against the job alone, against R times that (the protocol's cost if the
# cores were shared perfectly; the paper's figure on a compute-bound job),
# and against R jobs at once. The last looks cheaper than it is where the
# cores are oversubscribed: an independent job advances only while both of
# its ranks happen to run, a replicated one whenever any two that talk do.
#
# Every measurement is taken RUNS times, the configurations alternating
# (the order rotates each round); the table gives medians, and for the
# ratio to the job alone also the median of the round-by-round ratios.
# Every run's answer (residual and grid hash) must be the first run's: the
# script exits 1 otherwise. The load average is printed at the start,
# after each round and at the end: on a shared machine the figures move
# with it.
#
#   scripts/libsigcheck-replicate-bench.sh            # RUNS=5
#   scripts/libsigcheck-replicate-bench.sh -quick     # RUNS=1, shorter workloads
#   RUNS=7 OUT=/tmp/rb scripts/libsigcheck-replicate-bench.sh
#
# Environment: RUNS, OUT (keeps every run's output; a new temporary
# directory otherwise), LIB (a built libsigcheck.so; otherwise built here
# from the working tree, or with REV=commit from that commit's tree),
# TIMEOUT (seconds a run, 600), MPIRUN_ARGS (more mpirun options).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
for a in "$@"; do
  case $a in
  -quick | --quick) quick=1 ;;
  -h | -help | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "libsigcheck-replicate-bench: unknown argument $a (want -quick)" >&2
    exit 2
    ;;
  esac
done

if ((quick)); then
  runs=${RUNS:-1}
  workloads=("stencil 2048 15" "halo 256 300")
else
  runs=${RUNS:-5}
  workloads=("stencil 2048 150" "halo 256 3000")
fi
tmo=${TIMEOUT:-600}
n=2
configs=(alone types plain msgplushash alltoall)

for c in mpirun mpicc timeout; do
  command -v $c >/dev/null || {
    echo "libsigcheck-replicate-bench: $c not found (apt-get install -y openmpi-bin libopenmpi-dev coreutils)" >&2
    exit 2
  }
done
[[ -n ${LIB:-} ]] || command -v go >/dev/null || {
  echo "libsigcheck-replicate-bench: go not found, and no LIB" >&2
  exit 2
}

out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/libsigcheck-replicate-bench.XXXXXX")}
mkdir -p "$out"
out=$(cd "$out" && pwd)
: >"$out/rows.txt"
: >"$out/problems.txt"

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(load); $runs runs; every run's output in $out"

if [[ -n ${LIB:-} ]]; then
  lib=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
  echo "# library: $lib (LIB)"
elif [[ -n ${REV:-} ]]; then
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
mpicc -O2 -o "$out/jacobi" cmd/libsigcheck/testdata/jacobi.c

# Every run yields the core while it waits and is bound to none, as Open
# MPI does by itself only when it sees more processes than cores: R jobs
# of n processes at once would each see a machine of their own, spin, and
# pin their rank k to core k, two of them to each core; the replicated
# job of R·n processes would not, and the comparison would be of that.
mpirun_base=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 ${MPIRUN_ARGS:-})
[[ $(id -u) == 0 ]] && mpirun_base+=(--allow-run-as-root)
lib_env=(-x "LD_PRELOAD=$lib" -x GODEBUG=asyncpreemptoff=1 -x SIGCHECK_ON_ERROR=abort)

problem() { echo "$1" | tee -a "$out/problems.txt" >&2; }

# job NAME NP [mpirun args...] -- runs one mpirun in the background into
# $out/NAME.out; wait for it with wait_job.
declare -A pids
job() {
  local name=$1 np=$2
  shift 2
  (timeout "$tmo" "${mpirun_base[@]}" -np "$np" "$@" >"$out/$name.out" 2>"$out/$name.err"; echo $? >"$out/$name.rc") &
  pids[$name]=$!
}

# finish NAME KEY: waits for the run, checks its answer against the first
# of its workload, and sets secs to its own time (empty when it failed or
# answered otherwise).
declare -A answer
secs=
finish() {
  local name=$1 key=$2 rc a
  wait "${pids[$name]}" || true
  rc=$(cat "$out/$name.rc" 2>/dev/null || echo '?')
  secs=$(awk '/^time /{print $2}' "$out/$name.out")
  a=$(grep '^jacobi ' "$out/$name.out" || true)
  if [[ $rc != 0 || -z $secs || -z $a ]]; then
    problem "$name: exit $rc, no answer ($out/$name.err)"
    secs=
    return
  fi
  if [[ -z ${answer[$key]:-} ]]; then
    answer[$key]=$a
  elif [[ ${answer[$key]} != "$a" ]]; then
    problem "$name: answer '$a', the first run's '${answer[$key]}'"
    secs=
  fi
}

# measure CONFIG R WORKLOAD GRID STEPS RUN
measure() {
  local cfg=$1 r=$2 w=$3 grid=$4 steps=$5 run=$6
  local argv=("$out/jacobi" "$grid" "$steps" 0 isend time) t= name
  case $cfg in
  alone | types)
    name=$w-$cfg-$run
    if [[ $cfg == types ]]; then
      job "$name" "$n" "${lib_env[@]}" "${argv[@]}"
    else
      job "$name" "$n" "${argv[@]}"
    fi
    finish "$name" "$w"
    t=$secs
    ;;
  plain)
    local k names=() env=()
    for ((k = 0; k < r; k++)); do
      name=$w-r$r-$cfg-$run-$k
      job "$name" "$n" "${env[@]}" "${argv[@]}"
      names+=("$name")
    done
    t=0
    for name in "${names[@]}"; do
      finish "$name" "$w"
      [[ -z $secs ]] && t=
      [[ -n $t ]] && t=$(awk -v a="$t" -v b="$secs" 'BEGIN{print (b > a ? b : a)}')
    done
    ;;
  *)
    name=$w-r$r-$cfg-$run
    job "$name" $((r * n)) "${lib_env[@]}" -x "SIGCHECK_REPLICATE=$r" -x "SIGCHECK_REPLICATE_PROTOCOL=$cfg" "${argv[@]}"
    finish "$name" "$w"
    t=$secs
    ;;
  esac
  [[ -z $t ]] && return
  echo "$w $r $cfg $run $t" >>"$out/rows.txt"
  printf 'run %d/%d  %-8s r=%d  %-12s %9.3f s\n' "$run" "$runs" "$w" "$r" "$cfg" "$t"
}

# The runs of a round: the job alone and with the library once, the
# others for each R; rotated each round.
for ((run = 1; run <= runs; run++)); do
  for wl in "${workloads[@]}"; do
    read -r w grid steps <<<"$wl"
    list=("alone 1" "types 1")
    for r in 2 3; do
      for c in plain msgplushash alltoall; do list+=("$c $r"); done
    done
    for ((i = 0; i < ${#list[@]}; i++)); do
      read -r c r <<<"${list[$(((i + run - 1) % ${#list[@]}))]}"
      measure "$c" "$r" "$w" "$grid" "$steps" "$run"
    done
  done
  echo "# after round $run: load $(load)"
done

echo
echo "Medians of $runs runs, seconds of the program's steps; each replicated configuration against the job"
echo "alone on the same cores (×alone, and the median of the round-by-round ratios), against R times that"
echo "(×R·alone), and against R jobs at once (×plain). Load at the end: $(load)."
echo
awk '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    if (n == 0) return 0
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { v[$1, $2, $3] = v[$1, $2, $3] " " $5; t[$1, $2, $3, $4] = $5; ws[$1] = 1; runs[$4] = 1 }
  END {
    for (w in ws) {
      a = median(v[w, 1, "alone"]); ty = median(v[w, 1, "types"])
      printf "%-8s alone %7.3f s, with the library (types) %7.3f s (%.2fx)\n", w, a, ty, ty / a
      printf "  %-2s %-12s %8s %8s %8s %10s %8s\n", "R", "protocol", "seconds", "×alone", "(paired)", "×R·alone", "×plain"
      for (r = 2; r <= 3; r++) {
        p = median(v[w, r, "plain"])
        printf "  %-2d %-12s %8.3f %8s %8s %10s %8s\n", r, "plain×R", p, sprintf("%.2f", p / a), "", sprintf("%.2f", p / (r * a)), ""
        split("msgplushash alltoall", cs, " ")
        for (ci = 1; ci <= 2; ci++) {
          c = cs[ci]; m = median(v[w, r, c]); pr = ""
          for (k in runs) if (t[w, 1, "alone", k] > 0 && t[w, r, c, k] > 0) pr = pr " " t[w, r, c, k] / t[w, 1, "alone", k]
          printf "  %-2d %-12s %8.3f %8.2f %8.2f %10.2f %8.2f\n", r, c, m, m / a, median(pr), m / (r * a), m / p
        }
      }
    }
  }' "$out/rows.txt"

if [[ -s $out/problems.txt ]]; then
  echo
  echo "Problems:"
  cat "$out/problems.txt"
  exit 1
fi
