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
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetsnap
fleet_redis

hosts_up a b
bctl_all config pay --fleet on

"$BCTL" --shm "${SHM[a]}" force-open pay >/dev/null
until_s 5 mode_is b pay forced_open && ok "force-open on A forces pay open on B" ||
	bad "B mode $(mode b pay)"

redis_kill
until_s 5 st_is a state down || bad "A down"
"$BCTL" --shm "${SHM[a]}" reset pay >/dev/null
mode_is a pay normal && ok "A reset during the outage" || bad "A mode $(mode a pay)"
redis_restart || exit 1
redis_cli MONITOR >"$TMP/monitor" 2>/dev/null &
fleet_track $!
for h in a b; do host_connected $h 15; done
sleep 1.5
mode_is a pay normal && ok "A stays normal after the reconnect" ||
	bad "A forced again by a peer's republished state: $(mode a pay)" \
	    "$(grep PUBLISH "$TMP/monitor")"
grep -q 'PUBLISH.*\\"host\\":\\"b\\".*forced_open' "$TMP/monitor" &&
	bad "B republished A's forced_open as its own" "$(grep PUBLISH "$TMP/monitor")" ||
	ok "B did not republish A's decision"

# B restarted: its snapshot must not send A's old decision either
host_stop b
: >"$TMP/monitor"
host_start b
host_connected b
sleep 1
mode_is a pay normal && ok "A stays normal after B's restart" || bad "A mode after B's restart: $(mode a pay)"
grep -q 'PUBLISH.*\\"host\\":\\"b\\"' "$TMP/monitor" &&
	bad "B's restart republished a peer's state" "$(grep PUBLISH "$TMP/monitor")" ||
	ok "B's restart sends nothing of A's"

# and a state B decided itself is still sent at a reconnect
"$BCTL" --shm "${SHM[b]}" reset pay >/dev/null
"$BCTL" --shm "${SHM[b]}" trip pay --for 30s >/dev/null
until_s 5 mode_is a pay normal
host_stop b
"$BCTL" --shm "${SHM[a]}" reset pay >/dev/null
host_start b
until_s 10 state_is a pay open && ok "B's own open is sent again at its restart" ||
	bad "A pay $(state a pay) after B's snapshot"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
