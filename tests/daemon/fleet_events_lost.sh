#!/usr/bin/env bash
# fleet_events_lost.sh BREAKERD BCTL PEEK BURST - a fleet trip the event
# ring overwrote before breakerd's publisher read it (a burst of 100000
# events of a non-fleet breaker right after it, fleet_burst.c) still
# reaches the peer: the publisher sees the loss and sends its snapshot.
# Stops what it starts, removes its segments.
set -u
BREAKERD=${1:?usage: fleet_events_lost.sh BREAKERD BCTL PEEK BURST}
BCTL=${2:?}
PEEK=${3:?}
BURST=${4:?}
HERE=$(dirname "${BASH_SOURCE[0]}")
TMP=$(mktemp -d /tmp/brk-fleetlost.XXXXXX)
declare -A SHM DPID
pass=0
fail=0
. "$HERE/../common/check.sh"
. "$HERE/../common/redis_harness.sh"

cleanup() {
	local h
	for h in a b; do
		[ -n "${DPID[$h]:-}" ] && kill "${DPID[$h]}" 2>/dev/null &&
			wait "${DPID[$h]}" 2>/dev/null
		rm -f "/dev/shm${SHM[$h]:-/none}"
	done
	redis_stop
	rm -rf "$TMP"
}
if ! redis_have; then
	echo "SKIP: no redis-server"
	exit 77
fi
redis_start || exit 1
trap cleanup EXIT INT TERM
st_is() { [ "$("$PEEK" "${SHM[$1]}" status | sed -n "s/^$2=//p")" = "$3" ]; }
state() { "$BCTL" --shm "${SHM[$1]}" list | awk -v n="$2" '$1 == n { print $2 }'; }
state_is() { [ "$(state "$1" "$2")" = "$3" ]; }

for h in a b; do
	SHM[$h]=/brk-fleetlost-$h-$$
	"$BREAKERD" --shm "${SHM[$h]}" --fleet "$REDIS_URL" --host-id "$h" \
		>"$TMP/breakerd.$h" 2>&1 &
	DPID[$h]=$!
done
for h in a b; do
	until_s 10 test -e "/dev/shm${SHM[$h]}"
	until_s 10 st_is $h state connected || bad "host $h connected" "$(tail -5 "$TMP/breakerd.$h")"
	"$BCTL" --shm "${SHM[$h]}" config pay --fleet on >/dev/null
done
"$BCTL" --shm "${SHM[a]}" config solo >/dev/null

"$BURST" "${SHM[a]}" pay solo 50000 || bad "fleet_burst failed"
state_is a pay open || bad "A's pay not open after the burst"
until_s 5 state_is b pay open && ok "A's trip reaches B though the ring overwrote it" ||
	bad "B's pay $(state b pay): the lost trip was never sent" "$(grep -c . "$TMP/breakerd.a") log lines on A"
grep -q 'fleet=events_lost.*then=snapshot' "$TMP/breakerd.a" && ok "A logs fleet=events_lost then=snapshot" ||
	bad "no events_lost line on A"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
