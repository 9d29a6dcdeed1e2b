#!/usr/bin/env bash
# ab-bench.sh: the channel's speed at two commits, side by side in one
# run, so that a change can be held to "no figure more than 5 % worse":
#   - go test ./channel's BenchmarkLatency and BenchmarkBandwidth (in
#     process and over TCP in one process), and
#   - sigcheck run -transport tcp between two processes, latency and
#     bandwidth, as scripts/tcp-latency.sh's sigcheck rows,
# each built at BASE and at NEW, and run in ABBA order ROUNDS times, so
# that both see the same load. The summary gives medians per row and
# NEW/BASE (time for latency and ns/op, so above 1 is slower; inverted
# for MB/s), and flags what is more than 5 % worse.
#
#	BASE=ff92dee scripts/ab-bench.sh            # NEW=HEAD, ROUNDS=3
#	BASE=HEAD~1 ROUNDS=5 BENCH='BenchmarkLatency/transport=local' scripts/ab-bench.sh
#
# On a shared machine, run it when the load is low and read the medians;
# a flagged row is worth a focused rerun (BENCH, TCP=0) before a
# conclusion: run-to-run spreads of ±5-10 % are common on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${BASE:?set BASE to the commit to compare with (NEW defaults to HEAD)}
new=${NEW:-HEAD}
rounds=${ROUNDS:-3}
bench=${BENCH:-Benchmark(Latency|Bandwidth)}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
for v in base new; do
  rev=$base
  [[ $v == new ]] && rev=$new
  wt="$out/wt-$v"
  git worktree add -q --detach "$wt" "$rev"
  (cd "$wt" && go test -c -o "$out/$v.test" ./channel && go build -o "$out/sigcheck-$v" ./cmd/sigcheck)
  git worktree remove --force "$wt"
done
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); BASE $(git rev-parse --short "$base") NEW $(git rev-parse --short "$new"); raw rows in $out" >&2
: >"$out/rows.txt"
for r in $(seq "$rounds"); do
  for v in base new new base; do
    "$out/$v.test" -test.run '^$' -test.bench "$bench" -test.benchtime 200ms 2>/dev/null |
      awk -v v="$v" '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print v, $1, $3, "ns/op" }' >>"$out/rows.txt"
    if [[ ${TCP:-1} == 1 ]]; then
      for s in 1 1024 65536 1048576; do
        i=1000
        ((s > 8192)) && i=2000
        ((s >= 1048576)) && i=500
        "$out/sigcheck-$v" run -transport tcp -protect none,checksum,merkle -m "$s:$s" -i "$i" -csv latency |
          awk -F, -v v="$v" 'NR > 1 { print v, "run/tcp/latency/" $3 "/" $4, $5, $6 }' >>"$out/rows.txt"
      done
      for s in 65536 1048576; do
        i=400
        ((s >= 1048576)) && i=100
        "$out/sigcheck-$v" run -transport tcp -protect none,checksum,merkle -m "$s:$s" -i "$i" -csv bw |
          awk -F, -v v="$v" 'NR > 1 { print v, "run/tcp/bw/" $3 "/" $4, $5, $6 }' >>"$out/rows.txt"
      done
    fi
  done
  echo "# round $r of $rounds done, load $(cut -d' ' -f1 /proc/loadavg)" >&2
done
# Medians per row and version (sorted first: mawk has no asort).
sort -k2,2 -k1,1 -k3,3g "$out/rows.txt" | awk '
  function flush() {
    if (key == "") return
    m[key] = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    cnt[key] = n
  }
  { k = $1 " " $2; if (k != key) { flush(); key = k; n = 0 }; a[++n] = $3; unit[$2] = $4 }
  END {
    flush()
    for (k in m) {
      split(k, f, " ")
      if (f[1] != "base" || !(("new " f[2]) in m)) continue
      b = m[k]; x = m["new " f[2]]
      r = (unit[f[2]] == "MB/s") ? b / x : x / b
      printf "%-62s %12.2f %12.2f %-6s %6.3f%s\n", f[2], b, x, unit[f[2]], r, (r > 1.05 ? "  <-- more than 5 % worse" : "")
    }
  }' | sort >"$out/summary.txt"
printf '%-62s %12s %12s %-6s %6s\n' row base new unit new/base
cat "$out/summary.txt"
echo "# (new/base: time for ns/op and us, inverted for MB/s: above 1 is slower) load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
