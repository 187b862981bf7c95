#!/usr/bin/env bash
# bctl_config_auto.sh BCTL - max_concurrent = auto (issue 25, the learned
# bulkhead limit, docs/design/limits.md "Adaptive concurrency") on bctl's
# surfaces: `bctl config --max-concurrent auto | auto:N` and
# `--min-concurrent N`, what `bctl inspect` (text and --json) and
# `bctl metrics` show of the learned limit, and the breakers file's
# `max_concurrent = auto:N` / `min_concurrent = N` with its bad-line
# messages. Uses its own segment /brktest-auto-$$ and removes it.
set -u

BCTL=${1:?usage: bctl_config_auto.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # scratch, ok, bad
scratch brktest-auto
. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, check

# field NAME KEY: the value of "KEY: value" in `bctl inspect NAME`.
field() {
	b inspect "$1" | awk -v k="$2:" '$1 == k { print $2; exit }'
}

# jq-less JSON: python3 -c EXPR on `bctl inspect NAME --json` as d.
json() {
	b inspect "$1" --json | /usr/bin/python3 -c "import json,sys
d=json.load(sys.stdin)
d=d[0] if isinstance(d,list) else d
print($2)"
}

run config api --max-concurrent auto
check "config --max-concurrent auto" 0 ""
if [ "$(field api max_concurrent)" = "auto:64" ] &&
   [ "$(field api concurrency_limit)" = "4.00" ]; then
	ok "auto: learned up to 64, starting at 4"
else
	bad "auto: learned up to 64, starting at 4" "$(b inspect api)"
fi
run config api --max-concurrent auto:8 --min-concurrent 2
check "config --max-concurrent auto:8 --min-concurrent 2" 0 ""
got=$(json api "d['config']['concurrency_auto'], d['config']['max_concurrent'], d['config']['min_concurrent'], d['concurrency_limit'], d['signals']['remaining_concurrent']")
if [ "$got" = "True 8 2 4.0 4" ]; then
	ok "inspect --json: auto, bounds, the learned limit"
else
	bad "inspect --json: auto, bounds, the learned limit" "got: $got"
fi
if b metrics | grep -q '^breakerd_concurrency_limit{name="api"} 4$' &&
   b metrics | grep -q '^breakerd_latency_baseline_seconds{name="api"} 0.000000$'; then
	ok "metrics: the learned limit and its latencies"
else
	bad "metrics: the learned limit and its latencies" "$(b metrics | grep -E 'concurrency|latency')"
fi
run config api --max-concurrent auto:1
check "auto:1 below min_concurrent 2" 2 \
	"^bctl: config api: invalid setting min_concurrent = 2 \(need 1 <= min-concurrent"
run config api --max-concurrent autox
check "a bad --max-concurrent" 2 \
	"^bctl: --max-concurrent: 'autox' is not a number 0-64, auto or auto:N$"
run config api --max-concurrent auto:65
check "auto:65 out of range" 2 "^bctl: --max-concurrent: '65' is out of range"
run config api --min-concurrent 0
check "--min-concurrent 0" 2 "^bctl: --min-concurrent: '0' is out of range"
run config api --max-concurrent 5
check "a number turns the learned limit off" 0 ""
if [ "$(field api max_concurrent)" = "5" ] &&
   ! b metrics | grep -q '^breakerd_concurrency_limit{'; then
	ok "static again: no learned-limit series"
else
	bad "static again: no learned-limit series" "$(b inspect api)"
fi

# the breakers file
cat >"$TMP/ok.conf" <<'CONF'
[breaker api]
max_concurrent = auto:8
min_concurrent = 2
[breaker db]
max_concurrent = auto
CONF
run apply "$TMP/ok.conf"
check "breakers file: max_concurrent = auto:8, min_concurrent = 2" 0 ""
if [ "$(field api max_concurrent)" = "auto:8" ] &&
   [ "$(field api min_concurrent)" = "2" ] &&
   [ "$(field db max_concurrent)" = "auto:64" ]; then
	ok "breakers file: applied"
else
	bad "breakers file: applied" "$(b inspect api; b inspect db)"
fi
cat >"$TMP/bad.conf" <<'CONF'
[breaker api]
max_concurrent = automatic
[breaker db]
max_concurrent = auto:4
min_concurrent = 6
[breaker x]
concurrency_auto = on
CONF
run apply "$TMP/bad.conf"
if [ "$rc" -eq 2 ] &&
   grep -q "bad.conf:2: \[breaker api\] max_concurrent: 'automatic' is not a number 0-64, auto or auto:N" "$TMP/err" &&
   grep -q "bad.conf:5: \[breaker db\] min_concurrent: min_concurrent = 6 is refused (need 1 <= min_concurrent" "$TMP/err" &&
   grep -q "bad.conf:7: \[breaker x\] concurrency_auto: no such setting of a breaker" "$TMP/err" &&
   tail -n 1 "$TMP/err" | grep -q "3 errors, nothing was applied$"; then
	ok "breakers file: bad lines say what and where"
else
	bad "breakers file: bad lines say what and where" "rc $rc" "$(cat "$TMP/err")"
fi
echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
