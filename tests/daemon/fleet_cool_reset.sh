#!/usr/bin/env bash
# fleet_cool_reset.sh BREAKERD BCTL PEEK - a reset of a breaker that is
# closed but cooling (a peer's cool_until applied here) is a newer local
# decision for the staleness rule (daemon/fleet/fleet_apply.c,
# docs/design/fleet.md "Fleet link"): a cool_until catch-up key sent before
# the reset is skipped, on
# the reconnect's catch-up and on the periodic one, and one sent after it
# is applied. Before the fix the reset moved no state (closed -> closed),
# so last_change_age_ms did not see it and the old key cooled the breaker
# again after the reset (a reset during an outage undone).
# Host x is emulated by hand (redis-cli SET/PUBLISH). Stops what it starts.
set -u

BREAKERD=${1:?usage: fleet_cool_reset.sh BREAKERD BCTL PEEK}
BCTL=${2:?}
PEEK=${3:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetcool
fleet_redis

# the cool-until ms left on NAME (0: not cooling)
cool() { "$BCTL" --shm "${SHM[b]}" inspect "$1" --json | /usr/bin/python3 -c \
	'import json,sys; print(json.load(sys.stdin).get("cool_until_remaining_ms", "?"))'; }
cooling() { [ "$(cool "$1")" != 0 ]; }
msg() { # SEQ SENT_MS NAME
	echo "{\"v\":1,\"host\":\"x\",\"seq\":$1,\"sent_ms\":$2,\"kind\":\"cool_until\",\"name\":\"$3\",\"remaining_ms\":60000}"
}

host_start b
host_connected b
for n in c1 c2; do
	"$BCTL" --shm "${SHM[b]}" config $n --fleet on --max-open 10m >/dev/null
done

# x's cool_until reaches b live; the operator resets on b
t0=$(now_ms)
redis_cli PUBLISH breakerd "$(msg 1 "$t0" c1)" >/dev/null
until_s 3 cooling c1 && ok "x's cool_until cools c1 on b" || bad "c1 cool $(cool c1)"
sleep 0.2
"$BCTL" --shm "${SHM[b]}" reset c1 >/dev/null
cooling c1 && bad "reset left c1 cooling $(cool c1)" || ok "the reset ends c1's cooling"
# x's key from before the reset (its DEL lost in an outage), then a reconnect
redis_cli SET breakerd:state:c1 "$(msg 1 "$t0" c1)" PX 60000 >/dev/null
redis_cli CLIENT KILL TYPE pubsub >/dev/null
sleep 1.5
cooling c1 && bad "a cool_until key sent before the reset here cooled c1 again ($(cool c1) ms)" \
	"$(grep 'name=c1' "$TMP/breakerd.b" | tail -3)" ||
	ok "a cool_until key sent before the reset here is skipped (reconnect catch-up)"
sleep 5.5 # a periodic catch-up too
cooling c1 && bad "the periodic catch-up cooled c1 again ($(cool c1) ms)" ||
	ok "the periodic catch-up skips it too"

# a cool_until key sent after the reset is applied
redis_cli SET breakerd:state:c1 "$(msg 2 "$(now_ms)" c1)" PX 60000 >/dev/null
until_s 8 cooling c1 && ok "a cool_until key sent after the reset is applied" || bad "c1 cool $(cool c1)"

host_stop b; rc=$?
[ $rc -eq 0 ] && ok "breakerd stops with exit 0" || bad "exit $rc"
echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
