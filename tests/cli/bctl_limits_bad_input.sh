#!/usr/bin/env bash
# bctl_limits_bad_input.sh BCTL - bctl bucket / take / budget / exec --retries against
# bad input. Every case checks the exit status AND the one line bctl prints
# on stderr (plus the "try 'bctl --help'" hint for usage errors); nothing
# stored before may be lost or changed by a rejected command.
#
# Uses its own segment /brkbud-bad-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_limits_bad_input.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkbud-bad

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, check, expect, stored

# --- what must survive ---------------------------------------------------------
expect "create bucket keep (rate 5, burst 3)" 0 '' bucket keep --rate 5 --burst 3
grep -qx 'keep: bucket created: rate 5/s, burst 3' "$TMP/out" &&
	ok "  it says so on stdout" || bad "  stdout: $(cat "$TMP/out")"
expect "create budget rb (floor 2, ratio 0.3)" 0 '' budget rb --floor 2 --ratio 0.3
expect "create breaker br" 0 '' config br --failure-threshold 7

# --- bctl bucket: rate -----------------------------------------------------
r="^bctl: --rate: "
expect "--rate 0" 2 "${r}'0' must be greater than 0 \\(tokens per second\\)\$" \
	bucket keep --rate 0 --burst 3
expect "--rate -1" 2 "${r}'-1' is negative: must be greater than 0" \
	bucket keep --rate -1 --burst 3
expect "--rate abc" 2 "${r}'abc' is not a number" bucket keep --rate abc --burst 3
expect "--rate inf" 2 "${r}'inf' is not a finite number" bucket keep --rate inf --burst 3
expect "--rate nan" 2 "${r}'nan' is not a finite number" bucket keep --rate nan --burst 3
expect "--rate -inf" 2 "${r}'-inf' is not a finite number" bucket keep --rate -inf --burst 3
expect "--rate 1e999 (overflows)" 2 "${r}'1e999' is out of range" \
	bucket keep --rate 1e999 --burst 3
expect "--rate 5x (trailing garbage)" 2 "${r}'5x' is not a number" \
	bucket keep --rate 5x --burst 3
expect "--rate 0x10 (hex)" 2 "${r}'0x10' is not a number" bucket keep --rate 0x10 --burst 3
expect "--rate ' 5' (space)" 2 "${r}' 5' is not a number" bucket keep --rate ' 5' --burst 3
expect "--rate '' (empty)" 2 "${r}'' is not a number" bucket keep --rate '' --burst 3
expect "--rate 2e9 (above 1e9)" 2 "${r}'2e9' is out of range \\(0\\.0001\\.\\.1e\\+09" \
	bucket keep --rate 2e9 --burst 3
expect "--rate 0.00001 (below 0.0001)" 2 "${r}'0.00001' is out of range" \
	bucket keep --rate 0.00001 --burst 3
# --- bctl bucket: burst ----------------------------------------------------
b="^bctl: --burst: "
expect "--burst 0" 2 "${b}'0' is out of range \\(1\\.\\.1000000\\)\$" bucket keep --rate 5 --burst 0
expect "--burst -3" 2 "${b}'-3' is negative: must be 1\\.\\.1000000 tokens\$" \
	bucket keep --rate 5 --burst -3
expect "--burst 2000000" 2 "${b}'2000000' is out of range \\(1\\.\\.1000000\\)\$" \
	bucket keep --rate 5 --burst 2000000
expect "--burst 2.5" 2 "${b}'2.5' is not an integer" bucket keep --rate 5 --burst 2.5
# --- bctl bucket: operands and kinds ------------------------------------------
expect "bucket without --rate/--burst" 2 "^bctl: bucket keep: missing --rate PER_SECOND and/or --burst N\$" \
	bucket keep
expect "new bucket with --rate only" 2 "^bctl: bucket fresh: no such bucket: --rate and --burst are both needed to create it\$" \
	bucket fresh --rate 5
