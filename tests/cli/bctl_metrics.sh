#!/usr/bin/env bash
# bctl_metrics.sh BCTL PYTHON3 CHECK_PROM [BREAKERD] - `bctl metrics` is strict
# Prometheus text format (0.0.4) with every series of every breaker, zeros
# included, and the numbers match what was done:
#
#   pay/api   failure_threshold 2; two `bctl exec -- false` (failures,
#             reason other) open it; a third exec is refused (exit 75):
#             state open, failures{reason="other"} 2, rejected{cause="open"}
#             1, allowed 2, transitions 1, consecutive_failures 0 (a new
#             generation counts afresh),
#             open_remaining_seconds in (0, 60]
#   z         one success, then `bctl force-open`: mode forced_open
#   edge.case_1:x-y   untouched: every series present at 0
#
# Segment: capacity 1024, 3 records, 2 events; no daemon ever ran: no
# heartbeat age; no bucket or budget: no bucket or budget family. The
# checker's own self-test (bad texts it must reject) runs first.
#
# Buckets and budgets, on a second segment:
#   api/rl      bucket, rate 0.001/s, burst 10 (it refills 1 token in
#               1000 s: the test sees no refill)
#   api/retry   budget, floor 0.001/s (floor_burst 1), ratio 0.001
# first with no breaker: every bucket and budget series, zeros included
# (tokens 10, floor tokens 1); then `take api/rl 3` (granted),
# `take api/rl 8` (refused: 7 left), and two `bctl exec svc --retries 1
# --retry-budget api/retry -- false`: the first retry is drawn from the
# floor, the second is deferred (exit 75):
#   taken 1, denied 1, tokens_taken 3, tokens in [7, 7.1);
#   deposits 2, retries 1, floor_retries 1, deferred 1, tokens < 0.1. Then: empty output for a segment with no breaker is still
# valid, an absent segment exits 1, an extra argument exits 2, and with
# BREAKERD given, the empty segment breakerd creates is valid output too,
# and it shows the daemon's heartbeat age.
#
# Uses its own segments /brkft-metrics-$$[-*] and removes them at the end.
set -u

BCTL=${1:?usage: bctl_metrics.sh BCTL PYTHON3 CHECK_PROM [BREAKERD]}
PY=${2:?python3}
CHECK=${3:?check_prom.py}
BREAKERD=${4:-}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkft-metrics
dpid=

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # b
bl() { "$BCTL" --shm "$SHM-l" "$@"; }

# checker DESC ARGS...: run check_prom.py ARGS on $TMP/m
checker() {
	local desc=$1
	shift
	if "$PY" "$CHECK" "$@" "$TMP/m" >"$TMP/c.out" 2>"$TMP/c.err"; then
		ok "$desc ($(cat "$TMP/c.out"))"
	else
		bad "$desc" "$(head -20 "$TMP/c.err")"
	fi
}

# sample SERIES: the value of SERIES (exactly as printed) in $TMP/m
sample() {
	awk -v k="$1 " 'index($0, k) == 1 { print substr($0, length(k) + 1) }' "$TMP/m"
}

# value_is SERIES AWK-CONDITION-ON-v
value_is() {
	local v
	v=$(sample "$1")
	if [ -n "$v" ] && awk -v v="$v" "BEGIN { exit !($2) }"; then
		ok "$1 is $v ($2)"
	else
		bad "$1 is '$v', want $2"
	fi
}

# metrics DESC: bctl metrics of the second segment into $TMP/m, quietly
metrics() {
	if bl metrics >"$TMP/m" 2>"$TMP/err" && [ ! -s "$TMP/err" ]; then
		ok "bctl metrics exits 0, $1"
	else
		bad "bctl metrics, $1: exit $?" "$(cat "$TMP/err")"
	fi
}

if "$PY" "$CHECK" --self-test >"$TMP/self" 2>&1; then
	ok "checker self-test: $(cat "$TMP/self")"
else
	bad "checker self-test" "$(cat "$TMP/self")"
fi

b config pay/api --failure-threshold 2 --open 60s --hold-histogram on >/dev/null &&
	b config z --hold-histogram on >/dev/null && b config edge.case_1:x-y >/dev/null ||
	bad "bctl config"
