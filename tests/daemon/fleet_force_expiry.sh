#!/usr/bin/env bash
# fleet_force_expiry.sh BREAKERD BCTL PEEK PY SIGN - a forced mode from
# the fleet expires (issue 26), with a real redis-server on loopback:
#  1. keyless host: a forged v1 "disabled" from a host id never seen
#     (what anyone who can PUBLISH could send) ends after the record's
#     max_open_ms (2 s) - before, it held for good; its catch-up key too;
#  2. keyed hosts A and B (max_open 2 s): A forces pay disabled; B holds
#     it while A re-announces (checked after 5 s, > 2 x max_open), A's own
#     local force stays; A's breakerd stopped: B is back to normal within
#     max_open_ms (+ slack), A's segment still says disabled.
set -u
BREAKERD=${1:?usage: fleet_force_expiry.sh BREAKERD BCTL PEEK PY SIGN}
BCTL=${2:?}
PEEK=${3:?}
PY=${4:?}
SIGN=${5:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetforce
fleet_redis
KEY=$TMP/key
(umask 077; echo 'fleet-key-one-0123456789abcdef' >"$KEY")

# 1. keyless: a forged v1 disabled expires
host_start u
host_connected u
"$BCTL" --shm "${SHM[u]}" config pay --fleet on --open 1s --max-open 2s >/dev/null
now=$(now_ms)
MSG="{\"v\":1,\"host\":\"evil\",\"seq\":1,\"sent_ms\":$now,\"kind\":\"forced\",\"name\":\"pay\",\"mode\":\"disabled\"}"
fleet_pub "$MSG"
until_s 3 mode_is u pay disabled && ok "keyless: a forged v1 'disabled' applies (no key: as before)" ||
	bad "not applied: $(mode u pay)" "$(tail -3 "$TMP/breakerd.u")"
until_s 5 mode_is u pay normal && ok "... and expires after max_open_ms (2 s)" ||
	bad "the forged force still holds: $(mode u pay)" "$(tail -3 "$TMP/breakerd.u")"
logged u 'fleet=force_expired host=evil name=pay' && ok "the expiry is logged" ||
	bad "no force_expired line" "$(tail -3 "$TMP/breakerd.u")"
# a forged catch-up key with no expiry, read at a restart
redis_cli SET breakerd:state:pay "$MSG" >/dev/null
host_stop u
host_start u
host_connected u
until_s 3 mode_is u pay disabled
until_s 5 mode_is u pay normal && ok "a forged catch-up key's force also ends after max_open_ms" ||
	bad "the catch-up key's force holds: $(mode u pay)"
redis_cli DEL breakerd:state:pay >/dev/null
host_stop u

# 2. keyed: the origin re-announces while it holds the force
for h in a b; do
	host_start $h --fleet "$REDIS_URL" --fleet-key-file "$KEY"
	host_connected $h
	"$BCTL" --shm "${SHM[$h]}" config pay --fleet on --open 1s --max-open 2s >/dev/null
done
"$BCTL" --shm "${SHM[a]}" disable pay >/dev/null
until_s 3 mode_is b pay disabled && ok "A's forced 'disabled' reaches B" ||
	bad "B: $(mode b pay)" "$(tail -3 "$TMP/breakerd.b")"
ttl=$(redis_cli PTTL breakerd:state:pay)
[ "${ttl:-0}" -gt 0 ] && [ "${ttl:-0}" -le 2000 ] && ok "its catch-up key expires (PTTL $ttl ms <= max_open)" ||
	bad "catch-up key PTTL $ttl"
sleep 5
mode_is b pay disabled && ok "B still disabled after 5 s: A re-announces (every max_open/3)" ||
	bad "B lost the force while A holds it: $(mode b pay)"
host_stop a
until_s 5 mode_is b pay normal && ok "A gone: B back to normal within max_open_ms" ||
	bad "B still $(mode b pay) after A stopped"
mode_is a pay disabled && ok "A's own (local) force stays until reset" || bad "A: $(mode a pay)"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
