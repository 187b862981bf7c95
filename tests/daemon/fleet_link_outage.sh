#!/usr/bin/env bash
# fleet_link_outage.sh BREAKERD BCTL PEEK - the fleet link across an
# outage and after it (daemon/fleet/fleet_pub.c, fleet_sub.c, fleet_apply.c),
# against a real redis-server on loopback whose ACL user "fl" the two
# breakerd (hosts a, b; $BREAKERD_FLEET_URL) log in as: the link is cut by
# ACL SETUSER fl off + CLIENT KILL USER fl, and back by ACL SETUSER fl on.
#  1. a reset made on every host while the link is down stays: the stale
#     catch-up key does not reopen, the publisher sends the reset (DEL);
#  2. a catch-up key older than the record's last transition here, the
#     record closed, is skipped; one newer than it is applied;
#     the same for a pace_cut key older than the pace's last cut;
#  3. a record made fleet-wide after a peer's decision picks the decision
#     up from the catch-up key within FLEET_CATCHUP_MS (no reconnect);
#  4. a message with our host id that we did not send is logged as
#     fleet=duplicate_host_id (two breakerd given the same --host-id).
# Stops every process it starts and removes its segments.
set -u

BREAKERD=${1:?usage: fleet_link_outage.sh BREAKERD BCTL PEEK}
BCTL=${2:?}
PEEK=${3:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetout
fleet_redis
redis_cli ACL SETUSER fl on '>flpw' '~*' '&*' '+@all' >/dev/null

cut() {
	redis_cli ACL SETUSER fl off >/dev/null
	redis_cli CLIENT KILL USER fl >/dev/null
}

BREAKERD_FLEET_URL="redis://fl:flpw@127.0.0.1:$REDIS_PORT/0" hosts_up a b
for n in pay pay2 pay3; do bctl_all config $n --fleet on; done

# 1. trip on A, cut, reset everywhere, back: stays closed
"$BCTL" --shm "${SHM[a]}" trip pay --for 90s >/dev/null
until_s 5 state_is b pay open && ok "a trip on A opens pay on B" || bad "B open $(state b pay)"
[ "$(redis_cli EXISTS breakerd:state:pay)" = 1 ] || bad "no catch-up key for pay"
cut
for h in a b; do
	until_s 5 st_is $h state down && ok "host $h: down after the cut" || bad "host $h down $(st $h state)"
done
for h in a b; do "$BCTL" --shm "${SHM[$h]}" reset pay >/dev/null; done
redis_cli ACL SETUSER fl on >/dev/null
for h in a b; do
	until_s 10 st_is $h state connected && ok "host $h: connected again" || bad "host $h back $(st $h state)"
done
until_s 3 key_gone pay && ok "A's reset made while down is published after the outage (key deleted)" ||
	bad "pay's catch-up key is still there" "$(redis_cli GET breakerd:state:pay)"
sleep 1
for h in a b; do
	state_is $h pay closed && ok "host $h: the reset made while the link was down stays (closed)" ||
		bad "host $h: pay $(state $h pay) after the outage" "$(grep 'name=pay' "$TMP/breakerd.$h" | tail -4)"
done

# 2. stale and fresh catch-up keys (from a host x that is not running)
# pay2 on B: tripped and reset now; x's open of pay2 was sent 2 s before
"$BCTL" --shm "${SHM[b]}" trip pay2 --for 90s >/dev/null
"$BCTL" --shm "${SHM[b]}" reset pay2 >/dev/null
until_s 3 key_gone pay2 || bad "B's reset of pay2 left its key"
now=$(now_ms)
redis_cli SET breakerd:state:pay2 "{\"v\":1,\"host\":\"x\",\"seq\":1,\"sent_ms\":$((now - 2000)),\"kind\":\"open\",\"name\":\"pay2\",\"remaining_ms\":90000}" PX 90000 >/dev/null
redis_cli SET breakerd:state:pay3 "{\"v\":1,\"host\":\"x\",\"seq\":2,\"sent_ms\":$now,\"kind\":\"open\",\"name\":\"pay3\",\"remaining_ms\":90000}" PX 90000 >/dev/null
redis_cli CLIENT KILL TYPE pubsub >/dev/null # B's subscriber catches up again
until_s 10 state_is b pay3 open && ok "a catch-up key newer than the record's last change is applied" ||
	bad "pay3 on B $(state b pay3)"
sleep 1 # the same SCAN's other key, in either order
state_is b pay2 closed && ok "a catch-up key older than the record's reset here is skipped" ||
	bad "pay2 on B $(state b pay2)" "$(grep 'name=pay2' "$TMP/breakerd.b" | tail -3)"
"$BCTL" --shm "${SHM[b]}" reset pay3 >/dev/null

# 2b. a pace_cut key older than the pace's last cut here is skipped
printf '[pace pp]\nceiling = 10\nfleet = on\n' >"$TMP/pp.conf"
"$BCTL" --shm "${SHM[b]}" apply "$TMP/pp.conf" >/dev/null
cuts() { "$BCTL" --shm "${SHM[b]}" inspect pp | awk '$1 == "cuts:" { print $2; exit }'; }
cuts_is() { [ "$(cuts)" = "$1" ]; }
now=$(now_ms)
redis_cli PUBLISH breakerd "{\"v\":1,\"host\":\"x\",\"seq\":3,\"sent_ms\":$now,\"kind\":\"pace_cut\",\"name\":\"pp\",\"rate_milli\":5000}" >/dev/null
until_s 3 cuts_is 1 && ok "a peer's pace_cut cuts pp on B" || bad "pp cuts $(cuts)"
redis_cli SET breakerd:state:pp "{\"v\":1,\"host\":\"x\",\"seq\":1,\"sent_ms\":$((now - 3000)),\"kind\":\"pace_cut\",\"name\":\"pp\",\"rate_milli\":2000}" PX 60000 >/dev/null
redis_cli CLIENT KILL TYPE pubsub >/dev/null
sleep 6.5 # the reconnect's catch-up and a periodic one
cuts_is 1 && ok "a pace_cut key older than the pace's last cut here is skipped" ||
	bad "pp cuts $(cuts) after a stale pace_cut key"
redis_cli DEL breakerd:state:pp >/dev/null

# 3. a record made fleet-wide here after the peer's decision
"$BCTL" --shm "${SHM[a]}" config late --fleet on >/dev/null
"$BCTL" --shm "${SHM[a]}" trip late --for 90s >/dev/null
until_s 3 eval '[ "$(redis_cli EXISTS breakerd:state:late)" = 1 ]' || bad "no key for late"
"$BCTL" --shm "${SHM[b]}" config late --fleet on >/dev/null
until_s 9 state_is b late open && ok "a record made fleet-wide after a peer's trip opens within the catch-up period" ||
	bad "late on B $(state b late)"
R0=$(st b reconnects)
"$BCTL" --shm "${SHM[b]}" reset late >/dev/null
sleep 6
state_is b late closed && ok "the periodic catch-up does not undo a newer local reset" || bad "late on B $(state b late)"
[ "$(st b reconnects)" = "$R0" ] && ok "no reconnect was needed" || bad "reconnects $R0 -> $(st b reconnects)"

# 4. a message with our host id we did not send
redis_cli PUBLISH breakerd "{\"v\":1,\"host\":\"a\",\"seq\":777777,\"sent_ms\":$(now_ms),\"kind\":\"reset\",\"name\":\"pay\"}" >/dev/null
until_s 3 grep -q 'fleet=duplicate_host_id' "$TMP/breakerd.a" &&
	ok "A logs fleet=duplicate_host_id for a message with its id it did not send" ||
	bad "no duplicate_host_id line" "$(tail -3 "$TMP/breakerd.a")"
grep -q 'fleet=duplicate_host_id' "$TMP/breakerd.b" && bad "B logs a duplicate id" ||
	ok "B does not (its own echoes are recognised)"
grep -c 'fleet=duplicate_host_id' "$TMP/breakerd.a" | grep -qx 1 &&
	ok "A's own echoes are not taken for a duplicate" || bad "duplicate lines $(grep -c duplicate_host_id "$TMP/breakerd.a")"

for h in a b; do
	host_stop $h; rc=$?
	[ $rc -eq 0 ] && ok "breakerd $h stops with exit 0" || bad "$h exit $rc"
done
echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
