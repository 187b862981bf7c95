#!/usr/bin/env bash
# bctl_bulkhead_queued.sh BCTL - brk_info.queued, the waiters in a
# bulkhead's queue (issue 25, docs/design/limits.md "Fair bulkhead waits"),
# on bctl's surfaces:
#   - max_concurrent 1, one `bctl exec b` holding the permit, a second
#     `bctl exec b --wait 10s` queued: `bctl inspect b` shows "queued: 1",
#     `--json` "queued": 1 and `bctl metrics` breakerd_bulkhead_queued
#     {name="b"} 1 while it waits; 0 everywhere once the holder is done and
#     the waiter ran;
#   - a breaker without a bulkhead has no queue: no "queued" line, "queued":
#     null in --json and no breakerd_bulkhead_queued series (and no family
#     at all when no breaker has a bulkhead).
# Uses its own segment /brkqueued-cli-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_bulkhead_queued.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch, until_s
scratch brkqueued-cli
. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # b, run, check

mark="$TMP/ran"
# jkey NAME KEY VALUE: `bctl inspect NAME --json` has "KEY": VALUE
jkey() {
	b inspect "$1" --json 2>/dev/null | grep -Eq "\"$2\": $3([^0-9]|\$)"
}

# --- no bulkhead: no queue anywhere
run config nb --failure-threshold 3
check "a breaker without a bulkhead" 0 ""
if jkey nb queued null && ! b inspect nb | grep -q '^queued:'; then
	ok "no bulkhead: \"queued\": null, no queued line"
else
	bad "no bulkhead: \"queued\": null, no queued line" "$(b inspect nb)"
fi
if ! b metrics | grep -q 'breakerd_bulkhead_queued'; then
	ok "no bulkhead anywhere: no breakerd_bulkhead_queued family"
else
	bad "no bulkhead anywhere: no breakerd_bulkhead_queued family" \
		"$(b metrics | grep breakerd_bulkhead_queued)"
fi

# --- max_concurrent 1: a holder and one waiter in the queue
run config b --max-concurrent 1
check "config b --max-concurrent 1" 0 ""
if jkey b queued 0 && b inspect b | grep -Eq '^queued: +0 ' &&
   b metrics | grep -q '^breakerd_bulkhead_queued{name="b"} 0$'; then
	ok "an empty queue: 0 in inspect, --json and metrics"
else
	bad "an empty queue: 0 in inspect, --json and metrics" \
		"$(b inspect b | grep queued)" "$(b metrics | grep bulkhead_queued)"
fi
mkfifo "$TMP/hold" || bad "mkfifo"
b exec b -- sh -c "cat '$TMP/hold' >/dev/null" &
holder=$!
until_s 5 jkey b in_flight 1 || bad "the holder's permit never showed (in_flight 1)"
b exec b --wait 10s -- touch "$mark" &
waiter=$!
if until_s 5 jkey b queued 1; then
	ok "a waiter in the queue: \"queued\": 1 in inspect --json"
else
	bad "a waiter in the queue: \"queued\": 1 in inspect --json" \
		"$(b inspect b --json)"
fi
if b inspect b | grep -Eq '^queued: +1 \(waiting in the bulkhead'"'"'s queue'; then
	ok "... and \"queued: 1 (waiting in the bulkhead's queue ...)\" in inspect"
else
	bad "... and \"queued: 1\" in inspect" "$(b inspect b)"
fi
if b metrics | grep -q '^breakerd_bulkhead_queued{name="b"} 1$' &&
   ! b metrics | grep -q '^breakerd_bulkhead_queued{name="nb"}'; then
	ok "... and breakerd_bulkhead_queued{name=\"b\"} 1 (no series for nb)"
else
	bad "... and breakerd_bulkhead_queued{name=\"b\"} 1 (no series for nb)" \
		"$(b metrics | grep bulkhead_queued)"
fi
if b metrics | grep -q '^# TYPE breakerd_bulkhead_queued gauge$'; then
	ok "... a gauge"
else
	bad "... a gauge" "$(b metrics | grep -A2 'HELP breakerd_bulkhead_queued')"
fi
[ -e "$mark" ] && bad "the waiter ran while the holder held the only permit"
: >"$TMP/hold" # the holder reads EOF and ends
wait "$holder" || bad "the holder: exit $?"
wait "$waiter" || bad "the waiter: exit $?"
if [ -e "$mark" ]; then
	ok "the waiter got the permit and ran"
else
	bad "the waiter did not run"
fi
if jkey b queued 0 && jkey b in_flight 0 &&
   b metrics | grep -q '^breakerd_bulkhead_queued{name="b"} 0$'; then
	ok "served: queued 0, in_flight 0"
else
	bad "served: queued 0, in_flight 0" "$(b inspect b --json)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