b exec pay/api -- false; b exec pay/api -- false
b exec pay/api -- true 2>/dev/null
rc=$?
[ "$rc" -eq 75 ] && ok "third exec refused (75)" || bad "third exec: exit $rc, want 75"
b exec z -- true && b force-open z >/dev/null || bad "exec z / force-open z"

if b metrics >"$TMP/m" 2>"$TMP/err"; then
	ok "bctl metrics exits 0"
else
	bad "bctl metrics: exit $?" "$(cat "$TMP/err")"
fi
[ -s "$TMP/err" ] && bad "bctl metrics wrote on stderr" "$(cat "$TMP/err")"

checker "strict format, every series of 3 breakers, values" \
	--breakers 'pay/api,z,edge.case_1:x-y' --buckets '' --budgets '' \
	--holds 'pay/api,z' \
	--expect 'breakerd_state{name="pay/api",state="open"}=1' \
	--expect 'breakerd_state{name="pay/api",state="closed"}=0' \
	--expect 'breakerd_state{name="pay/api",state="half_open"}=0' \
	--expect 'breakerd_mode{name="pay/api",mode="normal"}=1' \
	--expect 'breakerd_failures_total{name="pay/api",reason="other"}=2' \
	--expect 'breakerd_failures_total{name="pay/api",reason="timeout"}=0' \
	--expect 'breakerd_rejected_total{name="pay/api",cause="open"}=1' \
	--expect 'breakerd_rejected_total{name="pay/api",cause="cooling"}=0' \
	--expect 'breakerd_rejected_total{name="pay/api",cause="full"}=0' \
	--expect 'breakerd_allowed_total{name="pay/api"}=2' \
	--expect 'breakerd_successes_total{name="pay/api"}=0' \
	--expect 'breakerd_transitions_total{name="pay/api"}=1' \
	--expect 'breakerd_consecutive_failures{name="pay/api"}=0' \
	--expect 'breakerd_mode{name="z",mode="forced_open"}=1' \
	--expect 'breakerd_mode{name="z",mode="normal"}=0' \
	--expect 'breakerd_state{name="z",state="closed"}=1' \
	--expect 'breakerd_successes_total{name="z"}=1' \
	--expect 'breakerd_allowed_total{name="edge.case_1:x-y"}=0' \
	--expect 'breakerd_window_calls{name="edge.case_1:x-y"}=0' \
	--expect 'breakerd_permit_hold_seconds_count{name="pay/api"}=2' \
	--expect 'breakerd_permit_hold_seconds_bucket{name="pay/api",le="+Inf"}=2' \
	--expect 'breakerd_permit_hold_seconds_count{name="z"}=1' \
	--expect 'breakerd_segment_capacity=1024' \
	--expect 'breakerd_segment_records=3' \
	--expect 'breakerd_events_total=2' \
	--expect 'breakerd_daemon_up=0' \
	--absent breakerd_daemon_heartbeat_age_seconds

# bctl inspect's hold_time, text and --json, is the histogram bctl metrics
# exports: cumulative counts like Prometheus' le (le_+Inf = every hold), the
# +Inf bucket's "le" the string "+Inf".
b inspect pay/api >"$TMP/i.txt" && b inspect --json pay/api >"$TMP/i.json" ||
	bad "bctl inspect pay/api"
if "$PY" - "$TMP/m" "$TMP/i.txt" "$TMP/i.json" >"$TMP/h.err" 2>&1 <<'PYEOF'
import json, re, sys
prom = {}
for line in open(sys.argv[1]):
    m = re.match(r'breakerd_permit_hold_seconds_bucket\{name="pay/api",le="([^"]+)"\} (\d+)$', line)
    if m:
        prom[m.group(1)] = int(m.group(2))
text = {}
for line in open(sys.argv[2]):
    m = re.match(r'  le_(\S+): +(\d+)$', line)
    if m:
        text[m.group(1)] = int(m.group(2))
js = json.load(open(sys.argv[3]))["hold_time"]
jb = {("+Inf" if b["le"] == "+Inf" else "%g" % b["le"]): b["count"] for b in js["buckets"]}
assert len(prom) == 12 and prom["+Inf"] == 2, prom
assert text == prom, ("text", text, "metrics", prom)
assert jb == prom, ("json", jb, "metrics", prom)
assert js["buckets"][-1]["le"] == "+Inf" and js["count"] == 2, js
PYEOF
then
	ok "inspect hold_time (text and --json) is cumulative, as the metrics' le buckets"
