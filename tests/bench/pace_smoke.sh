#!/usr/bin/env bash
# tests/bench/pace_smoke.sh PACE_SH BUILD
#
# bench/pace.sh at its smallest (1 s per strategy) prints the parameters
# and one row with figures per strategy, and leaves no segment and no
# nginx behind. No figure is judged: the goals live in the benchmark and
# docs/guide/performance.md. Skips (77) without nginx-light.
set -u
pace_sh=$1 build=$2
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || {
	echo "SKIP: nginx is not installed (apt-get install -y nginx-light)"; exit 77; }
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

before=$(ls /dev/shm | grep -c '^brk-bench-pace-')
# nginx masters of the harness that were running before (another job's:
# judge only the ones this run started)
nginx_before=" $(pgrep -f "nginx.*brk-nginx" | tr '\n' ' ') "
bash "$pace_sh" "$build" --seconds 1 >"$out" 2>"$err"
rc=$?
[ $rc -eq 0 ] || bad "exit status $rc: $(head -c 300 "$err")"
grep -q '^pace benchmark: nginx limit_req 5 r/s, burst 5 nodelay' "$out" ||
	bad "no parameters line"
grep -q '^allowance per strategy: 10 requests' "$out" || bad "no allowance line"
for row in 'none' 'retry-after' 'aimd \(per process\)' 'cooling \(breaker\)' \
	'pacing \(shared\)' 'pacing \(fair\)'; do
	grep -Eq "^$row +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$out" ||
		bad "row '$row' missing or without figures"
done
after=$(ls /dev/shm | grep -c '^brk-bench-pace-')
[ "$after" -le "$before" ] || bad "segments left behind: $(ls /dev/shm | grep '^brk-bench-pace-')"
for pid in $(pgrep -f "nginx.*brk-nginx"); do
	case $nginx_before in *" $pid "*) continue ;; esac
	bad "an nginx of the harness is still running (pid $pid)"
done
cat "$out"
[ $fails -eq 0 ] && echo "pace smoke: ok"
[ $fails -eq 0 ]
