#!/usr/bin/env bash
# fleet_link.sh BREAKERD BCTL PEEK - breakerd's fleet link (daemon/fleet/)
# against a real redis-server on loopback: two hosts (segments
# /brk-fleet-a-$$ and /brk-fleet-b-$$, each with breakerd --fleet URL
# --host-id a|b) share the fleet breaker "pay"; "solo" is not fleet-wide.
#  1. a trip on A refuses on B, and B's event has origin remote:a;
#  2. a reset on A closes B;
#  3. a trip of the non-fleet breaker on A is not sent;
#  4. garbage, oversize, unknown-name, non-opted and far-future messages
#     PUBLISHed with redis-cli are counted by cause and not applied, and
#     breakerd keeps running;
#  5. redis-server killed: state down on both, B still refuses what it
#     trips itself; a trip on A during the outage reaches B once
#     redis-server is back (catch-up), both connected again.
# Stops every process it starts and removes its segments.
set -u

BREAKERD=${1:?usage: fleet_link.sh BREAKERD BCTL PEEK}
BCTL=${2:?}
PEEK=${3:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleet
fleet_redis

hosts_up a b
bctl_all config pay --fleet on
bctl_all config solo

# 1. trip on A: refused on B, origin remote:a
"$BCTL" --shm "${SHM[a]}" trip pay --for 30s >/dev/null
until_s 5 state_is b pay open && ok "a trip on A opens pay on B" ||
	bad "B open" "$(state b pay)" "$(tail -5 "$TMP/breakerd.b")"
"$PEEK" "${SHM[b]}" events | grep -q "pay trip a$" &&
	ok "B's trip event has origin remote:a" ||
	bad "B's event origin" "$("$PEEK" "${SHM[b]}" events)"
until_s 3 grep -q 'name=pay .*origin=remote:a' "$TMP/breakerd.b" &&
	ok "B's log line says origin=remote:a" || bad "B log origin" "$(grep pay "$TMP/breakerd.b")"
"$PEEK" "${SHM[a]}" events | grep -q "pay trip -$" &&
	ok "A's own trip has no origin" || bad "A's origin" "$("$PEEK" "${SHM[a]}" events)"
until_s 3 st_ge b applied 1 && ok "B counts the decision applied" || bad "B applied" "$("$PEEK" "${SHM[b]}" status)"
until_s 3 st_ge a published 1 && ok "A counts the decision published" || bad "A published"
[ "$(st a received)" = 0 ] && ok "A ignores its own echo (received 0)" || bad "A received $(st a received)"
[ "$(redis_cli EXISTS breakerd:state:pay)" = 1 ] && ok "the catch-up key is set" || bad "catch-up key"

# 2. reset on A closes B
"$BCTL" --shm "${SHM[a]}" reset pay >/dev/null
until_s 5 state_is b pay closed && ok "a reset on A closes pay on B" || bad "B closed" "$(state b pay)"
until_s 3 key_gone pay && ok "the reset deletes the catch-up key" ||
	bad "catch-up key after reset"

# 2b. a forced mode crosses, and a reset returns it to normal
"$BCTL" --shm "${SHM[a]}" force-open pay >/dev/null
until_s 5 mode_is b pay forced_open && ok "force-open on A forces pay open on B" ||
	bad "B mode" "$("$BCTL" --shm "${SHM[b]}" inspect pay | head -20)"
[ "$(redis_cli EXISTS breakerd:state:pay)" = 1 ] && ok "a forced mode keeps a catch-up key" || bad "forced key"
"$BCTL" --shm "${SHM[a]}" reset pay >/dev/null
until_s 5 mode_is b pay normal && ok "the reset on A returns B to normal" || bad "B mode $(mode b pay)"
until_s 5 state_is b pay closed || bad "B closed after the reset"

# 2c. a peer's period is capped at the record's max_open_ms here
"$BCTL" --shm "${SHM[b]}" config pay --max-open 2m >/dev/null
fleet_pub "{\"v\":1,\"host\":\"x\",\"seq\":9,\"sent_ms\":$(now_ms),\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":3600000}"
until_s 5 state_is b pay open && ok "a peer's open (1 h) opens B" || bad "B open for x"
left=$("$BCTL" --shm "${SHM[b]}" list | awk '$1 == "pay" { print $5 }')
[ "${left:-0}" -gt 0 ] && [ "${left:-0}" -le 120000 ] && ok "capped at B's max_open 2m (open_ms left $left)" ||
	bad "cap: open_ms left $left"
"$BCTL" --shm "${SHM[b]}" reset pay >/dev/null
"$BCTL" --shm "${SHM[a]}" reset pay >/dev/null
sleep 0.3
state_is b pay closed || bad "B closed after the cap test"