expect "bucket without NAME" 2 "^bctl: bucket: missing bucket NAME\$" bucket --rate 5 --burst 3
expect "bucket with a bad NAME" 2 "^bctl: invalid breaker name 'a b'" bucket 'a b' --rate 5 --burst 3
expect "--rate without its value" 2 "^bctl: option '--rate' needs a value\$" bucket keep --rate
expect "bucket over a breaker" 1 "^bctl: $SHM: 'br' is a breaker, not a bucket\$" \
	bucket br --rate 5 --burst 3
expect "bucket over a budget" 1 "^bctl: $SHM: 'rb' is a retry budget, not a bucket\$" \
	bucket rb --rate 5 --burst 3
run list --json
grep -q '"fresh"' "$TMP/out" && bad "a rejected bucket command created 'fresh'" ||
	ok "a rejected bucket command created nothing"

# --- bctl take ---------------------------------------------------------------------
expect "take N larger than the burst" 2 "^bctl: take keep: 4 tokens is more than the bucket's burst \\(3\\): it can never be granted\$" \
	take keep 4
expect "take 0" 2 "^bctl: take: N must be at least 1 \\(got '0'\\)\$" take keep 0
expect "take -1" 2 "^bctl: take: N: '-1' is not a whole number of tokens\$" take keep -1
expect "take 1.5" 2 "^bctl: take: N: '1.5' is not a whole number of tokens\$" take keep 1.5
expect "take 2^32" 2 "^bctl: take: N: '4294967296' is out of range" take keep 4294967296
expect "take NAME N extra" 2 "^bctl: take: unexpected argument 'x'\$" take keep 1 x
expect "take without NAME" 2 "^bctl: take: missing bucket NAME\$" take
expect "take of an unknown bucket" 1 "^bctl: $SHM: no bucket named 'nosuch'\$" take nosuch
expect "take of a breaker" 1 "^bctl: $SHM: 'br' is a breaker, not a bucket\$" take br
run --shm "$SHM-absent" take keep
check "take on an absent segment" 1 "^bctl: $SHM-absent: no such segment"
[ -e "/dev/shm$SHM-absent" ] && bad "take created the segment" || ok "take created no segment"
# Three tokens, then refused with the wait.
expect "take 3 of 3" 0 '' take keep 3
expect "take 1 more: refused with the wait" 75 "^bctl: keep: rate limited, retry in [0-9]+ ms\$" take keep

# --- bctl budget ---------------------------------------------------------------
expect "--ratio 1.5" 2 "^bctl: --ratio: '1.5' is out of range \\(0 or 0\\.001\\.\\.1 retries per first attempt\\)\$" \
	budget rb --ratio 1.5
expect "--ratio -0.1" 2 "^bctl: --ratio: '-0.1' is negative: must be 0 or more" budget rb --ratio -0.1
expect "--ratio abc" 2 "^bctl: --ratio: 'abc' is not a number" budget rb --ratio abc
expect "--ratio nan" 2 "^bctl: --ratio: 'nan' is not a finite number" budget rb --ratio nan
expect "--floor -1" 2 "^bctl: --floor: '-1' is negative: must be 0 or more" budget rb --floor -1
expect "--floor inf" 2 "^bctl: --floor: 'inf' is not a finite number" budget rb --floor inf
expect "--floor 2e6" 2 "^bctl: --floor: '2e6' is out of range" budget rb --floor 2e6
expect "--floor 0.0001 (finer than 0.001)" 2 "^bctl: --floor: '0.0001' is out of range" \
	budget rb --floor 0.0001
expect "budget over a bucket" 1 "^bctl: $SHM: 'keep' is a bucket, not a retry budget\$" budget keep
expect "budget without NAME" 2 "^bctl: budget: missing retry budget NAME\$" budget --ratio 0.1

# --- bctl exec --retries / --retry-budget ---------------------------------------
expect "exec --retries -1" 2 "^bctl: --retries: '-1' is negative: must be 0\\.\\.100\$" \
	exec br --retries -1 -- true
