#!/usr/bin/env bash
# fleet_dup_host.sh BREAKERD BCTL PEEK - two breakerd with the same
# --host-id on one channel ignore each other's decisions as their own
# echo; each must say so in its log (fleet=duplicate_host_id), while a
# host's own echoes and its own catch-up keys after a restart must not.
# Stops what it starts, removes its segments.
set -u
BREAKERD=${1:?usage: fleet_dup_host.sh BREAKERD BCTL PEEK}
BCTL=${2:?}
PEEK=${3:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetdup
fleet_redis
start() {
	host_start $1 --fleet "$REDIS_URL" --host-id same
	host_connected $1
}
dup() { logged $1 'fleet=duplicate_host_id'; }

start one
"$BCTL" --shm "${SHM[one]}" config pay --fleet on >/dev/null
"$BCTL" --shm "${SHM[one]}" trip pay --for 30s >/dev/null
"$BCTL" --shm "${SHM[one]}" reset pay >/dev/null
"$BCTL" --shm "${SHM[one]}" force-open pay >/dev/null
sleep 1
dup one && bad "a lone host's own echoes read as a duplicate" "$(grep duplicate "$TMP/breakerd.one")" ||
	ok "a lone host's own echoes are not a duplicate"
# restart: its own catch-up key (forced_open, host same) is read back
host_stop one
start one
sleep 1
dup one && bad "its own catch-up key after a restart read as a duplicate" ||
	ok "its own catch-up key after a restart is not a duplicate"
"$BCTL" --shm "${SHM[one]}" reset pay >/dev/null

start two
"$BCTL" --shm "${SHM[two]}" config pay --fleet on >/dev/null
"$BCTL" --shm "${SHM[two]}" trip pay --for 30s >/dev/null
until_s 5 dup one && ok "one logs fleet=duplicate_host_id for two's trip" ||
	bad "one says nothing of another breakerd with its host id" "$(tail -5 "$TMP/breakerd.one")"
"$BCTL" --shm "${SHM[one]}" trip pay --for 30s >/dev/null
until_s 5 dup two && ok "two logs fleet=duplicate_host_id for one's trip" ||
	bad "two says nothing" "$(tail -5 "$TMP/breakerd.two")"
for i in 1 2 3 4 5; do "$BCTL" --shm "${SHM[two]}" reset pay >/dev/null; done
sleep 0.5
n=$(grep -c 'fleet=duplicate_host_id' "$TMP/breakerd.one")
[ "$n" -eq 1 ] && ok "the warning is rate-limited (1 line for 6 messages)" || bad "$n warning lines"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
