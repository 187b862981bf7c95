#!/usr/bin/env bash
# bctl_retry_budget.sh BCTL - a retry budget keeps a fleet's retries a bounded
# share of its traffic; without one, every failure is retried N times.
#
# Two arms run side by side against a dead upstream (a command that appends
# a line to a counter file and exits 1), each with 8 workers that run
# `bctl exec NAME --retries 5 ... -- CMD` in a loop for ~3 s:
#   with    --retry-budget B (floor 10/s, ratio 0.2: the defaults)
#   without (no budget: every invocation runs 1 + 5 times)
# Each arm has its own breaker, configured with a huge failure threshold so
# that it never opens (an open breaker would hide the budget's effect).
# attempts = lines in the arm's counter file, first attempts = bctl exec
# invocations, retries = attempts - first attempts. Checks:
#   with:    retries <= 0.2 * first + 10/s * seconds + 10 (the floor's
#            burst: it is full at creation), + 1 for rounding; the budget's
#            own counters agree (deposits = first, retries = retries);
#            every refused invocation printed exactly
#            "bctl: NAME: retry budget B exhausted (deferred)" and exited 75
#   without: retries = 5 * first (checked as >= 4.5 * first)
# Uses its own segment /brkbud-retry-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_retry_budget.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkbud-retry
WORKERS=8
RUN_S=3
RETRIES=5
FLOOR=10
RATIO=0.2
BURST=10

# Microseconds on the monotonic-enough wall clock (bash 5: no fork).
now_us() {
	if [ -n "${EPOCHREALTIME:-}" ]; then
		local t=${EPOCHREALTIME/[.,]/}
		echo "$t"
	else
		echo $(($(date +%s%N) / 1000))
	fi
}

setup() {
	"$BCTL" --shm "$SHM" config up-budget --failure-threshold 1000000 >/dev/null &&
	"$BCTL" --shm "$SHM" config up-plain --failure-threshold 1000000 >/dev/null &&
	"$BCTL" --shm "$SHM" budget rb --floor "$FLOOR" --ratio "$RATIO" >/dev/null
}

# worker ARM IDX: run bctl exec in a loop until the deadline; one line per
# invocation ("rc") in $TMP/ARM.IDX.rc, stderr in $TMP/ARM.IDX.err.
worker() {
	local arm=$1 idx=$2 end=$3 count=$TMP/$1.count rc
	local -a extra=()
	[ "$arm" = budget ] && extra=(--retry-budget rb)
	while [ "$(now_us)" -lt "$end" ]; do
		"$BCTL" --shm "$SHM" exec "up-$arm" --retries "$RETRIES" "${extra[@]}" \
			-- sh -c 'echo x >> "$1"; exit 1' sh "$count" \
			>/dev/null 2>>"$TMP/$arm.$idx.err"
		rc=$?
		echo "$rc" >>"$TMP/$arm.$idx.rc"
	done
	now_us >"$TMP/$arm.$idx.end"
}

lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

# json_int FILE KEY: the first integer value of "KEY" in FILE.
json_int() {
	grep -o "\"$2\": *[0-9]*" "$1" | head -n 1 | grep -o '[0-9]*$'
}

t_create=$(now_us)
if ! setup; then
	echo "FAIL - cannot set up the breakers and the budget on $SHM"
	exit 1
fi
t0=$(now_us)
end=$((t0 + RUN_S * 1000000))
for i in $(seq 1 "$WORKERS"); do
	worker budget "$i" "$end" &
	worker plain "$i" "$end" &
done
wait
# The budget arm's seconds: from the budget's creation to its last worker's
# last invocation (the plain arm's long backoff tail does not count).
t1=$(sort -n "$TMP"/budget.*.end | tail -n 1)
secs_ms=$(((t1 - t_create) / 1000))
plain_ms=$((($(sort -n "$TMP"/plain.*.end | tail -n 1) - t0) / 1000))

b_first=$(cat "$TMP"/budget.*.rc 2>/dev/null | wc -l | tr -d ' ')
b_att=$(lines "$TMP/budget.count")
b_retries=$((b_att - b_first))
b_75=$(cat "$TMP"/budget.*.rc | grep -cx 75)
b_1=$(cat "$TMP"/budget.*.rc | grep -cx 1)
b_other=$(cat "$TMP"/budget.*.rc | grep -cvx '75\|1')
p_first=$(cat "$TMP"/plain.*.rc 2>/dev/null | wc -l | tr -d ' ')
p_att=$(lines "$TMP/plain.count")
p_retries=$((p_att - p_first))
# bound * 1000, integer: ratio * first + floor * seconds + burst + 1
bound_x1000=$((200 * b_first + FLOOR * secs_ms + (BURST + 1) * 1000))

