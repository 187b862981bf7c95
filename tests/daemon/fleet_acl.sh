#!/usr/bin/env bash
# fleet_acl.sh BREAKERD BCTL WORKER - the fleet link works under the
# least-privilege Redis ACL docs/guide/fleet.md gives (read from the
# guide's "ACL SETUSER" line, as written): everything the link writes is under one prefix <channel>:
# (catch-up keys <channel>:state:*, probe keys <channel>:probe:*), and the
# user may run only the commands daemon/fleet/*.c send.
# Two hosts (segments /brk-fleetacl-{a,b}-$$, breakerd --fleet-url-file
# with user breakerd and its password, --fleet-channel acl1) with a
# fleet_probe breaker and a worker each go through a trip, an election
# (one host wins, one loses) and a reset; then nothing was refused: no
# NOPERM in breakerd's logs, an empty ACL LOG, probe_won + probe_lost > 0,
# and the reset crossed.
set -u

BREAKERD=${1:?usage: fleet_acl.sh BREAKERD BCTL WORKER}
BCTL=${2:?}
WORKER=${3:?}
HOSTS="a b"
NAME=api
CH=acl1
PASS=fleet-acl-pw-$$
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetacl
VERDICT=$TMP/verdict

# The guide's ACL, word for word (with <channel> = acl1 and PASS the
# password), as a redis.conf line (the same rules as ACL SETUSER).
GUIDE=$(dirname "${BASH_SOURCE[0]}")/../../docs/guide/fleet.md
ACL=$(sed -n 's/^ *ACL SETUSER \(breakerd on >PASS .*\)$/user \1/p' "$GUIDE" | head -1)
if [ -z "$ACL" ]; then
	echo "FAIL: no 'ACL SETUSER breakerd on >PASS ...' line in $GUIDE"
	echo "0 passed, 1 failed"
	exit 1
fi
ACL=${ACL//>PASS/>$PASS}
ACL=${ACL//<channel>/$CH}
echo "ACL from $GUIDE: ${ACL//$PASS/PASS}"

fleet_redis "$ACL"

elections() { "$WORKER" "${SHM[$1]}" status | awk '{ print $2 + $4 }'; }

echo "redis://breakerd:$PASS@127.0.0.1:$REDIS_PORT/0" >"$TMP/url"
chmod 0600 "$TMP/url"
# the ACL is in force: the user may not touch a key outside acl1:*
case "$(redis_cli --user breakerd --pass "$PASS" --no-auth-warning SET other:x 1 2>&1)" in
*NOPERM*) ok "the ACL refuses a key outside $CH:*" ;;
*) bad "the ACL is not in force" ;;
esac
redis_cli ACL LOG RESET >/dev/null # that refusal was ours

echo fail >"$VERDICT"
for h in $HOSTS; do
	host_start $h --fleet-url-file "$TMP/url" --fleet-channel "$CH"
done
for h in $HOSTS; do
	host_probe_connected $h "the fleet probe thread connected as user breakerd"
	worker_start $h "$NAME" "$VERDICT" 60
done
for h in $HOSTS; do
	until_s 10 logged $h 'fleet=connected' || bad "host $h: link connected"
done
sleep 0.5 # both links subscribed

# a trip on a reaches b (PUBLISH, SET acl1:state:api)
"$BCTL" --shm "${SHM[a]}" trip "$NAME" --for 1500ms >/dev/null
until_s 5 all_state "$NAME" open && ok "the trip on a opened b" ||
	bad "trip crossed" "a=$(state a "$NAME") b=$(state b "$NAME")"
# the election at the cooling end: one host probes (SET NX, GET acl1:probe:api)
until_s 10 total_at_least 1 && ok "a host admitted the probe" || bad "no probe"
sleep 1
[ "$(total_probes)" -eq 1 ] && ok "exactly one host probed" ||
	bad "one probe" "probes: a=$(probes a) b=$(probes b)"
for h in $HOSTS; do
	[ "$(elections $h)" -gt 0 ] && ok "host $h: probe_won + probe_lost > 0" ||
		bad "host $h: no election counted" "$("$WORKER" "${SHM[$h]}" status)"
done
# a reset on a closes b (PUBLISH, DEL acl1:state:api)
until_s 5 all_state "$NAME" open
"$BCTL" --shm "${SHM[a]}" reset "$NAME" >/dev/null
until_s 5 all_state "$NAME" closed && ok "the reset on a closed b" ||
	bad "reset crossed" "a=$(state a "$NAME") b=$(state b "$NAME")"

for h in $HOSTS; do
	if grep -qi 'noperm\|no permissions' "$TMP/breakerd.$h"; then
		bad "host $h: Redis refused a command" "$(grep -i noperm "$TMP/breakerd.$h")"
	else
		ok "host $h: no NOPERM in breakerd's log"
	fi
	host_alive $h && ok "breakerd $h still running" || bad "breakerd $h exited"
done
acl_log=$(redis_cli ACL LOG)
[ -z "$acl_log" ] && ok "ACL LOG is empty: nothing was refused" || bad "ACL LOG" "$acl_log"

echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
