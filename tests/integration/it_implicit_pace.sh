#!/usr/bin/env bash
# it_implicit_pace.sh BCTL - the default learns the upstream's rate (issue
# 21 acceptance): no configuration at all, 8 worker processes loop
#     bctl exec api -- curl -si URL
# against nginx-light on loopback (tests/common/nginx_harness.sh: limit_req
# 5 r/s, burst 5 nodelay, 429 + Retry-After: 1). The first 429 gives the
# breaker its implicit pace api:pace; from then on every worker waits for
# its tokens (bctl exec sleeps a "paced" refusal up to max_wait_ms).
# Over PHASE_S seconds (30: with 15 the few 429s a probe costs made the
# share swing around the bound, 10.8 % once on a loaded box; nginx's
# access log):
#   goodput: 200s >= 85 % of 5 x seconds + 5 (the benchmark's goal is 95 %:
#            bench/pace_matrix.sh; these bounds are generous for a loaded
#            2-core box);
#   429s after the cold-start wave <= 10 % of the requests sent after it
#            (the wave: the requests in flight when the first 429 came, at
#            most one per worker: the 429s among the first 5 + 8 requests
#            nginx logged);
#   the breaker never opened (no 'open' event) and api:pace is implicit.
# Prints the figures. Skips (77) if nginx or curl is not installed. Stops by
# itself: the workers loop until a stop file appears; nginx is stopped and
# the segment unlinked by the EXIT trap.
set -u
BCTL=${1:?usage: it_implicit_pace.sh PATH_TO_BCTL}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../common/check.sh"
. "$HERE/../common/nginx_harness.sh"

WORKERS=8
PHASE_S=${PHASE_S:-30}
nginx_fleet_begin it-implicit 5

now_ms() { date +%s%3N; }

# Each answer as "END_MS STATUS" (the status line of curl -si's output):
# the figures count the answers that came within the phase (a worker asleep
# in a paced wait when the phase ends sends one more request after it).
worker() {
	local i=$1 out rc
	while [ ! -e "$TMP/stop" ]; do
		out=$("$BCTL" --shm "$SHM" exec api -- \
			curl -si --max-time 5 "$NGINX_URL" 2>>"$TMP/w$i.err")
		rc=$?
		echo "$rc" >>"$TMP/w$i.rc"
		echo "$(now_ms) $(printf '%s\n' "$out" | head -n 1 | awk '{ print $2 }')" \
			>>"$TMP/w$i.ans"
	done
}

t0=$(now_ms)
for ((i = 0; i < WORKERS; i++)); do
	worker "$i" &
	pids+=($!)
done
sleep "$PHASE_S"
touch "$TMP/stop"
t1=$(now_ms)
wait "${pids[@]}" 2>/dev/null
pids=()

# the answers in the phase, in the order they came
sort -n "$TMP"/w*.ans | awk -v t1="$t1" '$1 <= t1 { print $2 }' >"$TMP/answers"
ok=$(grep -c '^200$' "$TMP/answers")
lim=$(grep -c '^429$' "$TMP/answers")
sent=$(wc -l <"$TMP/answers")
# the wave: the 429s among the first burst + workers answers (at most one
# per worker: the requests in flight when the first 429 came)
n0=$((NGINX_BURST + WORKERS))
wave=$(head -n "$n0" "$TMP/answers" | grep -c '^429$')
[ "$wave" -gt "$WORKERS" ] && wave=$WORKERS
after_sent=$((sent > n0 ? sent - n0 : 0))
after_lim=$(tail -n +$((n0 + 1)) "$TMP/answers" | grep -c '^429$')
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
allow=$(awk -v s="$secs" 'BEGIN { printf "%.1f", 5 * s + 5 }')
good=$(awk -v o="$ok" -v a="$allow" 'BEGIN { printf "%.1f", 100 * o / a }')
lpct=$(awk -v l="$after_lim" -v s="$after_sent" 'BEGIN { printf "%.1f", (s > 0 ? 100 * l / s : 0) }')
exits=$(cat "$TMP"/w*.rc 2>/dev/null | sort | uniq -c | awk '{ printf "%s x exit %s, ", $1, $2 }')
echo "${secs} s at 5 r/s burst 5, $WORKERS workers of plain 'bctl exec api -- curl -si URL':" \
     "answers $sent, 200: $ok, 429: $lim (wave $wave), goodput $good % of $allow (nginx allows burst + 1 at first)," \
     "429s after the wave $lpct % of $after_sent; bctl: ${exits% , }"
"$BCTL" --shm "$SHM" inspect api:pace >"$TMP/pace" 2>&1
echo "  api:pace: $(grep -E '^  (rate|last_cut|implicit):' "$TMP/pace" | tr -s ' ' | tr '\n' ';')"
if awk -v g="$good" 'BEGIN { exit !(g >= 85) }'; then
	ok "goodput $good % >= 85 % of 5 x $secs + 5"
else
	bad "goodput $good % >= 85 % of 5 x $secs + 5"
fi
if awk -v l="$lpct" 'BEGIN { exit !(l <= 10) }'; then
	ok "429s after the cold-start wave $lpct % <= 10 % of the $after_sent sent after it"
else
	bad "429s after the cold-start wave $lpct % <= 10 % of the $after_sent sent after it"
fi
if grep -q '^  implicit: *yes' "$TMP/pace"; then
	ok "api:pace is the breaker's implicit pace"
else
	bad "api:pace is not an implicit pace" "$(cat "$TMP/pace")"
fi
"$BCTL" --shm "$SHM" events >"$TMP/events" 2>&1
if grep -E '^[^ ]+ +#[0-9]+ +api +closed -> open' "$TMP/events" >/dev/null; then
	bad "the breaker opened on rate limits" "$(grep -- '-> open' "$TMP/events" | head -3)"
else
	ok "the breaker never opened"
fi
other=$(cat "$TMP"/w*.rc | grep -vc '^0$')
if [ "$other" -eq 0 ]; then
	ok "every bctl exec exited 0 (paced waits, never refused)"
else
	bad "every bctl exec exited 0" "$(sort "$TMP"/w*.rc | uniq -c | tr '\n' ' ')" \
		"$(cat "$TMP"/w*.err | sort | uniq -c | head -5)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
