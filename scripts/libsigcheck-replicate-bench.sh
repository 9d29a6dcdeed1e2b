#!/usr/bin/env bash
# libsigcheck-replicate-bench.sh: what replication (SIGCHECK_REPLICATE, the
# RedMPI of issue 27) costs an unmodified C program, against the same job
# unreplicated on the same cores, as the paper measures it (§VI: 1x
# against 2x and 3x): the program is cmd/libsigcheck/testdata/jacobi.c on
# n = 2 ranks, its own seconds for the steps (MPI_Wtime around the loop,
# not mpirun's start-up), and the configurations are
#
#   plain        R jobs of the program alone, at once (R·n processes,
#                the replicated job's number, on the same cores); the
#                time of the slowest
#   types        the same with the library, replication off (its default
#                check, SIGCHECK_CHECK=types: a header a message)
#   msgplushash  one job of R·n processes, SIGCHECK_REPLICATE=R: each
#                message plus the hash of the previous replica's
#   alltoall     the same, SIGCHECK_REPLICATE_PROTOCOL=alltoall: every
#                replica's copy to every replica
#
# for R = 2 and 3, on two workloads:
#
#   halo      N=256, 3000 steps: 2 KiB halos every step, little
#             arithmetic between them (message-bound)
#   stencil   N=1024, 300 steps: 8 KiB halos (past Open MPI's eager
#             limit on shared memory), 64 times the arithmetic
#
# Every measurement is taken RUNS times, the configurations alternating
# (the order rotates each round); the table gives medians and each
# replicated configuration against plain and against types (ratios of
# the medians, and the median of the round-by-round ratios). Every run's
# answer (residual and grid hash) must be the plain run's: the script
# exits 1 otherwise. The load average is printed at the start, after each
# round and at the end: on a shared machine the figures move with it.
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
  workloads=("halo 256 600" "stencil 1024 60")
else
  runs=${RUNS:-5}
  workloads=("halo 256 3000" "stencil 1024 300")
fi
tmo=${TIMEOUT:-600}
n=2
configs=(plain types msgplushash alltoall)

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

# Every run yields the core while it waits, as Open MPI does by itself
# only when it sees more processes than cores: R jobs of n processes at
# once would each see a machine of their own and spin, the replicated job
# of R·n processes would not, and the comparison would be of that.
mpirun_base=(mpirun --oversubscribe --mca mpi_yield_when_idle 1 ${MPIRUN_ARGS:-})
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
  plain | types)
    local k names=() env=()
    [[ $cfg == types ]] && env=("${lib_env[@]}")
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

for ((run = 1; run <= runs; run++)); do
  for wl in "${workloads[@]}"; do
    read -r w grid steps <<<"$wl"
    for r in 2 3; do
      # Rotate the order of the configurations each round.
      for ((i = 0; i < ${#configs[@]}; i++)); do
        measure "${configs[$(((i + run - 1) % ${#configs[@]}))]}" "$r" "$w" "$grid" "$steps" "$run"
      done
    done
  done
  echo "# after round $run: load $(load)"
done

echo
echo "Medians of $runs runs (seconds of the program's steps), each replicated configuration against R jobs of"
echo "the program alone on the same cores (plain) and with the library's default check (types); the last"
echo "column is the median of the round-by-round ratios to plain. Load at the end: $(load)."
echo
printf "%-8s %2s  %9s %9s %9s %9s   %-22s %-22s %s\n" workload R plain types msg+hash all-to-all msg+hash/plain all-to-all/plain "paired msg+hash, all-to-all"
awk -v runs="$runs" '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { key = $1 " " $2; v[key, $3] = v[key, $3] " " $5; t[key, $3, $4] = $5; keys[key] = 1; runsof[$4] = 1 }
  END {
    for (k in keys) {
      split(k, kk, " ")
      p = median(v[k, "plain"]); ty = median(v[k, "types"]); m = median(v[k, "msgplushash"]); a = median(v[k, "alltoall"])
      pm = ""; pa = ""
      for (r in runsof) {
        if (t[k, "plain", r] > 0 && t[k, "msgplushash", r] > 0) pm = pm " " t[k, "msgplushash", r] / t[k, "plain", r]
        if (t[k, "plain", r] > 0 && t[k, "alltoall", r] > 0) pa = pa " " t[k, "alltoall", r] / t[k, "plain", r]
      }
      printf "%-8s %2s  %9.3f %9.3f %9.3f %9.3f   %5.2fx (%5.2fx types) %5.2fx (%5.2fx types) %5.2fx, %5.2fx\n", kk[1], kk[2], p, ty, m, a,
        m / p, m / ty, a / p, a / ty, median(pm), median(pa)
    }
  }' "$out/rows.txt" | sort -k1,1 -k2,2n

if [[ -s $out/problems.txt ]]; then
  echo
  echo "Problems:"
  cat "$out/problems.txt"
  exit 1
fi
