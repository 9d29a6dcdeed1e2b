#!/usr/bin/env bash
# newuser.sh walks a new user's first five minutes with sigcheck, as the
# README tells them, and fails on the first step that goes wrong:
#
#   1. the README's first two commands: go run ./cmd/sigcheck demo (and
#      go test ./..., which .ci/run runs just before this script);
#   2. the README's five minutes, line for line as a user pastes them into
#      a fresh shell in the clone: each line must exit 0, or 1 where its
#      comment says (exit 1); then what they made is checked;
#   3. a bad flag: one line, exit 2;
#   4. checksums: a sha256sum file and an xxhsum file checked by sigcheck,
#      and sigcheck's files checked by sha256sum and xxhsum; a changed
#      file is caught;
#   5. a manifest: a truncated and an extended file are reported, flipped
#      bytes are located and repaired from the parity;
#   6. sigcheck run streams its rows and keeps them when interrupted;
#   7. sigcheck run draws a plot.
#
# Run it from anywhere in the repository: bash scripts/newuser.sh. It
# needs Go, coreutils, and xxhsum (Debian's xxhash package) for step 4's
# xxhsum half, which it skips, saying so, when xxhsum is absent.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Go's default, as on a new user's machine: a build in a clone records its
# commit (this workplace's go env turns that off with -buildvcs=false).
export GOFLAGS=-buildvcs=auto

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

step "the README's first two commands"
# The first code block of the README, before any section: the two lines.
first=$(awk '/^## /{exit} /^```sh$/{f=1; next} /^```$/{if (f) exit} f' "$repo/README.md")
[[ $first == $'go run ./cmd/sigcheck demo\ngo test ./...' ]] || fail "the README begins with other commands: $first"
cd "$repo"
expect 0 go run ./cmd/sigcheck demo
has 'whole again: true' out

step "the README's five minutes, pasted line by line into a fresh shell in the clone"
awk '/^## The first five minutes/{s=1} s && /^```sh$/{f=1; next} f && /^```$/{exit} f' "$repo/README.md" >"$work/walk.txt"
[[ $(grep -c . "$work/walk.txt") -ge 10 ]] || fail "no five-minute walk in the README: $(cat "$work/walk.txt")"
# Each line, then a check of its exit status: 1 where its comment says
# "(exit 1)", else 0. The lines share one shell, as pasted ones do.
{
  k=0
  while IFS= read -r line; do
    [[ -z $line ]] && continue
    k=$((k + 1))
    want=0
    [[ $line == *'(exit 1)'* ]] && want=1
    printf 'printf "%%s\\n" %q\n%s\n' "\$ $line" "$line"
    printf 's=$?; [[ $s == %d ]] || { echo "newuser: README walk line %d exited $s, want %d: "%q >&2; exit 1; }\n' "$want" "$k" "$want" "$line"
  done <"$work/walk.txt"
  echo 'echo "walk dir: $PWD"'
} >"$work/walk.sh"
mkdir "$work/tmp"
(cd "$repo" && TMPDIR="$work/tmp" bash --norc --noprofile "$work/walk.sh") >"$work/walk.out" 2>"$work/walk.err" ||
  fail "$(tail -n 5 "$work/walk.err"; echo; tail -n 20 "$work/walk.out")"
w=$(sed -n 's/^walk dir: //p' "$work/walk.out")
[[ -d $w && $w == "$work/tmp/"* && -x $w/sigcheck ]] || fail "the walk did not work in a scratch directory of its own: '$w'"
for f in a.txt big.bin big.bin.sigcheck SHA256SUMS XXH3SUMS run.png quality.svg sigcheck; do
  [[ ! -e $repo/$f ]] || fail "the walk left $f in the clone"
done
export PATH="$w:$PATH"
[[ $(command -v sigcheck) == "$w/sigcheck" ]] || fail "sigcheck is not the one the walk built"
cp "$work/walk.out" "$work/out"
if head=$(git -C "$repo" rev-parse --short=7 HEAD 2>/dev/null); then
  has "^sigcheck devel+$head " out # the commit it was built from
else
  has '^sigcheck devel' out
fi
has 'go1\.' out
has 'big.bin: OK' out
has 'bytes 4096-6143' out # the damaged segment, located
has 'repaired 1 segment' out
has '% none' out
[[ $(head -c 8 "$w/run.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "run.png is not a PNG"
grep -q '>random mapping<' "$w/quality.svg" || fail "quality.svg is no chart of the collisions"
cd "$w"

step "a bad flag says what and where to look, in one line, exit 2"
expect 2 sigcheck run -no-such-flag bw
[[ $(wc -l <"$work/err") == 1 && ! -s "$work/out" ]] || fail "not one line: $(cat "$work/err")"
has 'sigcheck run: unknown flag -no-such-flag (sigcheck run -h for help)' err
expect 0 sigcheck run -h
has '^Usage: sigcheck run' out

step "checksums, both ways with sha256sum and xxhsum"
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