echo "# $WORKERS workers per arm, --retries $RETRIES; budget arm ${secs_ms} ms (from the budget's creation), plain arm ${plain_ms} ms"
echo "# with budget:    first attempts $b_first, attempts $b_att, retries $b_retries" \
	"(bound $((bound_x1000 / 1000))); exits: 75 x $b_75, 1 x $b_1, other x $b_other"
echo "# without budget: first attempts $p_first, attempts $p_att, retries $p_retries" \
	"($((p_first ? p_retries * 100 / p_first : 0))% of first attempts)"

if [ "$b_first" -ge 50 ] && [ "$p_first" -ge "$WORKERS" ]; then
	ok "both arms ran (budget arm $b_first invocations, plain arm $p_first)"
else
	bad "too few invocations: budget arm $b_first, plain arm $p_first"
fi
if [ $((b_retries * 1000)) -le "$bound_x1000" ]; then
	ok "with the budget: $b_retries retries <= 0.2 x $b_first + 10/s x ${secs_ms} ms + 10 + 1"
else
	bad "with the budget: $b_retries retries > 0.2 x $b_first + 10/s x ${secs_ms} ms + 10 + 1"
fi
if [ "$b_75" -gt 0 ]; then
	ok "with the budget: $b_75 invocations were deferred (exit 75)"
else
	bad "with the budget: no invocation was deferred"
fi
if [ "$b_other" -eq 0 ]; then
	ok "with the budget: every invocation exited 75 (deferred) or 1 (CMD's status)"
else
	bad "with the budget: $b_other invocations exited with another status"
fi
deferred_lines=$(cat "$TMP"/budget.*.err | grep -cx 'bctl: up-budget: retry budget rb exhausted (deferred)')
other_lines=$(cat "$TMP"/budget.*.err | grep -cvx 'bctl: up-budget: retry budget rb exhausted (deferred)')
if [ "$deferred_lines" -eq "$b_75" ] && [ "$other_lines" -eq 0 ]; then
	ok "with the budget: one 'retry budget rb exhausted (deferred)' line per deferral, nothing else"
else
	bad "with the budget: $deferred_lines deferral lines for $b_75 exits 75, $other_lines other lines: $(cat "$TMP"/budget.*.err | grep -vx 'bctl: up-budget: retry budget rb exhausted (deferred)' | head -n 3)"
fi
if [ "$p_retries" -ge $((p_first * 45 / 10)) ] && [ "$p_retries" -le $((p_first * RETRIES)) ]; then
	ok "without the budget: $p_retries retries ~ 5 x $p_first first attempts"
else
	bad "without the budget: $p_retries retries, want about 5 x $p_first"
fi
if [ "$b_retries" -lt "$p_retries" ] || [ "$b_retries" -lt $((b_first * RETRIES / 2)) ]; then
	ok "the budget cut retries to $((b_first ? b_retries * 100 / b_first : 0))% of first attempts (without: $((p_first ? p_retries * 100 / p_first : 0))%)"
else
	bad "the budget did not cut retries ($b_retries of $b_first)"
fi

# The budget's own counters agree with what the upstream saw.
if "$BCTL" --shm "$SHM" inspect rb --json >"$TMP/rb.json" 2>"$TMP/rb.err"; then
	deposits=$(json_int "$TMP/rb.json" deposits)
	permitted=$(json_int "$TMP/rb.json" retries)
	echo "# budget rb: deposits $deposits, retries $permitted, deferred $(json_int "$TMP/rb.json" deferred)"
	if [ "$deposits" = "$b_first" ] && [ "$permitted" = "$b_retries" ]; then
		ok "budget counters: deposits $deposits = first attempts, retries $permitted = retries seen"
	else
		bad "budget counters: deposits $deposits (want $b_first), retries $permitted (want $b_retries)"
	fi
else
	bad "bctl inspect rb --json failed: $(cat "$TMP/rb.err")"
fi
# The breakers stayed closed (the threshold is huge).
for arm in budget plain; do
	"$BCTL" --shm "$SHM" inspect "up-$arm" --json >"$TMP/$arm.json" 2>/dev/null
	if grep -q '"state": "closed"' "$TMP/$arm.json"; then
		ok "breaker up-$arm stayed closed"
	else
		bad "breaker up-$arm is not closed"
	fi
done

if [ "$fail" -ne 0 ]; then
	echo "$fail check(s) failed"
	exit 1
fi
echo "all checks passed"
exit 0
