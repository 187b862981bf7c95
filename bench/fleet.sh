#!/usr/bin/env bash
# bench/fleet.sh BUILD [fleet options] - the fleet link's figures (issue 13).
# Starts a loopback redis-server (tests/common/redis_harness.sh), runs
# BUILD/bench/fleet against it with BUILD/daemon/breakerd (figures 1-3:
# propagation p50/p99 for 2 and 4 hosts, 4 hosts against a dead upstream
# with and without the link, discovered at once and staggered,
# redis-server killed mid-run), then figure 4:
# instructions per acquire+release under callgrind on a fleet = 1 record
# served by `breakerd --fleet` against a fleet = 0 record served by
# breakerd without it (as bench/callgrind.sh; CALLGRIND_OPS, default
# 100000; FLEET_CALLGRIND=0 skips it). Exit: fleet's status (3: a figure
# not measured, e.g. the link missing), 1: an error.
# FLEET_BREAKERD / FLEET_EXE: another breakerd / fleet binary than BUILD's.
#   bench/fleet.sh build                       # the full run (~2 min)
#   bench/fleet.sh build --trips 10 --seconds 1 --outage-s 1   # small
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: bench/fleet.sh BUILD [--trips N] [--seconds S] [--workers W] [--outage-s S] [--parts 123]}
shift
exe=${FLEET_EXE:-$build/bench/fleet}
breakerd=${FLEET_BREAKERD:-$build/daemon/breakerd}
for f in "$exe" "$breakerd"; do
	[ -x "$f" ] || { echo "fleet.sh: $f not built (ninja -C $build)" >&2; exit 1; }
done
. "$here/../tests/common/redis_harness.sh"
redis_have || { echo "fleet.sh: redis-server not installed (apt-get install -y redis-server)" >&2; exit 1; }
redis_start || exit 1
ctl=$(mktemp -d /tmp/brk-fleetbench-ctl.XXXXXX)
mkfifo "$ctl/req" "$ctl/ack"
cleanup() { redis_stop; rm -rf "$ctl"; }
trap cleanup EXIT INT TERM

# fleet asks on $ctl/req for "kill" / "restart" (figure 3) and waits for
# "ok" on $ctl/ack; the harness here keeps track of the server's pid.
"$exe" --redis "$REDIS_URL" --breakerd "$breakerd" --ctl "$ctl" "$@" &
fpid=$!
exec 3<>"$ctl/req"
# A blocking read (bash's read -t drops the bytes it got when it times
# out); a watcher says "done" when fleet has exited.
{ while kill -0 "$fpid" 2>/dev/null; do sleep 0.5; done; echo done >"$ctl/req"; } &
wpid=$!
while read -r cmd <&3; do
	case "$cmd" in
	done) break ;;
	kill) redis_kill; echo "fleet.sh: redis-server killed" >&2 ;;
	restart) if redis_restart >/dev/null; then
			echo "fleet.sh: redis-server restarted on port $REDIS_PORT" >&2
		else
			echo "fleet.sh: redis_restart failed" >&2
		fi ;;
	*) echo "fleet.sh: unknown control line: $cmd" >&2 ;;
	esac
	echo ok >"$ctl/ack"
done
wait "$wpid"
wait "$fpid"
rc=$?
exec 3<&-

[ "${FLEET_CALLGRIND:-1}" = 0 ] && exit $rc
command -v valgrind >/dev/null 2>&1 || {
	echo "instructions per acquire+release           not measured: valgrind not installed (apt-get install valgrind)"
	exit 3
}
ops=${CALLGRIND_OPS:-100000}
tmp=$(mktemp -d /tmp/brk-fleetbench-cg.XXXXXX)
cleanup() { redis_stop; rm -rf "$ctl" "$tmp"; }
# ir SHM N [--fleet-record]: total Ir of one callgrind run
ir() {
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
		"$exe" --callgrind-op "$2" --shm "$1" ${3:-} >/dev/null 2>"$tmp/log" ||
		{ cat "$tmp/log" >&2; return 1; }
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg"
}
# per_op SHM [--fleet-record]: instructions per acquire+release
per_op() {
	local a b
	a=$(ir "$1" 0 ${2:-}) && b=$(ir "$1" "$ops" ${2:-}) || return 1
	awk -v a="$a" -v b="$b" -v n="$ops" 'BEGIN { printf "%.1f", (b - a) / n }'
}
# daemon SHM [--fleet ...]: start breakerd, wait for its segment
daemon() {
	local shm=$1
	shift
	"$breakerd" --shm "$shm" "$@" >"$tmp/breakerd.log" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do
		[ -e "/dev/shm${shm}" ] && return 0
		kill -0 "$dpid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
shm_on=/brk-fleetbench-cgon-$$ shm_off=/brk-fleetbench-cgoff-$$
echo "== instructions per acquire+release (valgrind --tool=callgrind, $ops ops)"
if daemon "$shm_on" --fleet "$REDIS_URL" --host-id hcg; then
	sleep 0.5
	why="the callgrind run failed"
	on=$(per_op "$shm_on" --fleet-record) || on=
	if kill -0 "$dpid" 2>/dev/null; then
		kill "$dpid"; wait "$dpid" 2>/dev/null
	else
		on= ; why="breakerd --fleet exited: $(tail -n 1 "$tmp/breakerd.log")"
	fi
else
	on= ; why="breakerd --fleet did not start: $(tail -n 1 "$tmp/breakerd.log")"
	kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null
fi
rm -f "/dev/shm$shm_on"
daemon "$shm_off" || { echo "fleet.sh: breakerd did not start" >&2; exit 1; }
off=$(per_op "$shm_off") || off=
kill "$dpid"; wait "$dpid" 2>/dev/null
rm -f "/dev/shm$shm_off"
printf '%-46s %s\n' "fleet = 0, breakerd without --fleet" "${off:-?} instructions"
if [ -n "$on" ]; then
	printf '%-46s %s instructions\n' "fleet = 1, breakerd --fleet running" "$on"
	awk -v a="$on" -v b="$off" 'BEGIN { printf "%-46s %+.1f instructions (%.3f x)\n", "difference", a - b, a / b }'
else
	printf '%-46s not measured: %s\n' "fleet = 1, breakerd --fleet running" "$why"
	[ $rc -eq 0 ] && rc=3
fi
exit $rc