else
	bad "inspect hold_time differs from the metrics' histogram" "$(cat "$TMP/h.err")"
fi

# The checker is not vacuous on real output: drop one zero series.
grep -v '^breakerd_probes_total{name="z"} 0$' "$TMP/m" >"$TMP/m2"
if ! "$PY" "$CHECK" --breakers 'pay/api,z,edge.case_1:x-y' "$TMP/m2" >/dev/null 2>"$TMP/c.err" &&
   grep -q "breakerd_probes_total: no series for breaker 'z'" "$TMP/c.err"; then
	ok "a missing zero series in real output is caught"
else
	bad "a missing zero series was not caught" "$(cat "$TMP/c.err")"
fi

value_is 'breakerd_open_remaining_seconds{name="pay/api"}' 'v > 0 && v <= 60'

# hold_histogram is opt-in: a breaker with it off has no hold series (the
# --holds check above); turned on, before its first release, all zeros.
cp "$TMP/m" "$TMP/m.saved"
b config edge.case_1:x-y --hold-histogram on >/dev/null || bad "config --hold-histogram on"
b metrics >"$TMP/m" 2>"$TMP/err" || bad "bctl metrics after --hold-histogram on"
checker "hold_histogram on, no release yet: its histogram at zero" \
	--breakers 'pay/api,z,edge.case_1:x-y' --holds 'pay/api,z,edge.case_1:x-y' \
	--expect 'breakerd_permit_hold_seconds_count{name="edge.case_1:x-y"}=0' \
	--expect 'breakerd_permit_hold_seconds_sum{name="edge.case_1:x-y"}=0' \
	--expect 'breakerd_permit_hold_seconds_bucket{name="edge.case_1:x-y",le="+Inf"}=0'
mv "$TMP/m.saved" "$TMP/m"

# HELP and TYPE once per family, even with several breakers.
n_help=$(grep -c '^# HELP breakerd_state ' "$TMP/m")
[ "$n_help" -eq 1 ] && ok "one HELP per family" || bad "HELP breakerd_state $n_help times"

# Buckets and budgets: every series at zero before any take ...
bl bucket api/rl --rate 0.001 --burst 10 >/dev/null &&
	bl budget api/retry --floor 0.001 --ratio 0.001 >/dev/null ||
	bad "bctl bucket / budget"
metrics "a bucket and a budget"
checker "a bucket and a budget, no breaker: every series, zeros" \
	--breakers '' --buckets api/rl --budgets api/retry \
	--expect 'breakerd_bucket_taken_total{name="api/rl"}=0' \
	--expect 'breakerd_bucket_denied_total{name="api/rl"}=0' \
	--expect 'breakerd_bucket_tokens_taken_total{name="api/rl"}=0' \
	--expect 'breakerd_bucket_tokens{name="api/rl"}=10' \
	--expect 'breakerd_bucket_rate_per_second{name="api/rl"}=0.001' \
	--expect 'breakerd_bucket_burst{name="api/rl"}=10' \
	--expect 'breakerd_budget_deposits_total{name="api/retry"}=0' \
	--expect 'breakerd_budget_retries_total{name="api/retry"}=0' \
	--expect 'breakerd_budget_floor_retries_total{name="api/retry"}=0' \
	--expect 'breakerd_budget_deferred_total{name="api/retry"}=0' \
	--expect 'breakerd_budget_tokens{name="api/retry"}=1' \
	--expect 'breakerd_budget_pool_tokens{name="api/retry"}=0' \
	--expect 'breakerd_budget_floor_tokens{name="api/retry"}=1' \
	--expect 'breakerd_budget_floor_per_second{name="api/retry"}=0.001' \
	--expect 'breakerd_budget_floor_burst{name="api/retry"}=1' \
	--expect 'breakerd_budget_ratio{name="api/retry"}=0.001' \
	--expect 'breakerd_segment_records=2'
n_help=$(grep -c '^# HELP breakerd_bucket_tokens ' "$TMP/m")
[ "$n_help" -eq 1 ] && ok "one HELP per bucket family" ||
	bad "HELP breakerd_bucket_tokens $n_help times"

