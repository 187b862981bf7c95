#!/usr/bin/env bash
# tests/bench/fleet_smoke.sh FLEET_SH BUILD
#
# bench/fleet.sh at its smallest size (10 trips, 1 s runs, no callgrind):
# every figure's line is printed with a number, or the run says plainly
# which part is not there. Skips (77) with a message when redis-server is
# not installed or breakerd's fleet link is not available (the figures
# then say "not measured"). No figure is judged: speed targets live in
# the benchmark.
set -u
fleet_sh=$1 build=$2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

if [ ! -x /usr/bin/redis-server ]; then
	echo "SKIP: redis-server not installed (apt-get install -y redis-server)"
	exit 77
fi
# this run's segments and daemons: the bench's /brk-fleetbench-* that were
# not there before (another run of the bench, in a developer's shell, may
# be going on beside this one)
theirs() { ls /dev/shm | grep "^brk-fleetbench-" | sort; }
before=$(theirs)
daemons_before=$(pgrep -f "breakerd --shm /brk-fleetbench-" | sort)
FLEET_CALLGRIND=0 bash "$fleet_sh" "$build" --trips 10 --seconds 1 --outage-s 1 \
	--workers 1 >"$out" 2>"$err" &
pid=$!
wait $pid
rc=$?
left=$(comm -13 <(echo "$before") <(theirs))
[ -n "$left" ] && bad "segment left in /dev/shm:" $left
[ -n "$(comm -13 <(echo "$daemons_before") <(pgrep -f "breakerd --shm /brk-fleetbench-" | sort))" ] &&
	bad "a breakerd of the run is still running"

# the no-link side of figure 2 never needs the link
grep -Eq '^  calls sent to the upstream +[-0-9]+ +[0-9]+$' "$out" ||
	bad "figure 2: no 'calls sent' row with the no-link figure"
grep -Eq '^  bound: threshold \+ periods +[-0-9]+ +[0-9]+$' "$out" ||
	bad "figure 2: no bound row"
if [ $rc -eq 3 ] && grep -q 'not measured: .*--fleet\|not measured: .*keep fleet' "$out"; then
	if [ $fails -ne 0 ]; then
		echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1
	fi
	echo "SKIP: the fleet link is not available in this build:"
	grep 'not measured' "$out" | head -n 3
	exit 77
fi
[ $rc -eq 0 ] || bad "exit status $rc"
grep -Eq '^  host B +p50 +[0-9.]+ ms +p99 +[0-9.]+ ms' "$out" || bad "figure 1: no 2-host p50/p99"
grep -Eq '^  the last of the other hosts +p50 +[0-9.]+ ms' "$out" || bad "figure 1: no 4-host p50/p99"
# figure 2's two scenarios, each with its ratios
for sc in 'discovered at once' 'discovery staggered'; do
	grep -Eq "^4 hosts, dead upstream, $sc +[0-9.]+ s" "$out" || bad "figure 2: no '$sc' scenario"
done
[ "$(grep -Ec '^  no link / fleet link \(sent\) +[0-9.]+$' "$out")" -eq 2 ] ||
	bad "figure 2: not a ratio for each scenario"
[ "$(grep -Ec '^  no link / fleet link \(probes\) +[0-9.]+$' "$out")" -eq 2 ] ||
	bad "figure 2: not a probe ratio for each scenario"
for ph in before during after; do
	grep -Eq "^  acquire\+release $ph .* p50 +[0-9.]+ ns/op +p99 +[0-9.]+ ns/op" "$out" ||
		bad "figure 3: no ns/op row $ph"
done
grep -Eq 'local trip on B refuses during the outage +yes' "$out" ||
	bad "figure 3: local protection not shown held"
grep -Eq 'trip made on A in the outage refuses on B +[0-9.]+ ms' "$out" ||
	bad "figure 3: no catch-up"
if [ $fails -ne 0 ]; then
	echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
	exit 1
fi
cat "$out"
echo "ok: every figure printed"
