#!/usr/bin/env bash
# newuser.sh walks a new user's first five minutes with sigcheck, as the
# README tells them, and fails on the first step that goes wrong:
#
#   1. install with go install, and run sigcheck -version;
#   2. a bad flag: one line, exit 2; the demo;
#   3. checksums: a sha256sum file and an xxhsum file checked by sigcheck,
#      and sigcheck's files checked by sha256sum and xxhsum; a changed
#      file is caught;
#   4. a manifest: a truncated and an extended file are reported, flipped
#      bytes are located and repaired from the parity;
#   5. sigcheck run streams its rows and keeps them when interrupted;
#   6. sigcheck run draws a plot.
#
# Run it from anywhere in the repository: bash scripts/newuser.sh. It
# needs Go, coreutils, and xxhsum (Debian's xxhash package) for step 3's
# xxhsum half, which it skips, saying so, when xxhsum is absent.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

n=0
step() {
  n=$((n + 1))
  printf 'newuser: %d. %s\n' "$n" "$*"
}
fail() {
  printf 'newuser: FAIL at step %d: %s\n' "$n" "$*" >&2
  exit 1
}
# expect CODE CMD...: run CMD, its output in $work/out and $work/err, and
# fail unless it exits CODE.
expect() {
  local want=$1 got=0
  shift
  "$@" >"$work/out" 2>"$work/err" || got=$?
  if [[ $got != "$want" ]]; then
    printf -- '--- stdout\n%s\n--- stderr\n%s\n' "$(head -c 2000 "$work/out")" "$(head -c 2000 "$work/err")" >&2
    fail "$* exited $got, want $want"
  fi
}
has() { grep -q -- "$1" "$work/$2" || fail "no '$1' in the $2 of the last command: $(head -c 500 "$work/$2")"; }

step "install with go install, and print the version"
(cd "$repo" && GOBIN="$work/bin" go install ./cmd/sigcheck) || fail "go install ./cmd/sigcheck"
export PATH="$work/bin:$PATH"
[[ $(command -v sigcheck) == "$work/bin/sigcheck" ]] || fail "sigcheck is not the one just installed"
expect 0 sigcheck -version
has '^sigcheck devel' out
has 'go1\.' out

step "a bad flag says what and where to look, in one line, exit 2; the demo runs"
expect 2 sigcheck run -no-such-flag bw
[[ $(wc -l <"$work/err") == 1 && ! -s "$work/out" ]] || fail "not one line: $(cat "$work/err")"
has 'sigcheck run: unknown flag -no-such-flag (sigcheck run -h for help)' err
expect 0 sigcheck run -h
has '^Usage: sigcheck run' out
expect 0 sigcheck demo
has 'whole again: true' out

step "checksums, both ways with sha256sum and xxhsum"
cd "$work"
printf 'what arrived is what was sent\n' >a.txt
head -c 100000 /dev/urandom >b.bin
sha256sum a.txt b.bin >SHA256SUMS
expect 0 sigcheck csum -alg sha256 -c SHA256SUMS
has 'a.txt: OK' out
has 'b.bin: OK' out
sigcheck csum -alg sha256 a.txt b.bin >sigcheck.sha256
expect 0 sha256sum -c sigcheck.sha256
cmp -s SHA256SUMS sigcheck.sha256 || fail "sigcheck csum -alg sha256 differs from sha256sum: $(diff SHA256SUMS sigcheck.sha256)"
if command -v xxhsum >/dev/null; then
  xxhsum -H3 --tag a.txt b.bin >XXH3SUMS 2>/dev/null || xxhsum -H3 a.txt b.bin >XXH3SUMS
  expect 0 sigcheck csum -c XXH3SUMS
  has 'b.bin: OK' out
  sigcheck csum -tag a.txt b.bin >sigcheck.xxh3
  expect 0 xxhsum -c sigcheck.xxh3
  xxhsum -H1 a.txt b.bin >XXH64SUMS 2>/dev/null # (xxhsum clears a progress line on standard error)
  expect 0 sigcheck csum -alg xxh64 -c XXH64SUMS
  sigcheck csum -alg xxh64 a.txt b.bin >sigcheck.xxh64
  expect 0 xxhsum -c sigcheck.xxh64
else
  echo "newuser: xxhsum is not installed (Debian: apt-get install xxhash); its half of this step is skipped"
fi
printf 'X' | dd of=b.bin bs=1 seek=777 conv=notrunc 2>/dev/null
expect 1 sigcheck csum -alg sha256 -c SHA256SUMS
has 'b.bin: FAILED' out
expect 1 sha256sum -c sigcheck.sha256

step "a manifest: truncated and extended files reported, flipped bytes repaired"
head -c 600000 /dev/urandom >data.bin
cp data.bin orig.bin
expect 0 sigcheck manifest -parity 4 data.bin
[[ -s data.bin.sigcheck ]] || fail "no data.bin.sigcheck"
expect 0 sigcheck verify data.bin
truncate -s 500000 data.bin
expect 1 sigcheck verify data.bin
has 'truncated' out
cp orig.bin data.bin
head -c 3000 /dev/urandom >>data.bin
expect 1 sigcheck verify data.bin
has 'extended' out
cp orig.bin data.bin
for at in 100 5000 300001 599990; do
  printf '\377\000' | dd of=data.bin bs=1 seek=$at conv=notrunc 2>/dev/null
done
expect 1 sigcheck verify data.bin
has 'segments corrupted' out
has 'bytes 4096-6143' out
expect 0 sigcheck repair data.bin
cmp -s data.bin orig.bin || fail "repaired data.bin differs from the original"
expect 0 sigcheck verify data.bin

step "sigcheck run streams its rows, and Ctrl-C keeps them"
# Small sizes take milliseconds, 64 MiB with 2000 iterations minutes: the
# interrupt lands mid-run, after some rows are out.
code=0
timeout --preserve-status -s INT 4 sigcheck run -json -protect none,checksum -m 1:64M -i 2000 -x 1 latency >run.jsonl 2>run.err || code=$?
[[ $code == 130 ]] || fail "interrupted run exited $code, want 130: $(cat run.err)"
grep -q 'sigcheck run: interrupted: [0-9]* of 54 rows measured' run.err || fail "no 'interrupted' line: $(cat run.err)"
rows=$(grep -c '^{"op":"latency","transport":"local","protect":"\(none\|checksum\)","size":[0-9]*,"value":[0-9.]*,"unit":"us"' run.jsonl || true)
[[ $rows -ge 1 && $rows -lt 54 && $rows == $(wc -l <run.jsonl) ]] || fail "$rows rows of $(wc -l <run.jsonl) lines kept: $(head -c 500 run.jsonl)"
code=0
timeout --preserve-status -s INT 4 sigcheck run -protect none,checksum -m 1:64M -i 2000 -x 1 latency >run.txt 2>/dev/null || code=$?
[[ $code == 130 ]] || fail "interrupted table run exited $code, want 130"
grep -q '^1 ' run.txt || fail "the table lost its rows: $(cat run.txt)"

step "sigcheck run draws a plot"
expect 0 sigcheck run -protect none,checksum,merkle -m 1K:256K -i 20 -plot run.png bw
[[ $(head -c 8 run.png | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "run.png is not a PNG"
has '% none' out
expect 0 sigcheck run -ranks 3 -protect none,merkle -m 1K:64K -i 10 -plot run.svg allgather
grep -q 'overhead (% more time)' run.svg || fail "run.svg has no overhead panel"

echo "newuser: all $n steps passed"
