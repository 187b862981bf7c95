#!/usr/bin/env bash
# fleet_probe_bound.sh BREAKERD BCTL WORKER - a fleet probe loser's hold is
# bounded by the verdict wait when the winner never probes
# (daemon/fleet/fleet_probe.h fleet_probe_verdict_wait_ms()): host a wins the
# election but has no workers (its breaker exists, nobody calls it), host
# b has a worker, a cooling period of 300 ms and the default-like
# probe_timeout_ms of 30 s. b loses to a and is held at most
#   remaining (<= 200 ms) + min(30000, max(300, 1000)) + 2 x 200 ms
# = 1600 ms, not remaining + probe_timeout + 400 (30.6 s); then the key is
# gone, b elects again, wins and probes, within a few seconds.
# Segments /brk-fleetbound-{a,b}-$$; stops all it starts.
set -u

BREAKERD=${1:?usage: fleet_probe_bound.sh BREAKERD BCTL WORKER}
BCTL=${2:?}
WORKER=${3:?}
HOSTS="a b"
NAME=api
PT=30000     # probe_timeout_ms of both hosts' breaker
COOL=300     # b's cooling period (bctl trip --for)
BOUND=1600   # LEAD + min(PT, max(COOL, 1000)) + 2 x LEAD
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_init fleetbound
VERDICT=$TMP/verdict
fleet_redis

echo ok >"$VERDICT"
for h in $HOSTS; do host_start $h; done
for h in $HOSTS; do
	until_s 10 logged $h 'msg="fleet probe" fleet=connected' &&
		until_s 10 logged $h 'fleet=connected' ||
		bad "host $h: link and probe connected" "$(tail -5 "$TMP/breakerd.$h")"
done
sleep 0.5 # both links subscribed

# a: the breaker exists (a worker made it and left); no calls ever.
"$WORKER" "${SHM[a]}" "$NAME" "$VERDICT" 0 $PT >/dev/null ||
	bad "host a: breaker made"
# a wins the election alone (b has no such breaker yet: the link drops it)
"$BCTL" --shm "${SHM[a]}" trip "$NAME" --for 1500ms >/dev/null
until_s 5 logged a 'fleet=won' && ok "host a won the election (no workers: it never probes)" ||
	bad "host a fleet=won" "$(grep fleet "$TMP/breakerd.a")"

# b: a worker, then a short cooling period that ends while a holds the key
worker_start b "$NAME" "$VERDICT" 60 $PT
t0=$(now_ms)
"$BCTL" --shm "${SHM[b]}" trip "$NAME" --for ${COOL}ms >/dev/null
until_s 3 logged b 'fleet=lost.*holder=a' && ok "host b lost the election to a" ||
	bad "host b fleet=lost holder=a" "$(grep fleet "$TMP/breakerd.b")"
# every hold b took is bounded by the rule
holds=$(grep 'fleet=lost' "$TMP/breakerd.b" | sed -n 's/.*hold_ms=\([0-9]*\).*/\1/p')
for h in $holds; do
	[ "$h" -le $BOUND ] && ok "host b held ${h} ms <= $BOUND ms (verdict wait, not probe_timeout)" ||
		bad "host b held $h ms > $BOUND ms"
done
[ -n "$holds" ] || bad "host b logged no hold_ms"
# after the hold b elects again (a's key is gone: a never renewed it) and probes
has_probe() { [ "$(probes b)" -ge 1 ]; }
until_s 8 has_probe
t1=$(now_ms)
if [ "$(probes b)" -ge 1 ]; then
	# two holds at most (b's period, then possibly one more after a
	# renewal) plus scheduling: well below probe_timeout_ms
	[ $((t1 - t0)) -le $((COOL + 2 * BOUND + 1500)) ] &&
		ok "host b probed $((t1 - t0)) ms after its trip" ||
		bad "host b probed only $((t1 - t0)) ms after its trip"
	logged b 'fleet=won' && ok "host b won the next election" ||
		bad "host b fleet=won" "$(grep fleet "$TMP/breakerd.b")"
else
	bad "host b never probed within 8 s (held for probe_timeout_ms?)" \
		"$(grep fleet "$TMP/breakerd.b")" "$("$BCTL" --shm "${SHM[b]}" list)"
fi

echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
