#!/usr/bin/env bash
# fleet_probe.sh BREAKERD BCTL WORKER - one probe for the fleet
# (fleet_probe = 1; daemon/fleet/fleet_probe.c) against a real redis-server:
# three hosts (segments /brk-fleetprobe-{a,b,c}-$$, each with
# breakerd --fleet URL --host-id a|b|c and a worker process calling
# brk_acquire() every 2 ms) open one fleet_probe breaker at once.
#  1. at the cooling end exactly one host admits a probe; each loser's
#     events show the hold as a trip with origin remote:<winner>;
#  2. the winner's failed probe re-opens every host (the link's "open");
#  3. at the next cooling end again one probe; it succeeds and every
#     host is closed (the link's "close");
#  4. with redis-server killed each host probes on its own.
# Stops every process it starts and removes its segments.
set -u

BREAKERD=${1:?usage: fleet_probe.sh BREAKERD BCTL WORKER}
BCTL=${2:?}
WORKER=${3:?}
HOSTS="a b c"
NAME=api
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetprobe
VERDICT=$TMP/verdict
fleet_redis

events() { "$WORKER" "${SHM[$1]}" events; } # SEQ NAME REASON VALUE ORIGIN
nevents() { events $1 | wc -l; }
# events of host $1 after line $2 with reason $3 from peer $4 and a value
# of at least $5 (ms)
remote_events() { events $1 | tail -n +$(($2 + 1)) |
	awk -v r="$3" -v o="$4" -v m="${5:-0}" \
		'$3 == r && $5 == o && $4 >= m { n++ } END { print n + 0 }'; }
remote_trips() { remote_events $1 $2 trip $3; }
status() { "$WORKER" "${SHM[$1]}" status; }

echo fail >"$VERDICT"
for h in $HOSTS; do host_start $h; done
for h in $HOSTS; do
	host_probe_connected $h
	worker_start $h "$NAME" "$VERDICT" 60
done
sleep 0.5 # every link subscribed

# 1. open everywhere at once (1.5 s); exactly one host probes.
for h in $HOSTS; do "$BCTL" --shm "${SHM[$h]}" trip "$NAME" --for 1500ms >/dev/null; done
sleep 0.5
declare -A MARK
for h in $HOSTS; do MARK[$h]=$(nevents $h); done
until_s 10 total_at_least 1
sleep 1 # a loser's own probe would come by the end of its hold (1.6 s)
[ "$(total_probes)" -eq 1 ] && ok "period 1: exactly one host admitted a probe" ||
	bad "period 1: one probe" "probes: a=$(probes a) b=$(probes b) c=$(probes c)"
W1=
for h in $HOSTS; do [ "$(probes $h)" -eq 1 ] && W1=$h; done
for h in $HOSTS; do
	[ "$h" = "$W1" ] && continue
	[ "$(remote_trips $h "${MARK[$h]}" "$W1")" -ge 1 ] &&
		ok "period 1: loser $h was held open as remote:$W1" ||
		bad "period 1: loser $h trip origin remote:$W1" \
			"$(events $h | tail -n +$((${MARK[$h]} + 1)))"
	logged $h "fleet=lost.*holder=$W1" && ok "host $h logged fleet=lost holder=$W1" ||
		bad "host $h fleet=lost" "$(grep fleet "$TMP/breakerd.$h")"
done
logged "${W1:-a}" "fleet=won" && ok "winner $W1 logged fleet=won" || bad "winner fleet=won"

# 2. the winner's probe failed: every host is open again, the losers by
#    the winner's "open" (its doubled cooling period, 3 s: longer than
#    their hold of at most 200 + 1000 + 400 ms: the verdict wait is
#    min(probe_timeout 1000, max(1500, 1000))).
until_s 5 all_state "$NAME" open && ok "period 1: the failed probe re-opened every host" ||
	bad "re-open everywhere" "a=$(state a "$NAME") b=$(state b "$NAME") c=$(state c "$NAME")"
for h in $HOSTS; do
	[ "$h" = "$W1" ] && continue
	[ "$(remote_trips $h "${MARK[$h]}" "$W1" 2000)" -ge 1 ] &&
		ok "period 1: loser $h re-opened by $W1's open" ||
		bad "loser $h re-opened by the link's open" "$(events $h | tail -n +$((${MARK[$h]} + 1)))"
done
case "$(status "${W1:-a}")" in
"probe_won "[1-9]*) ok "winner $W1: probe_won counted in the link's status" ;;
*) bad "winner probe_won" "$(status "${W1:-a}")" ;;
esac

# 3. next cooling end (about 3 s after the probe): one probe, it succeeds,
#    every host closes.
echo ok >"$VERDICT"
for h in $HOSTS; do MARK[$h]=$(nevents $h); done
until_s 10 total_at_least 2
sleep 1
[ "$(total_probes)" -eq 2 ] && ok "period 2: exactly one host admitted a probe" ||
	bad "period 2: one probe" "probes: a=$(probes a) b=$(probes b) c=$(probes c)"
until_s 5 all_state "$NAME" closed && ok "period 2: the successful probe closed every host" ||
	bad "closed everywhere" "a=$(state a "$NAME") b=$(state b "$NAME") c=$(state c "$NAME")"
W2=
for h in $HOSTS; do [ "$(probes $h)" -gt "$( [ "$h" = "$W1" ] && echo 1 || echo 0)" ] && W2=$h; done
for h in $HOSTS; do
	[ "$h" = "$W2" ] && continue
	[ "$(remote_events $h "${MARK[$h]}" reset "$W2")" -ge 1 ] &&
		ok "period 2: loser $h closed by $W2's close" ||
		bad "loser $h closed by the link's close" "$(events $h | tail -n +$((${MARK[$h]} + 1)))"
	case "$(status $h)" in
	*"probe_lost "[1-9]*) ok "loser $h: probe_lost counted" ;;
	*) bad "loser $h probe_lost" "$(status $h)" ;;
	esac
done

# 4. redis-server killed: no election, each host probes on its own.
redis_kill
declare -A BEFORE
for h in $HOSTS; do BEFORE[$h]=$(probes $h); done
for h in $HOSTS; do "$BCTL" --shm "${SHM[$h]}" trip "$NAME" --for 1500ms >/dev/null; done
until_s 10 total_at_least $(($(total_probes) + 3))
sleep 0.5
for h in $HOSTS; do
	[ "$(probes $h)" -eq $((${BEFORE[$h]} + 1)) ] &&
		ok "redis down: host $h probed on its own" ||
		bad "redis down: host $h probe" "probes before ${BEFORE[$h]} now $(probes $h)"
done
for h in $HOSTS; do
	host_alive $h && ok "breakerd $h still running" || bad "breakerd $h exited"
done

echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
