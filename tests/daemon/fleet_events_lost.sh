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
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetlost
fleet_redis

hosts_up a b
bctl_all config pay --fleet on
"$BCTL" --shm "${SHM[a]}" config solo >/dev/null

"$BURST" "${SHM[a]}" pay solo 50000 || bad "fleet_burst failed"
state_is a pay open || bad "A's pay not open after the burst"
until_s 5 state_is b pay open && ok "A's trip reaches B though the ring overwrote it" ||
	bad "B's pay $(state b pay): the lost trip was never sent" "$(grep -c . "$TMP/breakerd.a") log lines on A"
grep -q 'fleet=events_lost.*then=snapshot' "$TMP/breakerd.a" && ok "A logs fleet=events_lost then=snapshot" ||
	bad "no events_lost line on A"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
