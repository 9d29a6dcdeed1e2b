#!/usr/bin/env bash
# par2-bench.sh: sigcheck's manifests against par2 itself (par2cmdline,
# Debian package par2) on the same data: the CPU time (user + system) of
# create, verify and repair, medians of RUNS runs, the two tools
# alternating, and the ratio sigcheck/par2.
#
#   scripts/par2-bench.sh                       # 1 GiB, 5 %, 3 runs
#   SIZE_MIB=256 REDUNDANCY=10 RUNS=5 scripts/par2-bench.sh
#
# par2 runs with its defaults but -r (it picks its block size: 2000
# blocks). sigcheck runs twice: with par2's block size and par2's number
# of recovery blocks (-seg, -c: the same parity, the same reach), and
# with its own defaults (-r only: 2 KiB segments, the parity in stripes
# of up to 65536). Repair is timed on DAMAGE scattered damaged blocks of
# par2's size (a byte each), the same offsets for every tool, from a
# fresh copy each run; every repair is checked byte for byte. The machine
# is shared: CPU time is the steadier figure (par2's threads wait on each
# other when cores are busy), and the medians are what to quote.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MIB=${SIZE_MIB:-1024}
REDUNDANCY=${REDUNDANCY:-5}
RUNS=${RUNS:-3}
DAMAGE=${DAMAGE:-10}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/par2-bench.XXXXXX")}
trap 'rm -rf "$WORK"' EXIT

if ! command -v par2 >/dev/null; then
  echo "par2-bench: par2 is not installed (apt-get install -y par2)" >&2
  exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "par2-bench: /usr/bin/time is not installed (apt-get install -y time)" >&2
  exit 2
fi
go build -o "$WORK/sigcheck" ./cmd/sigcheck
SC="$WORK/sigcheck"
head -c $((SIZE_MIB * 1048576)) /dev/urandom >"$WORK/orig"
mkdir "$WORK/p2" "$WORK/sc" "$WORK/sd"

# cpu CMD...: runs CMD and prints its CPU seconds (user + system) and its
# peak resident memory in MiB, or fails with its status.
cpu() {
  local rc=0
  /usr/bin/time -f '%U %S %M' -o "$WORK/time" "$@" >"$WORK/out" 2>&1 || rc=$?
  if [[ $rc != 0 ]]; then
    echo "par2-bench: $* failed (exit $rc):" >&2
    tail -5 "$WORK/out" >&2
    return $rc
  fi
  awk '{ printf "%.3f %.0f\n", $1 + $2, $3 / 1024 }' "$WORK/time"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# col N: the Nth figure of each line.
col() { awk -v n="$1" '{ print $n }'; }

echo "data: $SIZE_MIB MiB of random bytes; redundancy $REDUNDANCY %; $RUNS runs, medians of CPU seconds (user + system)"
echo "par2: $(par2 --version 2>&1 | head -1); $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# Create once to learn par2's block size and count.
cp "$WORK/orig" "$WORK/p2/data"
par2 create -r"$REDUNDANCY" "$WORK/p2/data.par2" "$WORK/p2/data" >"$WORK/p2create.txt"
BLOCK=$(sed -n 's/^Block size: \([0-9]*\)/\1/p' "$WORK/p2create.txt" | head -1)
COUNT=$(sed -n 's/^Recovery block count: \([0-9]*\)/\1/p' "$WORK/p2create.txt" | head -1)
echo "par2 chose blocks of $BLOCK bytes and $COUNT recovery blocks"
cp "$WORK/orig" "$WORK/sc/data"
cp "$WORK/orig" "$WORK/sd/data"

declare -A T
add() { T[$1]+="$2"$'\n'; }
for run in $(seq "$RUNS"); do
  rm -f "$WORK"/p2/*.par2 "$WORK"/sc/*.sigcheck "$WORK"/sd/*.sigcheck
  add "create par2" "$(cpu par2 create -q -r"$REDUNDANCY" "$WORK/p2/data.par2" "$WORK/p2/data")"
  add "create same" "$(cpu "$SC" manifest -seg "$BLOCK" -c "$COUNT" "$WORK/sc/data")"
  add "create default" "$(cpu "$SC" manifest -r "$REDUNDANCY" "$WORK/sd/data")"
  add "verify par2" "$(cpu par2 verify -q "$WORK/p2/data.par2")"
  add "verify same" "$(cpu "$SC" verify "$WORK/sc/data")"
  add "verify default" "$(cpu "$SC" verify "$WORK/sd/data")"
  for d in p2 sc sd; do
    # DAMAGE blocks of par2's size, spread over the file, a byte each.
    for k in $(seq 0 $((DAMAGE - 1))); do
      printf '\xa5' | dd of="$WORK/$d/data" bs=1 seek=$(((k * 7919 % (SIZE_MIB * 1048576 / BLOCK)) * BLOCK + 1234)) conv=notrunc status=none
    done
  done
  add "repair par2" "$(cpu par2 repair -q "$WORK/p2/data.par2")"
  add "repair same" "$(cpu "$SC" repair "$WORK/sc/data")"
  add "repair default" "$(cpu "$SC" repair "$WORK/sd/data")"
  for d in p2 sc sd; do
    cmp -s "$WORK/orig" "$WORK/$d/data" || { echo "par2-bench: $d's repair did not restore the data" >&2; exit 1; }
  done
  rm -f "$WORK"/p2/data.1
done

printf '\n%-8s %12s %22s %16s %22s %16s\n' "CPU" "par2 (s)" "sigcheck, same (s)" "same/par2" "sigcheck, default (s)" "default/par2"
for op in create verify repair; do
  p=$(col 1 <<<"${T["$op par2"]}" | median)
  s=$(col 1 <<<"${T["$op same"]}" | median)
  d=$(col 1 <<<"${T["$op default"]}" | median)
  printf '%-8s %12.2f %22.2f %16.3f %22.2f %16.3f\n' "$op" "$p" "$s" "$(awk -v a="$s" -v b="$p" 'BEGIN { print a / b }')" \
    "$d" "$(awk -v a="$d" -v b="$p" 'BEGIN { print a / b }')"
done
printf '\n%-8s %12s %22s %22s\n' "peak RSS" "par2 (MiB)" "sigcheck, same (MiB)" "sigcheck, default (MiB)"
for op in create verify repair; do
  printf '%-8s %12.0f %22.0f %22.0f\n' "$op" "$(col 2 <<<"${T["$op par2"]}" | median)" \
    "$(col 2 <<<"${T["$op same"]}" | median)" "$(col 2 <<<"${T["$op default"]}" | median)"
done
echo
echo "same: sigcheck -seg $BLOCK -c $COUNT (par2's blocks and count); default: sigcheck -r $REDUNDANCY (2 KiB segments)"
echo "manifests: $(stat -c %s "$WORK/sc/data.sigcheck") and $(stat -c %s "$WORK/sd/data.sigcheck") bytes; par2's files $(cat "$WORK"/p2/*.par2 | wc -c) bytes"
