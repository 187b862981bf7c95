#!/usr/bin/env bash
# fleet_link_logs.sh BREAKERD BCTL PEEK CASE - what breakerd's fleet link
# logs and publishes in the cases a new user met (daemon/fleet/), each
# against a throwaway redis-server on loopback (but "notes"):
#   notes      breakerd --breakers FILE (fleet sections), with --fleet or
#              without, prints no bctl note ("no breakerd --fleet link
#              ..."): logfmt only
#   unknown    a peer's message about a record this host has not made is
#              counted and logged at info (cause=unknown); a malformed one
#              still at warn
#   errors     Redis frozen (SIGSTOP): the link's error names the command
#              and the server ("PING on 127.0.0.1:PORT: no answer ...")
#   reconnect  the link's user deleted: failed reconnects are logged at
#              warn, rate-limited (not one line per attempt), and the
#              WRONGPASS hint names $BREAKERD_FLEET_URL
#   order      a peer's reset then its trip in the same ms both apply
#   recheck    a bad catch-up key first seen by the periodic re-read is
#              counted and logged once
#   reset_down a reset made while breakerd was stopped is published when
#              it starts again: peers close, our stale catch-up key goes,
#              a later joiner stays closed, no ping-pong; a peer's newer
#              trip is not undone by it
# Stops every process it starts and removes its segments.
set -u

BREAKERD=${1:?usage: fleet_link_logs.sh BREAKERD BCTL PEEK CASE}
BCTL=${2:?}
PEEK=${3:?}
CASE=${4:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fxlink2
case $CASE in
notes)
	printf '[breaker filebrk]\nfleet = on\n\n[breaker other]\nfleet = on\nfleet_probe = on\n' >"$TMP/b.conf"
	host_start n --breakers "$TMP/b.conf" --fleet redis://127.0.0.1:1/0
	until_s 5 logged n "breakers file applied" || bad "file not applied" "$(cat "$TMP/breakerd.n")"
	sleep 0.3
	host_stop n
	if grep -q "no breakerd --fleet link" "$TMP/breakerd.n"; then
		bad "breakerd printed bctl's fleet note" "$(grep -- 'fleet link' "$TMP/breakerd.n")"
	else
		ok "breakerd --breakers --fleet prints no bctl fleet note"
	fi
	other=$(grep -v '^ts=' "$TMP/breakerd.n")
	[ -z "$other" ] && ok "every line breakerd wrote is logfmt" ||
		bad "lines that are not logfmt" "$other"
	# without --fleet: nothing either (decided: docs/design/fleet.md "Fleet
	# link")
	host_start m --breakers "$TMP/b.conf"
	until_s 5 logged m "breakers file applied" || bad "file not applied (no --fleet)"
	host_stop m
	other=$(grep -v '^ts=' "$TMP/breakerd.m")
	[ -z "$other" ] && ok "without --fleet: logfmt only, no note" ||
		bad "without --fleet: lines that are not logfmt" "$other"
	;;
unknown)
	fleet_redis
	host_start a --fleet "$REDIS_URL"
	host_start b --fleet "$REDIS_URL"
	host_connected a
	host_connected b
	"$BCTL" --shm "${SHM[a]}" config onlya --fleet on >/dev/null
	"$BCTL" --shm "${SHM[a]}" trip onlya --for 60s >/dev/null
	until_s 5 logged b 'cause=unknown' || bad "b did not refuse onlya" "$(tail -5 "$TMP/breakerd.b")"
	line=$(grep 'cause=unknown' "$TMP/breakerd.b" | head -1)
	[[ $line == *"level=info"* ]] && ok "a message about a record not made here is logged at info" ||
		bad "cause=unknown not at info" "$line"
	# the status reaches the segment at most FLEET_REPORT_MS after the log line
	until_s 5 st_ge b dropped 1 && ok "and still counted (dropped=$(st b dropped))" ||
		bad "not counted: dropped=$(st b dropped)"
	redis_cli PUBLISH breakerd '{"v":1,"host":"x","seq":1,"kind":"nonsense"' >/dev/null
	until_s 5 logged b 'cause=malformed' || bad "b did not refuse the malformed message"
	line=$(grep 'cause=malformed' "$TMP/breakerd.b" | head -1)
	[[ $line == *"level=warn"* ]] && ok "a malformed message is still logged at warn" ||
		bad "cause=malformed not at warn" "$line"
	;;
