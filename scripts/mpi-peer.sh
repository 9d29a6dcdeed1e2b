#!/usr/bin/env bash
# mpi-peer.sh: sigcheck run bw against MPI itself, on this machine, in the
# same minutes. It builds scripts/mpi_bw_peer.c (osu_bw's method: windows
# of MPI_Isend, an ack per window, MB/s = 10^6 B/s) with mpicc, then runs,
# ROUNDS times in turn, Open MPI's TCP transport (mpirun --mca btl tcp,self)
# and sigcheck run -transport tcp bw (-protect none), and prints the median
# of each per size with their ratio. Rounds alternate so that a neighbour's
# burst on a shared machine spoils both sides alike.
#
#   bash scripts/mpi-peer.sh [MIN MAX [ROUNDS]]     (default 1048576 16777216 5)
#
# It needs mpicc and mpirun (Debian: openmpi-bin, libopenmpi-dev) and says
# so when they are absent. Not part of CI: it takes minutes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
min=${1:-1048576} max=${2:-16777216} rounds=${3:-5}
for tool in mpicc mpirun; do
  command -v $tool >/dev/null || { echo "mpi-peer: no $tool (Debian: apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/bw" "$repo/scripts/mpi_bw_peer.c"
(cd "$repo" && go build -o "$work/sigcheck" ./cmd/sigcheck)
root=()
[[ $(id -u) == 0 ]] && root=(--allow-run-as-root)

for ((i = 1; i <= rounds; i++)); do
  mpirun "${root[@]}" --oversubscribe -np 2 --mca btl tcp,self "$work/bw" "$min" "$max" 2>/dev/null |
    awk '!/^#/ {print "mpi", $1, $2}' >>"$work/all"
  "$work/sigcheck" run -transport tcp -json -sizes "$min:$max" bw |
    sed -n 's/.*"size":\([0-9]*\),"value":\([0-9.]*\).*/sigcheck \1 \2/p' >>"$work/all"
  echo "mpi-peer: round $i of $rounds done" >&2
done

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "# sigcheck run -transport tcp bw against Open MPI's TCP transport ($(mpirun --version 2>/dev/null | head -1)),"
echo "# medians of $rounds alternating rounds, MB/s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %14s %14s %8s\n' "# Size" "sigcheck" "MPI tcp" "ratio"
for ((n = min; n <= max; n *= 2)); do
  s=$(awk -v n=$n '$1 == "sigcheck" && $2 == n {print $3}' "$work/all" | median)
  m=$(awk -v n=$n '$1 == "mpi" && $2 == n {print $3}' "$work/all" | median)
  printf '%-10s %14.2f %14.2f %8.2f\n' "$n" "$s" "$m" "$(awk -v s="$s" -v m="$m" 'BEGIN {print (m > 0) ? s / m : 0}')"
done
