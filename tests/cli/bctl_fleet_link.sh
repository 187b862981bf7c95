#!/usr/bin/env bash
# bctl_fleet_link.sh BCTL FLEETSTAT PYTHON3 CHECK_PROM [PROMTOOL] - the fleet
# link's status as bctl shows it (issue 13): `bctl segment info`, `bctl
# inspect` (no NAME), both with --json, and the breakerd_fleet_* families
# of `bctl metrics` (check_prom.py and, if given, promtool check metrics).
#
#   no link ever:  "fleet link: off", {"state": "off"}, no breakerd_fleet_*
#   fleetstat (a stand-in writer, brk_fleet_report()) connected, N = 10:
#                  every field, the drops by cause, the families with their
#                  values (state{state="connected"} 1, messages by
#                  direction, dropped by cause, lag 0.250 s, ...)
#   its writer gone: state off, the last counters still shown
#
# Uses its own segment /brk-fleetcfg-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_fleet_link.sh BCTL FLEETSTAT PYTHON3 CHECK_PROM [PROMTOOL]}
FLEETSTAT=${2:?}
PY=${3:?}
CHECK_PROM=${4:?}
PROMTOOL=${5:-}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brk-fleetcfg
writer=

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # b
json_get() { # FILE PYTHON-EXPR-ON-d
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

b config api --fleet on --fleet-probe on >/dev/null || bad "config api"

# --- no link ever ------------------------------------------------------------
b segment info >"$TMP/info" && grep -qx 'fleet link: *off' "$TMP/info" \
	&& ok "segment info: fleet link: off" || bad "segment info" "$(cat "$TMP/info")"
b inspect >"$TMP/insp" && grep -qx 'fleet link: *off' "$TMP/insp" \
	&& ok "inspect (no NAME): fleet link: off" || bad "inspect" "$(cat "$TMP/insp")"
b segment info --json >"$TMP/j" && [ "$(json_get "$TMP/j" 'd["fleet_link"]')" = "{'state': 'off'}" ] \
	&& ok "segment info --json: fleet_link {state: off}" || bad "segment info --json" "$(cat "$TMP/j")"
b metrics >"$TMP/m0" && ! grep -q '^breakerd_fleet_' "$TMP/m0" \
	&& ok "metrics: no breakerd_fleet_* without a link" || bad "metrics without a link has fleet families"

# --- a link connected ----------------------------------------------------------
"$FLEETSTAT" "$SHM" connected 60 10 >"$TMP/ready" &
writer=$!
until_s 5 grep -qs ready "$TMP/ready"
grep -q ready "$TMP/ready" || bad "fleetstat did not report"

b segment info >"$TMP/info"
want=(
	'^fleet link: +connected$' '^  host_id: +host-a$' '^  channel: +breakerd$'
	'^  since: +[0-9T:.-]+Z \(6[0-9]{4} ms ago\)$' '^  last_message: +1[5-9][0-9]{2} ms ago$'
	'^  lag_ms: +250 ' '^  published: +10$' '^  received: +11$' '^  applied: +12$'
	'^  ignored: +13 ' '^  dropped: +55 \(malformed 1, oversize 2, unknown 3, not_fleet 4, future 5, expired 6, kind 7, auth 8, replay 9, flood 10\)$'
	'^  reconnects: +14$' '^  probes: +won 15, lost 16$'
)
miss=
for re in "${want[@]}"; do grep -Eq -- "$re" "$TMP/info" || miss="$miss [$re]"; done
[ -z "$miss" ] && ok "segment info: the fleet link block, every field" \
	|| bad "segment info block: missing$miss" "$(cat "$TMP/info")"
b inspect >"$TMP/insp"
grep -Eq '^fleet link: +connected$' "$TMP/insp" && grep -Eq '^  probes: +won 15, lost 16$' "$TMP/insp" \
	&& ok "inspect (no NAME): the same block" || bad "inspect" "$(cat "$TMP/insp")"
b inspect --json >"$TMP/j"
got=$(json_get "$TMP/j" '(d["fleet_link"]["state"], d["fleet_link"]["host_id"], d["fleet_link"]["published"], d["fleet_link"]["drops"]["kind"], d["fleet_link"]["probe_lost"], d["fleet_link"]["lag_ms"], d["segment"]["used"])')
[ "$got" = "('connected', 'host-a', 10, 7, 16, 250, 1)" ] \
	&& ok "inspect --json: fleet_link and segment" || bad "inspect --json: $got"
b segment info --json >"$TMP/j"
got=$(json_get "$TMP/j" '(d["fleet_link"]["state"], d["fleet_link"]["received"], d["fleet_link"]["dropped"], 1000 <= d["fleet_link"]["last_message_age_ms"] < 60000)')
[ "$got" = "('connected', 11, 55, True)" ] && ok "segment info --json: fleet_link" \
	|| bad "segment info --json: $got"

b metrics >"$TMP/m1"
"$PY" "$CHECK_PROM" --breakers api "$TMP/m1" >"$TMP/cp" 2>&1 \
	&& ok "metrics with a link: check_prom.py accepts it" || bad "check_prom.py" "$(head -5 "$TMP/cp")"
if [ -n "$PROMTOOL" ]; then
	"$PROMTOOL" check metrics <"$TMP/m1" >"$TMP/pt" 2>&1 \
		&& ok "metrics with a link: promtool check metrics" || bad "promtool" "$(head -5 "$TMP/pt")"
fi
want=(
	'breakerd_fleet_state{state="off"} 0' 'breakerd_fleet_state{state="connected"} 1'
	'breakerd_fleet_state{state="down"} 0'
	'breakerd_fleet_messages_total{direction="published"} 10'
	'breakerd_fleet_messages_total{direction="received"} 11'
	'breakerd_fleet_messages_total{direction="applied"} 12'
	'breakerd_fleet_messages_total{direction="ignored"} 13'
	'breakerd_fleet_dropped_total{cause="malformed"} 1'
	'breakerd_fleet_dropped_total{cause="kind"} 7'
	'breakerd_fleet_dropped_total{cause="auth"} 8'
	'breakerd_fleet_lag_seconds 0.250' 'breakerd_fleet_reconnects_total 14'
	'breakerd_fleet_probe_elections_total{result="won"} 15'
	'breakerd_fleet_probe_elections_total{result="lost"} 16'
)
miss=
for l in "${want[@]}"; do grep -qxF -- "$l" "$TMP/m1" || miss="$miss [$l]"; done
grep -Eq '^breakerd_fleet_last_message_age_seconds 1\.[5-9][0-9]{2}$' "$TMP/m1" || miss="$miss [last_message_age]"
[ -z "$miss" ] && ok "metrics: the breakerd_fleet_* samples" \
	|| bad "metrics: missing$miss" "$(grep fleet "$TMP/m1")"

# --- the writer gone: off, the last counters kept -------------------------------
kill "$writer"; wait "$writer" 2>/dev/null; writer=
b segment info >"$TMP/info"
grep -Eq '^fleet link: +off \(the last link.s counters\)$' "$TMP/info" && grep -Eq '^  published: +10$' "$TMP/info" \
	&& ok "writer gone: off with the last counters" || bad "writer gone" "$(cat "$TMP/info")"
b metrics >"$TMP/m2"
grep -qxF 'breakerd_fleet_state{state="off"} 1' "$TMP/m2" && grep -qxF 'breakerd_fleet_state{state="connected"} 0' "$TMP/m2" \
	&& ok "metrics: state off 1 once the writer is gone" || bad "metrics after" "$(grep fleet_state "$TMP/m2")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