# ... and the numbers after takes and retries.
bl take api/rl 3 || bad "take api/rl 3: exit $?"
bl take api/rl 8 2>"$TMP/e"
rc=$?
[ "$rc" -eq 75 ] && ok "take 8 of 7 refused (75)" || bad "take api/rl 8: exit $rc, want 75"
bl config svc --failure-threshold 100 >/dev/null || bad "bctl config svc"
bl exec svc --retries 1 --retry-budget api/retry -- false 2>"$TMP/e"
rc=$?
[ "$rc" -eq 1 ] && ok "exec with a floor retry: exit 1" ||
	bad "exec --retry-budget: exit $rc, want 1" "$(cat "$TMP/e")"
bl exec svc --retries 1 --retry-budget api/retry -- false 2>"$TMP/e"
rc=$?
if [ "$rc" -eq 75 ] && grep -q 'retry budget api/retry exhausted' "$TMP/e"; then
	ok "exec with the budget spent: deferred (75)"
else
	bad "exec --retry-budget, budget spent: exit $rc, want 75" "$(cat "$TMP/e")"
fi
metrics "after takes and retries"
checker "after takes and retries: values" \
	--breakers svc --buckets api/rl --budgets api/retry \
	--expect 'breakerd_bucket_taken_total{name="api/rl"}=1' \
	--expect 'breakerd_bucket_denied_total{name="api/rl"}=1' \
	--expect 'breakerd_bucket_tokens_taken_total{name="api/rl"}=3' \
	--expect 'breakerd_bucket_burst{name="api/rl"}=10' \
	--expect 'breakerd_budget_deposits_total{name="api/retry"}=2' \
	--expect 'breakerd_budget_retries_total{name="api/retry"}=1' \
	--expect 'breakerd_budget_floor_retries_total{name="api/retry"}=1' \
	--expect 'breakerd_budget_deferred_total{name="api/retry"}=1' \
	--expect 'breakerd_budget_floor_burst{name="api/retry"}=1' \
	--expect 'breakerd_segment_records=3'
value_is 'breakerd_bucket_tokens{name="api/rl"}' 'v >= 7 && v < 7.1'
value_is 'breakerd_budget_tokens{name="api/retry"}' 'v >= 0 && v < 0.1'
value_is 'breakerd_budget_pool_tokens{name="api/retry"}' 'v >= 0 && v <= 0.002'

# Errors.
"$BCTL" --shm /brkft-metrics-absent-$$ metrics >"$TMP/o" 2>"$TMP/e"
rc=$?
if [ "$rc" -eq 1 ] && [ ! -s "$TMP/o" ] && grep -q 'no such segment' "$TMP/e"; then
	ok "absent segment: exit 1, '$(cat "$TMP/e")'"
else
	bad "absent segment: exit $rc" "$(cat "$TMP/e")"
fi
b metrics extra >"$TMP/o" 2>"$TMP/e"
rc=$?
[ "$rc" -eq 2 ] && ok "extra argument: exit 2" || bad "extra argument: exit $rc"

# With breakerd: it creates an empty segment (no breaker: every breaker
# family is still there, with HELP and TYPE and no sample; no bucket or
# budget family), and its heartbeat shows.
if [ -n "$BREAKERD" ] && [ -x "$BREAKERD" ]; then
	"$BREAKERD" --shm "$SHM-d" --interval 50ms 2>"$TMP/d.err" &
	dpid=$!
	daemon_up() {
		"$BCTL" --shm "$SHM-d" metrics >"$TMP/m" 2>/dev/null &&
			grep -q '^breakerd_daemon_up 1$' "$TMP/m"
	}
	until_s 5 daemon_up
	checker "breakerd's empty segment: valid, no breaker series, heartbeat" \
		--breakers '' --buckets '' --budgets '' \
		--expect 'breakerd_daemon_up=1' \
		--expect 'breakerd_segment_records=0'
	age=$(sed -n 's/^breakerd_daemon_heartbeat_age_seconds //p' "$TMP/m")
	if [ -n "$age" ] && awk -v v="$age" 'BEGIN { exit !(v >= 0 && v < 2) }'; then
		ok "heartbeat age ${age}s"
	else
		bad "heartbeat age '$age'" "$(cat "$TMP/d.err")"
	fi
	kill "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	dpid=
else
	echo "# no breakerd given: the daemon part is skipped"
fi

echo "# bctl_metrics.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
