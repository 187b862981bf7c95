#!/usr/bin/env bash
# bctl_exec_pace.sh BCTL - bctl exec --pace: bad input, a missing pace, no
# NAME, the wait, and the 429 -> throttled path. Every case checks the exit
# status AND the one line bctl prints on stderr (plus the "try 'bctl --help'"
# hint for usage errors); CMD must not run when bctl refuses. Most paces here
# are plain buckets (--pace takes either; `bctl pace` makes a paced one): a
# plain bucket's rate is not cut, and a 429 under it stays a rate_limited
# failure for the breaker; only under a paced one is it throttled.
#
# Uses its own segment /brkpace-cli-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_exec_pace.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkpace-cli

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, check, expect, stored

# a command that leaves a mark: bctl refused iff it is absent
mark="$TMP/ran"
ran() { [ -e "$mark" ] && rm -f "$mark"; }

# An HTTP 429 with Retry-After, as curl -i prints it.
cat >"$TMP/429.sh" <<'SH'
#!/bin/sh
printf 'HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\n\r\n'
SH
chmod +x "$TMP/429.sh"

# --- usage and lookup errors: exit 2 / 1, CMD not run
expect "no NAME and no --pace is a usage error" 2 \
	"^bctl: exec: missing breaker NAME \(or --pace PACE\)$" exec -- touch "$mark"
ran && bad "CMD ran after the usage error"
expect "a bad --pace name is a usage error" 2 \
	"^bctl: invalid breaker name 'a b'" exec --pace 'a b' -- touch "$mark"
expect "--pace without a value" 2 "needs a value" exec --pace
expect "a missing pace: exit 1, naming it and how to make it" 1 \
	"^bctl: $SHM: no pace named 'absent' \(create it with 'bctl pace absent --ceiling R'\)$" \
	exec --pace absent -- touch "$mark"
ran && bad "CMD ran for a missing pace"
run config brk
expect "a breaker given as --pace: wrong kind" 1 "'brk' is a breaker" \
	exec --pace brk -- touch "$mark"
ran && bad "CMD ran for a wrong-kind pace"

# --- taking: exit 0 with a token, 75 without one (and CMD not run)
run bucket slow --rate 0.1 --burst 1
expect "the first call takes the one token and runs CMD" 0 "" \
	exec --pace slow -- touch "$mark"
ran && ok "CMD ran" || bad "CMD did not run"
expect "no token, no --wait: exit 75 with the wait" 75 \
	"^bctl: slow: rate limited, next token in [0-9]+ ms \(no --wait given\)$" \
	exec --pace slow -- touch "$mark"
ran && bad "CMD ran without a token"
expect "no token within --wait 100ms: exit 75 at once, naming the wait" 75 \
	"^bctl: slow: rate limited, next token in [0-9]+ ms \(waited 0 ms of --wait 100ms\)$" \
	exec --pace slow --wait 100ms -- touch "$mark"
ran && bad "CMD ran without a token"
run config held
expect "refused by the pace: the breaker's permit is released cancelled" 75 \
	"^bctl: slow: rate limited" exec held --pace slow -- touch "$mark"
stored "... and counted as cancelled, nothing in flight" held \
	'"cancelled": 1' '"in_flight": 0'

run bucket quick --rate 4 --burst 1
run exec --pace quick -- true
start=$(date +%s%3N)
expect "a token due within --wait is waited for" 0 "" \
	exec --pace quick --wait 2s -- touch "$mark"
took=$(( $(date +%s%3N) - start ))
ran && [ "$took" -ge 150 ] && ok "CMD ran after ${took} ms (a token every 250 ms)" ||
	bad "CMD ran after ${took} ms: want >= 150 ms and CMD run"

# The wake jitter is up to one interval (2 s at 0.5/s): a token due within
# --wait must be waited for, not refused because the jitter goes past it.
run bucket jittery --rate 0.5 --burst 1
run exec --pace jittery -- true
expect "a token due within --wait is not refused for the jitter" 0 "" \
	exec --pace jittery --wait 2100ms -- touch "$mark"
ran && ok "... and CMD ran" || bad "CMD did not run"

# --- the answer: a 429 under a plain bucket stays a rate_limited failure
# (only a real pace maps it to throttled: brk_admit_release()'s rule), with
# the breaker's implicit pace turned off (issue 21; on, below)
run bucket p429 --rate 100 --burst 10
run config up --implicit-pace off
run config up2 --implicit-pace off
expect "a 429 under --pace PLAIN_BUCKET: CMD's status" 0 "" exec up --pace p429 -- "$TMP/429.sh"
stored "... is a rate_limited failure with a cool-until, not throttled" up \
	'"throttled": 0' '"failures": 1' '"rate_limited": 1' '"cool_until_remaining_ms": [1-9]'
