#!/usr/bin/env bash
# bctl_signals.sh BCTL PYTHON3 - the "signals" object of `bctl inspect
# --json` (issue 11 §5) and its `bctl metrics` series, consistent with the
# counters:
#   svc   max_concurrent 2: 3 successes, 2 failures, then two execs
#         holding both permits (each blocked reading its own FIFO until the
#         test writes to it: no race with the machine's load) (a third exec is refused: full):
#         arrivals = allowed + rejected_*, completions = successes +
#         failures + healthy + ignored + cancelled, in_flight 2,
#         remaining_concurrent 0, oldest_in_flight_ms >= the time slept
#         since the first holder started and below a generous bound;
#         once they end: in_flight 0, oldest 0, arrivals - completions =
#         the refusals.
#   plain no bulkhead: remaining_concurrent null, max_concurrent 0.
#   api/retry  budget: signals.first_attempts = counters.deposits,
#         retries = counters.retries, tokens_left = balance, retry_share =
#         retries / (first_attempts + retries).
#   metrics: breakerd_arrivals_total, _completions_total,
#         _oldest_in_flight_seconds, _max_concurrent, _half_open_probes
#         carry the same numbers, with HELP and TYPE.
# Real time with generous bounds. Uses its own
# segment /brkft-signals-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_signals.sh BCTL PYTHON3}
PY=${2:?python3}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkft-signals
holders=

release() { timeout 5 sh -c "echo > '$1'"; }

cleanup() {
	for f in "$TMP"/hold*; do [ -p "$f" ] && timeout 1 sh -c "echo > '$f'" 2>/dev/null; done
	scratch_cleanup
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # b

# js NAME EXPR: evaluate the Python expression EXPR over j = the JSON of
# `bctl inspect NAME --json` (s = j["signals"], c = j.get("counters"))
js() {
	b inspect "$1" --json >"$TMP/j" 2>"$TMP/e" || { echo "inspect failed: $(cat "$TMP/e")"; return 1; }
	"$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
s = j["signals"]; c = j.get("counters", {})
print(eval(sys.argv[2]))' "$TMP/j" "$2"
}

# holds NAME EXPR DESC: EXPR is True
holds() {
	local got
	got=$(js "$1" "$2" 2>&1)
	if [ "$got" = True ]; then ok "$3"; else bad "$3: $2 is '$got'" "$(cat "$TMP/j")"; fi
}

b config svc --max-concurrent 2 --failure-threshold 100 >/dev/null &&
	b config plain >/dev/null && b budget api/retry --floor 1 --ratio 0.5 >/dev/null ||
	bad "bctl config / budget"
for _ in 1 2 3; do b exec svc -- true; done
for _ in 1 2; do b exec svc -- false; done

keys='sorted(s) == sorted(["arrivals", "completions", "in_flight", "oldest_in_flight_ms", "max_concurrent", "half_open_probes", "remaining_concurrent"])'
holds svc "$keys" "every signal key is there"
holds svc 's["arrivals"] == 5 and s["completions"] == 5 and s["in_flight"] == 0' \
	"5 calls: 5 arrivals, 5 completions, none out"
holds svc 's["oldest_in_flight_ms"] == 0 and s["remaining_concurrent"] == 2' \
	"nothing out: oldest 0, 2 permits free"
holds svc 's["max_concurrent"] == j["config"]["max_concurrent"] == 2 and s["half_open_probes"] == j["config"]["half_open_probes"]' \
	"limits are the config's"

mkfifo "$TMP/hold1" "$TMP/hold2" || bad "mkfifo"
start=$(date +%s%N)
b exec svc -- sh -c "cat '$TMP/hold1' >/dev/null" &
holders="$holders $!"
in_flight() { [ "$(js svc 's["in_flight"]')" = "$1" ]; }
until_s 4 in_flight 1
b exec svc -- sh -c "cat '$TMP/hold2' >/dev/null" &
holders="$holders $!"
until_s 4 in_flight 2
b exec svc -- true 2>/dev/null
rc=$?
[ "$rc" -eq 75 ] && ok "third exec refused: bulkhead full (75)" || bad "third exec: exit $rc, want 75"
sleep 0.5
holds svc 's["in_flight"] == 2 and s["remaining_concurrent"] == 0' "two holders: in_flight 2, none free"
# the first holder's permit is at most as old as the time since it started
b inspect svc --json >"$TMP/j2"
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
age=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["signals"]["oldest_in_flight_ms"])' "$TMP/j2")
if [ "$age" -ge 400 ] && [ "$age" -le "$elapsed_ms" ]; then
	ok "oldest_in_flight_ms $age within [400, $elapsed_ms] (the first holder's age)"