errors)
	fleet_redis
	host_start a --fleet "$REDIS_URL"
	host_connected a
	kill -STOP "$REDIS_PID" # fleet_cleanup continues it
	until_s 15 logged a 'fleet=down' || bad "no fleet=down while Redis is frozen" "$(tail -5 "$TMP/breakerd.a")"
	sleep 2 # the publisher and the subscriber both see it
	kill -CONT "$REDIS_PID"
	n=0
	while read -r line; do
		n=$((n + 1))
		if [[ $line == *"on 127.0.0.1:$REDIS_PORT: "* ]] && [[ $line =~ err=\"(fleet: )?[A-Z]+ ]] &&
		   [[ $line != *"temporarily unavailable"* ]]; then
			ok "the error names the command and the server: ${line#*err=}"
		else
			bad "an error without its command and server" "$line"
		fi
	done < <(grep -E 'fleet=(down|reconnect)' "$TMP/breakerd.a" | grep -v 'connect 127.0.0.1' | head -4)
	[ $n -ge 1 ] || bad "no error line"
	grep -q "no answer within" "$TMP/breakerd.a" && ok "a timeout says how long it waited" ||
		bad "no 'no answer within' in the log" "$(grep -E 'fleet=' "$TMP/breakerd.a" | tail -4)"
	;;
reconnect)
	fleet_redis
	redis_cli ACL SETUSER fl on '>flpw' '~*' '&*' '+@all' >/dev/null
	export BREAKERD_FLEET_URL="redis://fl:flpw@127.0.0.1:$REDIS_PORT/0"
	host_start a
	host_connected a
	redis_cli ACL DELUSER fl >/dev/null
	redis_cli CLIENT KILL USER fl >/dev/null 2>&1
	until_s 5 st_is a state down || bad "a not down"
	sleep 5 # backoff 100 ms .. 5 s: several attempts per connection
	fails=$(grep 'WRONGPASS' "$TMP/breakerd.a")
	n=$(grep -c 'fleet=reconnect.*WRONGPASS' "$TMP/breakerd.a")
	[ -n "$fails" ] || bad "no WRONGPASS logged" "$(tail -5 "$TMP/breakerd.a")"
	if grep 'WRONGPASS' "$TMP/breakerd.a" | grep -q 'level=info'; then
		bad "a failed reconnect logged at info" "$(grep 'WRONGPASS' "$TMP/breakerd.a" | grep 'level=info' | head -2)"
	else
		ok "failed reconnects are logged at warn"
	fi
	[ "$n" -le 2 ] && ok "rate-limited: $n reconnect lines in 5 s (publisher, subscriber)" ||
		bad "$n reconnect lines in 5 s: one per attempt" "$(grep 'fleet=reconnect' "$TMP/breakerd.a" | tail -3)"
	grep 'WRONGPASS' "$TMP/breakerd.a" | grep -q 'BREAKERD_FLEET_URL' &&
		! grep 'WRONGPASS' "$TMP/breakerd.a" | grep -q 'fleet-url-file' &&
		ok "the WRONGPASS hint names \$BREAKERD_FLEET_URL only" ||
		bad "the hint does not name the URL's source alone" "$(grep WRONGPASS "$TMP/breakerd.a" | head -1)"
	redis_cli ACL SETUSER fl on '>flpw' '~*' '&*' '+@all' >/dev/null
	until_s 10 st_is a state connected && ok "connected again once the user is back" ||
		bad "not connected again" "$(tail -3 "$TMP/breakerd.a")"
	;;
reset_down)
	fleet_redis
	printf '[breaker filebrk]\nfleet = on\n' >"$TMP/b.conf"
	for h in a b c; do host_start $h --fleet "$REDIS_URL" --breakers "$TMP/b.conf"; done
	for h in a b c; do host_connected $h; done
	"$BCTL" --shm "${SHM[b]}" trip filebrk --for 90s >/dev/null
	for h in a c; do
		until_s 5 state_is $h filebrk open || bad "the trip on b did not open filebrk on $h"
	done
	host_stop b
	key=$(redis_cli GET breakerd:state:filebrk)
	[[ $key == *'"host":"b"'* ]] || bad "no catch-up key of b's" "$key"
	"$BCTL" --shm "${SHM[b]}" reset filebrk >/dev/null
	host_start b --fleet "$REDIS_URL" --breakers "$TMP/b.conf"
	host_connected b
	for h in a b c; do
		until_s 5 state_is $h filebrk closed &&
			ok "host $h: the reset b made while stopped holds here" ||
			bad "host $h: filebrk $(state $h filebrk) after b's reset while stopped" \
				"$(grep 'filebrk' "$TMP/breakerd.$h" | tail -3)"
	done
	key=$(redis_cli GET breakerd:state:filebrk)
	[[ $key != *'"host":"b"'* ]] && ok "b's stale catch-up key is gone" || bad "b's key stays" "$key"
	# a later joiner is not re-opened
	host_start d --fleet "$REDIS_URL" --breakers "$TMP/b.conf"
	host_connected d
	sleep 1
	state_is d filebrk closed && ok "a host joining later stays closed" ||
		bad "d: filebrk $(state d filebrk)"
	# no ping-pong: b publishes the reset once, then quiet
	sleep 1
	p1=$(st b published)
	sleep 2
	p2=$(st b published)
	[ "$p1" = "$p2" ] && ok "no ping-pong: b published $p1, then nothing" ||
		bad "b keeps publishing: $p1 -> $p2"
	# a peer's newer decision is not undone: b trips, stops, is reset
	# while stopped, then a resets and trips (the key becomes a's): b
	# applies a's newer trip
	"$BCTL" --shm "${SHM[b]}" trip filebrk --for 90s >/dev/null
	until_s 5 state_is a filebrk open || bad "b's second trip did not reach a"
	host_stop b
	"$BCTL" --shm "${SHM[b]}" reset filebrk >/dev/null
	sleep 0.2
	# (a trip of an open breaker is no event: a resets, then trips)
	"$BCTL" --shm "${SHM[a]}" reset filebrk >/dev/null
	"$BCTL" --shm "${SHM[a]}" trip filebrk --for 90s >/dev/null
	until_s 5 eval '[[ $(redis_cli GET breakerd:state:filebrk) == *\"host\":\"a\"* ]]' ||
		bad "a's trip did not take the key" "$(redis_cli GET breakerd:state:filebrk)"
	host_start b --fleet "$REDIS_URL" --breakers "$TMP/b.conf"
	host_connected b
	sleep 1
	for h in a b c d; do
		state_is $h filebrk open && ok "host $h: a peer's newer trip stands (open)" ||
			bad "host $h: filebrk $(state $h filebrk): b's reset undid a's newer trip"
	done
	;;