expect "exec --retries without a value" 2 "^bctl: option '--retries' needs a value\$" \
	exec br --retries -- true
expect "exec --retries abc" 2 "^bctl: --retries: 'abc' is not an integer \\(0\\.\\.100\\)\$" \
	exec br --retries abc -- true
expect "exec --retries 101" 2 "^bctl: --retries: '101' is out of range \\(0\\.\\.100\\)\$" \
	exec br --retries 101 -- true
expect "exec --retry-budget without --retries" 2 "^bctl: exec: --retry-budget needs --retries N\$" \
	exec br --retry-budget rb -- true
expect "exec --retry-budget with a bad name" 2 "^bctl: invalid breaker name 'a b'" \
	exec br --retries 1 --retry-budget 'a b' -- true
expect "exec --retry-budget naming a bucket" 1 "^bctl: $SHM: 'keep' is a bucket, not a retry budget\$" \
	exec br --retries 1 --retry-budget keep -- true
expect "exec on a bucket" 1 "^bctl: $SHM: 'keep' is a bucket, not a breaker\$" exec keep -- true
expect "exec --retries 2 of a success runs once" 0 '' exec br --retries 2 -- sh -c 'echo once'
[ "$(cat "$TMP/out")" = once ] && ok "  its output passed through once" ||
	bad "  stdout: $(cat "$TMP/out")"
# A failing command: three runs, each one's output passes through, CMD's status.
expect "exec --retries 2 of a failure: 3 runs, CMD's status" 3 '' \
	exec br --retries 2 -- sh -c 'echo run; exit 3'
[ "$(grep -c '^run$' "$TMP/out")" = 3 ] && ok "  every run's output passed through" ||
	bad "  stdout: $(cat "$TMP/out")"
# An exhausted budget: no floor, no ratio.
expect "budget empty (floor 0, ratio 0)" 0 '' budget empty --floor 0 --ratio 0
expect "exec with an exhausted budget: one run, deferred" 75 \
	"^bctl: br: retry budget empty exhausted \\(deferred\\)\$" \
	exec br --retries 5 --retry-budget empty -- sh -c 'echo run; exit 1'
[ "$(grep -c '^run$' "$TMP/out")" = 1 ] && ok "  CMD ran once" ||
	bad "  stdout: $(cat "$TMP/out")"

# --- nothing stored was lost ----------------------------------------------------
stored "bucket keep still has rate 5/s and burst 3" keep '"kind": "bucket"' \
	'"rate_per_s": 5(\.0)?,' '"burst": 3,' '"interval_ns": 200000000,'
stored "budget rb still has floor 2/s and ratio 0.3" rb '"kind": "budget"' \
	'"floor_per_s": 2(\.0)?,' '"ratio": 0\.3,'
stored "breaker br still has failure_threshold 7" br '"kind": "breaker"' \
	'"failure_threshold": 7,'
# A good update changes only what is given.
expect "bucket keep --burst 4 keeps the rate" 0 '' bucket keep --burst 4
stored "  rate 5/s, burst 4" keep '"rate_per_s": 5(\.0)?,' '"burst": 4,'
expect "budget rb --ratio 0.1 keeps the floor" 0 '' budget rb --ratio 0.1
stored "  floor 2/s, ratio 0.1" rb '"floor_per_s": 2(\.0)?,' '"ratio": 0\.1,'
# list shows all three kinds.
run list
grep -Eq '^keep +bucket +tokens [0-9.]+ of 4, rate 5/s' "$TMP/out" &&
	grep -Eq '^rb +budget +balance [0-9.]+, floor 2/s, ratio 0.1' "$TMP/out" &&
	grep -Eq '^br +closed ' "$TMP/out" && ok "list shows the bucket, the budget and the breaker" ||
	bad "list:" "$(cat "$TMP/out")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