# 3. a non-fleet breaker is not sent
PUB0=$(st a published)
"$BCTL" --shm "${SHM[a]}" trip solo --for 30s >/dev/null
sleep 1
state_is b solo closed && ok "a trip of the non-fleet solo on A leaves B closed" || bad "solo on B $(state b solo)"
[ "$(st a published)" = "$PUB0" ] && ok "nothing published for solo" || bad "published $(st a published) was $PUB0"

# 4. refused messages: counted by cause, not applied, breakerd lives on
now=$(now_ms)
fleet_pub 'not json at all'
fleet_pub "{\"v\":1,\"host\":\"x\",\"seq\":1,\"sent_ms\":$now,\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":30000,\"pad\":\"$(head -c 2000 /dev/zero | tr '\0' x)\"}"
fleet_pub "{\"v\":1,\"host\":\"x\",\"seq\":2,\"sent_ms\":$now,\"kind\":\"open\",\"name\":\"nosuch\",\"remaining_ms\":30000}"
fleet_pub "{\"v\":1,\"host\":\"x\",\"seq\":3,\"sent_ms\":$now,\"kind\":\"open\",\"name\":\"solo\",\"remaining_ms\":30000}"
fleet_pub "{\"v\":1,\"host\":\"x\",\"seq\":4,\"sent_ms\":$((now + 3600000)),\"kind\":\"open\",\"name\":\"pay\",\"remaining_ms\":30000}"
"$BCTL" --shm "${SHM[a]}" reset solo >/dev/null
for c in malformed oversize unknown not_fleet future; do
	until_s 3 st_ge b drop_$c 1 && ok "B counts a $c message" ||
		bad "B drop_$c" "$("$PEEK" "${SHM[b]}" status)"
done
until_s 3 st_ge b dropped 5 && ok "B's dropped sums the causes" || bad "dropped $(st b dropped)"
state_is b pay closed && ok "no refused message opened pay on B" || bad "pay on B $(state b pay)"
state_is b solo closed && ok "no refused message opened solo on B" || bad "solo on B $(state b solo)"
grep -q 'fleet=refused cause=not_fleet host=x name=solo' "$TMP/breakerd.b" &&
	ok "B logs fleet=refused cause=not_fleet host=x name=solo" || bad "refused log" "$(grep refused "$TMP/breakerd.b")"
grep -q 'fleet=refused cause=future host=x name=pay' "$TMP/breakerd.b" &&
	ok "B's future refusal names the sender: host=x name=pay" || bad "future log" "$(grep cause=future "$TMP/breakerd.b")"
# a flood of one cause logs one line a second, with the count left out
for i in $(seq 1 20); do fleet_pub "junk $i"; done
until_s 3 st_ge b drop_malformed 21
n=$(grep -c 'cause=malformed' "$TMP/breakerd.b")
[ "$n" -le 2 ] && ok "a flood of refusals is rate-limited in the log ($n lines)" || bad "refusal lines $n"
host_alive b && ok "breakerd B keeps running" || bad "breakerd B exited"

# 5. redis-server killed: down; local protection; catch-up after restart
redis_kill
for h in a b; do
	until_s 5 st_is $h state down && ok "host $h: link down after the kill" ||
		bad "host $h down" "$(st $h state)"
done
"$BCTL" --shm "${SHM[b]}" config local2 >/dev/null
"$BCTL" --shm "${SHM[b]}" trip local2 --for 30s >/dev/null
state_is b local2 open && ok "B still refuses what it trips itself, link down" || bad "B local trip"
"$BCTL" --shm "${SHM[a]}" trip pay --for 30s >/dev/null
sleep 0.5
state_is b pay closed && ok "the outage trip on A has not reached B yet" || bad "B pay $(state b pay)"
grep -q 'fleet=down' "$TMP/breakerd.a" && ok "A logs fleet=down" || bad "A fleet=down log"
redis_restart || bad "redis restart"
for h in a b; do
	until_s 10 st_is $h state connected && ok "host $h: connected again" ||
		bad "host $h reconnect" "$(st $h state)" "$(grep fleet "$TMP/breakerd.$h" | tail -3)"
	# one outage is one link reconnect (DOWN -> CONNECTED), not one per
	# connection (publisher + subscriber)
	st_is $h reconnects 1 && ok "host $h counts one reconnect for one outage" ||
		bad "reconnects $h: $(st $h reconnects), want 1"
done
until_s 5 state_is b pay open && ok "the trip made on A during the outage reaches B (catch-up)" ||
	bad "catch-up" "$(state b pay)" "$(tail -5 "$TMP/breakerd.b")"
for h in a b; do
	host_alive $h && ok "breakerd $h survived the outage" || bad "breakerd $h exited"
done

# stop: the link reports off
for h in a b; do
	host_stop $h; rc=$?
	[ $rc -eq 0 ] && ok "breakerd $h stops with exit 0" || bad "$h exit $rc"
	st_is $h state off && ok "$h's link reads off after the stop" || bad "$h state $(st $h state)"
done

echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