recheck)
	# a bad catch-up key written between subscribes is first seen by the
	# periodic re-read (FLEET_CATCHUP_MS): counted and logged once, then
	# retried quietly
	fleet_redis
	host_start b --fleet "$REDIS_URL"
	host_connected b
	redis_cli SET breakerd:state:junk 'not json' >/dev/null
	until_s 12 logged b 'cause=malformed' && ok "the re-read logs a bad key it is the first to see" ||
		bad "no cause=malformed logged" "$(tail -5 "$TMP/breakerd.b")"
	until_s 5 st_ge b dropped 1 && ok "and counts it (dropped=$(st b dropped))" ||
		bad "not counted: dropped=$(st b dropped)"
	d1=$(st b dropped)
	sleep 6 # one more periodic pass
	[ "$(st b dropped)" = "$d1" ] && ok "the next pass retries it quietly (dropped stays $d1)" ||
		bad "counted again: $d1 -> $(st b dropped)"
	;;
order)
	# a peer's reset and then its trip, sent in the same millisecond, both
	# apply: the staleness rule is for stored catch-up keys only (it took
	# the reset applied here as newer than the trip and dropped the trip)
	fleet_redis
	host_start b --fleet "$REDIS_URL"
	host_connected b
	"$BCTL" --shm "${SHM[b]}" config ord --fleet on >/dev/null
	now=$(date +%s%3N)
	msg() { printf '{"v":1,"host":"x","seq":%s,"sent_ms":%s,"kind":"%s","name":"ord"%s}' "$1" "$now" "$2" "$3"; }
	redis_cli PUBLISH breakerd "$(msg 1 open ',"remaining_ms":60000')" >/dev/null
	until_s 5 state_is b ord open || bad "x's first open did not apply"
	sleep 0.05
	redis_cli PUBLISH breakerd "$(msg 2 reset '')" >/dev/null
	until_s 5 state_is b ord closed || bad "x's reset did not apply"
	redis_cli PUBLISH breakerd "$(msg 3 open ',"remaining_ms":60000')" >/dev/null
	until_s 3 state_is b ord open && ok "x's reset then x's trip (same sent_ms): b is open" ||
		bad "b: ord $(state b ord): the trip after the reset was dropped"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
echo "# $CASE: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
