#!/usr/bin/env bash
# tests/bench/scale_smoke.sh SCALE BCTL BREAKERD
#
# bench/scale runs at its smallest size (--max 1000 --quick) and prints
# every row of its table with a figure, every goal line, and leaves no
# segment behind. No figure is judged: speed targets live in the
# benchmark, not in tests.
set -u
scale=$1 bctl=$2 breakerd=$3
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$scale" --max 1000 --quick --bctl "$bctl" --breakerd "$breakerd" >"$out" 2>"$err" &
pid=$!
wait $pid
rc=$?
# 0: every goal met, 3: one missed or not measured (10^6 is not run here)
[ $rc -eq 0 ] || [ $rc -eq 3 ] || bad "exit status $rc"

for row in 'breaker (no bulkhead)' 'breaker + bulkhead of 10' 'GCRA bucket' \
	'retry budget'; do
	grep -Eq "^$(printf '%s' "$row" | sed 's/[+()]/\\&/g') +[0-9]+ +[0-9]+$" "$out" ||
		bad "kind row '$row' missing or without figures"
done
for row in 'create: records/s' 'create: all N (s)' \
	'lookup: get, cached, random of N (ns/op)' \
	'lookup: get, cached, 8 hot names (ns/op)' \
	'lookup: breaker_find, fresh/index (ns/op)' \
	'breakerd CPU idle (% of a core)' \
	'breakerd CPU, 1,000 leases/100 procs (%)' \
	'reclaim latency, 1,000 leases (ms)' '  the slowest of the kills (ms)' \
	'  breakerd interval (ms)' \
	'bctl list: first line (ms)' 'bctl list: total (ms)' 'bctl list: lines' \
	'bctl metrics: first line (ms)' 'bctl metrics: total (ms)' \
	'bctl metrics: series'; do
	line=$(grep -F -- "$row" "$out" | head -n 1)
	[ -n "$line" ] || { bad "row '$row' missing"; continue; }
	fig=${line:46}
	[[ $fig =~ ^\ +[0-9]+(\.[0-9]+)?$ ]] || bad "row '$row' has no figure: '$fig'"
done
n=$(grep -c '^GOAL ' "$out")
[ "$n" -eq 8 ] || bad "$n GOAL lines, expected 8"
grep -q '^GOAL .*10^6.*not measured (skipped' "$out" ||
	bad "a goal at 10^6 is not reported as not measured (skipped)"
grep -q '^GOAL .*10^6.*: met' "$out" && bad "a goal at 10^6 reported met without 10^6 records"
ls /dev/shm | grep -q "breakerd-scale-$pid" && bad "segment left in /dev/shm"

if [ $fails -ne 0 ]; then
	echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
	exit 1
fi
echo "ok: every row and goal line printed"
