#!/usr/bin/env bash
# par2-bench.sh: sigcheck's manifests against par2 itself (par2cmdline,
# Debian package par2) on the same data with the same redundancy and
# block size: create, verify and repair time, and the largest damage each
# repairs — a truncated tail, a zeroed run, scattered blocks.
#
#   scripts/par2-bench.sh                 # 1 GiB, 5 %, 1 MiB blocks
#   SIZE_MIB=256 REDUNDANCY=10 BLOCK=65536 scripts/par2-bench.sh
#
# par2's work grows as data x recovery blocks, so small blocks on large
# data take it hours (1 GiB in 64 KiB blocks: 819 recovery blocks, more
# than 2.5 CPU minutes to create); sigcheck's grows as data x P.
#   QUICK=1 scripts/par2-bench.sh         # the tail only: create, verify, a
#                                         # repair, the largest tail each repairs
#
# Each tool is given the same block size (par2 -s, sigcheck -seg) and the
# same parity: par2 -r REDUNDANCY, and sigcheck the -parity P whose
# P x stripes is the most not above par2's recovery blocks. Times are wall seconds of one run each, on
# whatever else the machine is doing: run it twice before believing a
# difference under 20 %. Every repair is checked byte for byte against
# the original. Figures of a run are in the README's manifest section.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MIB=${SIZE_MIB:-1024}
REDUNDANCY=${REDUNDANCY:-5}
BLOCK=${BLOCK:-1048576}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/par2-bench.XXXXXX")}
trap 'rm -rf "$WORK"' EXIT

if ! command -v par2 >/dev/null; then
  echo "par2-bench: par2 is not installed (apt-get install -y par2)" >&2
  exit 2
fi
go build -o "$WORK/sigcheck" ./cmd/sigcheck
SC="$WORK/sigcheck"

blocks=$((SIZE_MIB * 1048576 / BLOCK))
head -c $((SIZE_MIB * 1048576)) /dev/urandom >"$WORK/orig"
D="$WORK/d"
mkdir "$D"

# timed LABEL CMD...: runs CMD and prints its wall and CPU (user+system)
# seconds; returns its status. On a shared machine the CPU time is the
# steadier figure (par2's threads wait on each other when cores are busy).
timed() {
  local label=$1 rc=0 t
  shift
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" >"$WORK/out" 2>&1; } 2>&1) || rc=$?
  [[ $rc != 0 ]] && t=$(tail -n 1 <<<"$t")
  read -r real user sys <<<"$t"
  printf '  %-40s %7.2f s wall %7.2f s CPU  (exit %d)\n' "$label" "$real" "$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')" "$rc"
  return $rc
}
fresh() { cp "$WORK/orig" "$D/data"; }
intact() { cmp -s "$WORK/orig" "$D/data"; }

fresh
echo "data: $SIZE_MIB MiB of random bytes, $blocks blocks of $BLOCK bytes; redundancy $REDUNDANCY %"
echo "par2: $(par2 --version 2>&1 | head -1), -s$BLOCK -r$REDUNDANCY, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "create"
timed "par2 create" par2 create -q -s"$BLOCK" -r"$REDUNDANCY" "$D/data.par2" "$D/data"
par2_blocks=$(ls "$D"/data.vol*.par2 | sed -E 's/.*\+([0-9]+)\.par2/\1/' | awk '{ s += $1 } END { print s }')
# sigcheck: P parity segments per stripe of up to 256-P data segments;
# the P whose P x stripes is the most not above par2's recovery blocks.
P=$(awk -v n="$blocks" -v r="$par2_blocks" 'BEGIN { best = 1
  for (p = 1; p <= 128; p++) { s = int((n + 255 - p) / (256 - p)); if (p * s <= r) best = p }
  print best }')
stripes=$(((blocks + 256 - P - 1) / (256 - P)))
sc_run=$((P * stripes)) # the longest run of lost blocks sigcheck rebuilds
timed "sigcheck manifest" "$SC" manifest -seg "$BLOCK" -parity "$P" -o "$D/data.sigcheck" "$D/data"
echo "  par2: $par2_blocks recovery blocks, $(cat "$D"/data*.par2 | wc -c) bytes in its files"
echo "  sigcheck: -parity $P, $stripes stripes: $sc_run parity segments, manifest $(stat -c %s "$D/data.sigcheck") bytes"

echo "verify (intact)"
timed "sigcheck verify" "$SC" verify "$D/data" "$D/data.sigcheck"
timed "par2 verify" par2 verify -q "$D/data.par2"

# damage KIND N: truncate the last N blocks, zero a run of N blocks from
# a third of the way in, or flip one byte in each of N random blocks.
damage() {
  fresh
  case $1 in
  tail) truncate -s $(((blocks - $2) * BLOCK)) "$D/data" ;;
  run) dd if=/dev/zero of="$D/data" bs="$BLOCK" seek=$((blocks / 3)) count="$2" conv=notrunc status=none ;;
  scattered) # N distinct blocks drawn at random (the same ones for both tools)
    awk -v n="$blocks" -v k="$2" 'BEGIN { srand(42); while (c < k) { b = int(rand() * n); if (!(b in seen)) { seen[b]; c++; print b } } }' |
      while read -r b; do
        printf '\xff' | dd of="$D/data" bs=1 seek=$((b * BLOCK + 1000)) conv=notrunc status=none
      done
    ;;
  esac
}

# repair TOOL KIND N: damage, repair with TOOL, and say whether the data
# is the original again.
repair() {
  damage "$2" "$3"
  local ok=no
  if [[ $1 == sigcheck ]]; then
    timed "sigcheck repair, $2 $3 blocks" "$SC" repair "$D/data" "$D/data.sigcheck" && intact && ok=yes
  else
    timed "par2 repair, $2 $3 blocks" par2 repair -q "$D/data.par2" && intact && ok=yes
  fi
  rm -f "$D"/data.[0-9]* "$D"/data.1 # par2 keeps the damaged file as data.1
  echo "    restored: $ok"
  [[ $ok == yes ]]
}

echo "repair (time at a damage both tools repair)"
half=$((sc_run / 2))
kinds="tail run"
[[ -n ${QUICK:-} ]] && kinds=tail
for kind in $kinds; do
  repair sigcheck $kind $half || true
  repair par2 $kind $half || true
done
if [[ -z ${QUICK:-} ]]; then
  repair sigcheck scattered $((sc_run / 8)) || true
  repair par2 scattered $((sc_run / 8)) || true
fi

echo "largest damage repaired (at each tool's limit, and one block more)"
for kind in $kinds; do
  repair sigcheck $kind $sc_run || true
  repair sigcheck $kind $((sc_run + 1)) || true
  repair par2 $kind "$par2_blocks" || true
  repair par2 $kind $((par2_blocks + 1)) || true
done
[[ -n ${QUICK:-} ]] && exit 0
# Scattered damage: par2 rebuilds any blocks up to its count; sigcheck up
# to P per stripe, so random damage is rebuilt while no stripe gets more.
for n in $((sc_run / 4)) $((sc_run / 2)) $sc_run; do
  repair sigcheck scattered $n || true
done
repair par2 scattered "$par2_blocks" || true
