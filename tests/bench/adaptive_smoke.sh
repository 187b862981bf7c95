#!/usr/bin/env bash
# tests/bench/adaptive_smoke.sh ADAPTIVE_SH BUILD
#
# bench/adaptive.sh at its smallest (2 s per strategy, the cut at 1 s, no
# warm-up) prints the parameters, the unloaded latency and the measured
# capacity, a before and an after row with figures per strategy, and
# leaves no segment and no gunicorn behind (its workers halved and given
# back five times). No figure is judged: the goals live in the benchmark,
# tests/integration/it_adaptive_gunicorn.sh and docs/guide/performance.md.
# Skips (77) without python3-gunicorn.
set -u
adaptive_sh=$1 build=$2
/usr/bin/python3 -c 'import gunicorn' 2>/dev/null || {
	echo "SKIP: gunicorn is not installed (apt-get install -y python3-gunicorn)"; exit 77; }
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

before=$(ls /dev/shm | grep -c '^brk-bench-adaptive-')
# gunicorns of the harness that were running before (another job's: judge
# only the ones this run started)
guni_before=" $(pgrep -f "gunicorn.*brk-gunicorn" | tr '\n' ' ') "
bash "$adaptive_sh" "$build" --seconds 2 --warmup 0 >"$out" 2>"$err"
rc=$?
[ $rc -eq 0 ] || bad "exit status $rc: $(head -c 300 "$err")"
grep -q '^adaptive benchmark: gunicorn 4 sync workers x 20 ms (nominal capacity 200 r/s), 16 client processes' "$out" ||
	bad "no parameters line"
grep -Eq '^unloaded \(1 client, 2 s\): p50 [0-9.]+ ms' "$out" || bad "no unloaded line"
grep -Eq '^measured capacity \(8 clients, no limit\): [0-9.]+ r/s' "$out" || bad "no capacity line"
num='[0-9.]+'
figs="$num +$num +$num +$num +$num +$num +$num +$num +[0-9.-]+ +[0-9.-]+ +\| +$num +$num +$num +$num"
for s in none low high per-process host-wide; do
	grep -A1 -E "^$s +before +$figs$" "$out" | grep -Eq "^ +after +$figs$" ||
		bad "rows of '$s' missing or without figures"
done
grep -q '^per-process overshoot before the cut' "$out" || bad "no overshoot line"
after=$(ls /dev/shm | grep -c '^brk-bench-adaptive-')
[ "$after" -le "$before" ] || bad "segments left behind: $(ls /dev/shm | grep '^brk-bench-adaptive-')"
for pid in $(pgrep -f "gunicorn.*brk-gunicorn"); do
	case $guni_before in *" $pid "*) continue ;; esac
	bad "a gunicorn of the harness is still running (pid $pid)"
done
cat "$out"
[ $fails -eq 0 ] && echo "adaptive smoke: ok"
[ $fails -eq 0 ]