else
	bad "oldest_in_flight_ms $age not within [400, $elapsed_ms]"
fi
holds svc 's["arrivals"] == c["allowed"] + c["rejected_open"] + c["rejected_cooling"] + c["rejected_full"] == 8' \
	"arrivals = allowed + rejected_* = 8"
holds svc 's["completions"] == c["successes"] + c["failures"] + c["healthy_errors"] + c["ignored"] + c["cancelled"] + c.get("throttled", 0) == 5' \
	"completions = the released outcomes = 5"
holds svc 's["arrivals"] - c["rejected_full"] - s["completions"] == s["in_flight"]' \
	"arrivals - refusals - completions = in_flight"

# the metrics of the same moment
b metrics --prefix svc >"$TMP/m" || bad "bctl metrics"
for fam in arrivals_total:counter completions_total:counter \
	   oldest_in_flight_seconds:gauge max_concurrent:gauge half_open_probes:gauge; do
	n=breakerd_${fam%%:*}
	if grep -q "^# HELP $n " "$TMP/m" && grep -q "^# TYPE $n ${fam##*:}$" "$TMP/m" &&
	   grep -q "^$n{name=\"svc\"} " "$TMP/m"; then
		ok "metrics: $n (${fam##*:}, HELP, a sample)"
	else
		bad "metrics: $n missing" "$(grep "$n" "$TMP/m")"
	fi
done
grep -q '^breakerd_arrivals_total{name="svc"} 8$' "$TMP/m" &&
	grep -q '^breakerd_completions_total{name="svc"} 5$' "$TMP/m" &&
	grep -q '^breakerd_max_concurrent{name="svc"} 2$' "$TMP/m" &&
	ok "metrics: arrivals 8, completions 5, max_concurrent 2" ||
	bad "metrics values" "$(grep -E 'arrivals|completions|max_concurrent' "$TMP/m")"
age=$(sed -n 's/^breakerd_oldest_in_flight_seconds{name="svc"} //p' "$TMP/m")
awk -v v="$age" 'BEGIN { exit !(v >= 0.4 && v < 60) }' &&
	ok "metrics: oldest in flight ${age}s" || bad "oldest_in_flight_seconds '$age'"

release "$TMP/hold1"
release "$TMP/hold2"
for p in $holders; do wait "$p"; done
holders=
holds svc 's["in_flight"] == 0 and s["oldest_in_flight_ms"] == 0 and s["remaining_concurrent"] == 2' \
	"holders done: nothing out, oldest 0"
holds svc 's["arrivals"] - s["completions"] == c["rejected_full"] == 1' \
	"arrivals - completions = the one refusal"

holds plain 's["remaining_concurrent"] is None and s["max_concurrent"] == 0' \
	"no bulkhead: remaining_concurrent null"

# budgets
b exec svc --retries 1 --retry-budget api/retry -- false 2>/dev/null
b exec svc --retries 1 --retry-budget api/retry -- true
bkeys='sorted(s) == sorted(["first_attempts", "retries", "retry_share", "tokens_left"])'
holds api/retry "$bkeys" "budget: every signal key is there"
holds api/retry 's["first_attempts"] == c["deposits"] == 2 and s["retries"] == c["retries"] == 1' \
	"budget: first_attempts = deposits (2), retries (1)"
holds api/retry 'abs(s["retry_share"] - s["retries"] / (s["first_attempts"] + s["retries"])) < 0.001' \
	"budget: retry_share = retries / (first_attempts + retries)"
holds api/retry 's["tokens_left"] == j["balance"]' "budget: tokens_left = balance"

echo "# bctl_signals.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