expect "a 429 without --pace" 0 "" exec up2 -- "$TMP/429.sh"
stored "... is a rate_limited failure with a cool-until" up2 \
	'"throttled": 0' '"failures": 1' '"rate_limited": 1' '"cool_until_remaining_ms": [1-9]'
expect "a 429 without --pace, implicit_pace on (the default)" 0 "" \
	exec up4 -- "$TMP/429.sh"
stored "... is throttled by the breaker's implicit pace: no failure, no cooling" up4 \
	'"throttled": 1' '"failures": 0' '"cool_until_remaining_ms": 0' \
	'"implicit_pace_per_s": [0-9]'
run inspect up4:pace
grep -q '^  implicit: *yes' "$TMP/out" && ok "bctl inspect up4:pace says implicit" ||
	bad "inspect up4:pace: no implicit line" "$(cat "$TMP/out")"
run events
grep -Eq ' up4:pace +pace_implicit +rate 1\.940/s' "$TMP/out" &&
	ok "bctl events: up4:pace pace_implicit rate 1.940/s" ||
	bad "no pace_implicit event for up4:pace" "$(grep up4 "$TMP/out")"
run pace p429paced --ceiling 100
expect "a 429 under --pace PACE: CMD's status" 0 "" exec up3 --pace p429paced -- "$TMP/429.sh"
stored "... is released throttled: no failure, no cooling" up3 \
	'"throttled": 1' '"failures": 0' '"rate_limited": 0' '"cool_until_remaining_ms": 0'
expect "a success under --pace" 0 "" exec up3 --pace p429paced --wait 1s -- true
stored "... counts as a success" up3 '"successes": 1' '"throttled": 1'

# Repeated 429s (no Retry-After, so nothing cools in between) under a plain
# bucket open the breaker after --failure-threshold; under a pace they never do.
cat >"$TMP/429bare.sh" <<'SH'
#!/bin/sh
printf 'HTTP/1.1 429 Too Many Requests\r\n\r\n'
SH
chmod +x "$TMP/429bare.sh"
run config plainbrk --failure-threshold 3 --implicit-pace off
for i in 1 2 3; do run exec plainbrk --pace p429 -- "$TMP/429bare.sh"; done
stored "3 429s under --pace PLAIN_BUCKET open the breaker" plainbrk \
	'"state": "open"' '"failures": 3' '"throttled": 0'
run pace p429b --ceiling 1000 --burst 10
run config pacedbrk --failure-threshold 3
for i in 1 2 3; do run exec pacedbrk --pace p429b --wait 2s -- "$TMP/429bare.sh"; done
stored "3 429s under --pace PACE leave the breaker closed" pacedbrk \
	'"state": "closed"' '"failures": 0' '"throttled": 3'

# --- a paced bucket (bctl pace): the 429 cuts the learned rate, a success counts ok
run pace learned --ceiling 40
expect "a 429 under a pace: CMD's status" 0 "" exec --pace learned -- "$TMP/429.sh"
stored "... is reported limited and cuts the rate (0.7 x 40 = 28)" learned \
	'"limited": 1' '"cuts": 1' '"rate": 2[0-9]\.'
# (a cut empties the bucket: the next token comes one interval later)
expect "a success under a pace" 0 "" exec --pace learned --wait 1s -- true
stored "... is reported ok" learned '"ok": 1' '"cuts": 1'

# --- the cut is an event of a bucket: no state transition, the new rate
run events
line=$(grep '  learned  ' "$TMP/out")
if printf '%s\n' "$line" | grep -Eq '  #[0-9]+  learned  pace_cut  rate 2[0-9]\.[0-9]{3}/s  pid [0-9]+$'; then
	ok "events: 'learned  pace_cut  rate N.NNN/s', no state transition"
else
	bad "events: the pace_cut line" "$line"
fi
run events --json
line=$(grep '"name":"learned"' "$TMP/out")
if printf '%s\n' "$line" | grep -q '"from":"closed","to":"closed","reason":"pace_cut"' &&
	printf '%s\n' "$line" | grep -Eq '"value":2[0-9]{4},"rate_per_s":2[0-9]\.[0-9]+}$'; then
	ok "events --json: the usual keys plus rate_per_s"
else
	bad "events --json: the pace_cut object" "$line"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
