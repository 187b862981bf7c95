#!/usr/bin/env bash
# fleet_snapshot_remote.sh BREAKERD BCTL PEEK - a state a peer's message
# put on this host is not republished as this host's own after a
# reconnect (daemon/fleet/fleet_pub.c snapshot): A forces "pay" open, B applies
# it; redis-server is killed, A's operator resets pay during the outage;
# once redis-server is back, B's snapshot must not send the stale
# forced_open (as host b) that would force A open again, and B's
# restart must not either. Stops what it starts, removes its segments.
set -u

BREAKERD=${1:?usage: fleet_snapshot_remote.sh BREAKERD BCTL PEEK}
BCTL=${2:?}
PEEK=${3:?}
HERE=$(dirname "${BASH_SOURCE[0]}")
TMP=$(mktemp -d /tmp/brk-fleetsnap.XXXXXX)
declare -A SHM DPID
pass=0
fail=0

. "$HERE/../common/check.sh"
. "$HERE/../common/redis_harness.sh"

cleanup() {
	local h
	[ -n "${MON:-}" ] && kill "$MON" 2>/dev/null
	for h in a b; do
		[ -n "${DPID[$h]:-}" ] && kill "${DPID[$h]}" 2>/dev/null &&
			wait "${DPID[$h]}" 2>/dev/null
	done
	for h in a b; do rm -f "/dev/shm${SHM[$h]:-/none}"; done
	redis_stop
	rm -rf "$TMP"
}

if ! redis_have; then
	echo "SKIP: no redis-server"
	exit 77
fi
redis_start || exit 1
trap cleanup EXIT INT TERM

st() { "$PEEK" "${SHM[$1]}" status | sed -n "s/^$2=//p"; }
st_is() { [ "$(st "$1" "$2")" = "$3" ]; }
mode() { "$BCTL" --shm "${SHM[$1]}" inspect "$2" | awk '$1 == "mode:" { print $2; exit }'; }
mode_is() { [ "$(mode "$1" "$2")" = "$3" ]; }
start() {
	"$BREAKERD" --shm "${SHM[$1]}" --fleet "$REDIS_URL" --host-id "$1" \
		>>"$TMP/breakerd.$1" 2>&1 &
	DPID[$1]=$!
}

for h in a b; do
	SHM[$h]=/brk-fleetsnap-$h-$$
	start $h
done
for h in a b; do
	until_s 10 test -e "/dev/shm${SHM[$h]}"
	until_s 10 st_is $h state connected || bad "host $h connected" "$(tail -5 "$TMP/breakerd.$h")"
	"$BCTL" --shm "${SHM[$h]}" config pay --fleet on >/dev/null
done

"$BCTL" --shm "${SHM[a]}" force-open pay >/dev/null
until_s 5 mode_is b pay forced_open && ok "force-open on A forces pay open on B" ||
	bad "B mode $(mode b pay)"

redis_kill
until_s 5 st_is a state down || bad "A down"
"$BCTL" --shm "${SHM[a]}" reset pay >/dev/null
mode_is a pay normal && ok "A reset during the outage" || bad "A mode $(mode a pay)"
redis_restart || exit 1
redis_cli MONITOR >"$TMP/monitor" 2>/dev/null &
MON=$!
for h in a b; do
	until_s 15 st_is $h state connected || bad "host $h connected again" "$(tail -5 "$TMP/breakerd.$h")"
done
sleep 1.5
mode_is a pay normal && ok "A stays normal after the reconnect" ||
	bad "A forced again by a peer's republished state: $(mode a pay)" \
	    "$(grep PUBLISH "$TMP/monitor")"
grep -q 'PUBLISH.*\\"host\\":\\"b\\".*forced_open' "$TMP/monitor" &&
	bad "B republished A's forced_open as its own" "$(grep PUBLISH "$TMP/monitor")" ||
	ok "B did not republish A's decision"

# B restarted: its snapshot must not send A's old decision either
kill "${DPID[b]}" && wait "${DPID[b]}" 2>/dev/null
: >"$TMP/monitor"
start b
until_s 10 st_is b state connected || bad "B connected after its restart"
sleep 1
mode_is a pay normal && ok "A stays normal after B's restart" || bad "A mode after B's restart: $(mode a pay)"
grep -q 'PUBLISH.*\\"host\\":\\"b\\"' "$TMP/monitor" &&
	bad "B's restart republished a peer's state" "$(grep PUBLISH "$TMP/monitor")" ||
	ok "B's restart sends nothing of A's"

# and a state B decided itself is still sent at a reconnect
"$BCTL" --shm "${SHM[b]}" reset pay >/dev/null
"$BCTL" --shm "${SHM[b]}" trip pay --for 30s >/dev/null
until_s 5 mode_is a pay normal
kill "${DPID[b]}" && wait "${DPID[b]}" 2>/dev/null
"$BCTL" --shm "${SHM[a]}" reset pay >/dev/null
start b
lst() { "$BCTL" --shm "${SHM[$1]}" list | awk -v n="$2" '$1 == n { print $2 }'; }
until_s 10 eval '[ "$(lst a pay)" = open ]' && ok "B's own open is sent again at its restart" ||
	bad "A pay $(lst a pay) after B's snapshot"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
