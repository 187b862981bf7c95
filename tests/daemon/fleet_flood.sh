#!/usr/bin/env bash
# fleet_flood.sh BREAKERD BCTL PEEK PY SIGN - a flood of valid messages
# from one peer is bounded (issue 26), real redis-server on loopback:
# 5000 open/reset of pay from "ops" in one pipeline reach B (keyless, v1:
# the bound does not depend on the key, and the same run on a breakerd
# without the bound shows the history overwritten);
# at most the burst plus the rate (FLEET_PEER_RATE 100/s, burst 200) are
# applied, the rest counted under drop cause flood; B's own event from
# before the flood is still in its ring (no events lost); the refusal log
# lines stay rate-limited (a handful, with a suppressed count).
set -u
BREAKERD=${1:?usage: fleet_flood.sh BREAKERD BCTL PEEK PY SIGN}
BCTL=${2:?}
PEEK=${3:?}
PY=${4:?}
SIGN=${5:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetflood
fleet_redis
KEY=-
N=5000

host_start b
host_connected b
"$BCTL" --shm "${SHM[b]}" config pay --fleet on >/dev/null
"$BCTL" --shm "${SHM[b]}" config mine >/dev/null
"$BCTL" --shm "${SHM[b]}" trip mine --for 1h >/dev/null
"$PEEK" "${SHM[b]}" events | grep -q "mine trip -$" || bad "no own event before the flood"
t0=$(date +%s%N)
sent=$("$PY" "$SIGN" flood "$KEY" "$REDIS_PORT" ops pay $N)
[ "$sent" = $N ] && ok "$N messages published" || bad "flood sent '$sent'"
until_s 20 st_ge b received $N || bad "B received $(st b received) of $N"
secs=$(( ($(date +%s%N) - t0) / 1000000000 + 1 ))
applied=$(( $(st b applied) + $(st b ignored) ))
limit=$(( 200 + 100 * secs ))
[ "$applied" -le "$limit" ] && ok "applied+ignored $applied <= burst 200 + 100/s x ${secs} s" ||
	bad "flood applied $applied (limit $limit)"
st_ge b drop_flood $((N - limit)) && ok "the rest counted as drop cause flood ($(st b drop_flood))" ||
	bad "drop_flood $(st b drop_flood)"
"$PEEK" "${SHM[b]}" events | grep -q "mine trip -$" &&
	ok "B's own event from before the flood is still in its ring" ||
	bad "the flood overwrote B's own history"
grep -q 'events_lost\|events lost' "$TMP/breakerd.b" && bad "events lost" "$(grep -i lost "$TMP/breakerd.b")" ||
	ok "no events lost"
# one line per decision applied (its transition), a few for the refusals
lines=$(wc -l <"$TMP/breakerd.b")
refl=$(grep -c 'fleet=refused' "$TMP/breakerd.b")
[ "$lines" -lt $((applied + 30)) ] && [ "$refl" -le 5 ] &&
	ok "the log stays short ($lines lines, $refl refusal lines, for $N messages)" ||
	bad "$lines log lines, $refl refusal lines ($applied applied)"
# the line after the rate-limit second says how many were left out
sleep 1.1
"$PY" "$SIGN" flood "$KEY" "$REDIS_PORT" ops pay 200 >/dev/null
until_s 5 st_ge b received $((N + 200))
until_s 3 grep -q 'cause=flood .*suppressed=' "$TMP/breakerd.b" && ok "refusal lines carry a suppressed count" ||
	bad "no suppressed count" "$(grep cause=flood "$TMP/breakerd.b" | head -3)"
"$BCTL" --shm "${SHM[b]}" metrics | grep -q 'breakerd_fleet_dropped_total{cause="flood"} [1-9]' &&
	ok "/metrics family breakerd_fleet_dropped_total has cause flood" || bad "metrics flood"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
