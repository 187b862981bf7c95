#!/usr/bin/env bash
# bctl_fleet_notes.sh BCTL FLEETSTAT - bctl tells when a fleet setting does
# nothing yet (exit 0, the setting stored as given, a note on stderr):
#   fleet_probe on with fleet off (either given): "fleet_probe acts only
#     with fleet on"
#   --fleet on and no breakerd --fleet link on the segment now:
#     "no breakerd --fleet link on this segment now (fleet link: off): the
#      setting takes effect when one runs"
# for `bctl config`, `bctl pace --fleet on` (the link note) and for `bctl
# apply` (one note per section); no note
# with a link running (fleetstat: a stand-in writer of the link's status)
# or for other settings. Segment /brk-fleetnote-$$, removed at the end.
set -u

BCTL=${1:?usage: bctl_fleet_notes.sh BCTL FLEETSTAT}
FLEETSTAT=${2:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brk-fleetnote
writer=
PROBE_NOTE="fleet_probe acts only with fleet on"
LINK_NOTE="no breakerd --fleet link on this segment now (fleet link: off): the setting takes effect when one runs"

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # b, run
setting() { b inspect "$1" | awk -v k="$2:" '$1 == k { print $2; exit }'; }

# --- config -------------------------------------------------------------------
run config api --fleet-probe on && ok "config --fleet-probe on without fleet: exit 0" ||
	bad "config --fleet-probe on: exit $?" "$(cat "$TMP/err")"
[ "$(cat "$TMP/err")" = "bctl: api: $PROBE_NOTE" ] && ok "config: note '$PROBE_NOTE'" ||
	bad "config --fleet-probe note" "$(cat "$TMP/err")"
[ "$(setting api fleet_probe)" = on ] && ok "config: fleet_probe stored on all the same" ||
	bad "fleet_probe stored" "$(b inspect api)"

run config api --fleet on && ok "config --fleet on without a link: exit 0" ||
	bad "config --fleet on: exit $?" "$(cat "$TMP/err")"
[ "$(cat "$TMP/err")" = "bctl: api: $LINK_NOTE" ] && ok "config: note '$LINK_NOTE'" ||
	bad "config --fleet on note" "$(cat "$TMP/err")"
[ "$(setting api fleet)" = on ] && ok "config: fleet stored on" || bad "fleet stored" "$(b inspect api)"

run config other --failure-threshold 3 && [ ! -s "$TMP/err" ] &&
	ok "config of other settings: no note" || bad "config other: note or error" "$(cat "$TMP/err")"
run config api --fleet off && [ "$(cat "$TMP/err")" = "bctl: api: $PROBE_NOTE" ] &&
	ok "config --fleet off with fleet_probe on: noted (fleet_probe now acts not)" ||
	bad "config --fleet off" "$(cat "$TMP/err")"

# --- pace --------------------------------------------------------------------
run pace ing --ceiling 10 --fleet on && [ "$(cat "$TMP/err")" = "bctl: ing: $LINK_NOTE" ] &&
	ok "pace --fleet on without a link (create): noted" || bad "pace create note" "$(cat "$TMP/err")"
run pace ing --fleet on && [ "$(cat "$TMP/err")" = "bctl: ing: $LINK_NOTE" ] &&
	ok "pace --fleet on without a link (update): noted" || bad "pace update note" "$(cat "$TMP/err")"
run pace ing --burst 3 && [ ! -s "$TMP/err" ] &&
	ok "pace of other settings: no note" || bad "pace other: note" "$(cat "$TMP/err")"
run pace ing --fleet off && [ ! -s "$TMP/err" ] &&
	ok "pace --fleet off: no note" || bad "pace --fleet off: note" "$(cat "$TMP/err")"

# --- apply --------------------------------------------------------------------
cat >"$TMP/bf" <<'BF'
[breaker p1]
fleet_probe = on

[breaker f1]
fleet = on
fleet_probe = on

[breaker plain]
failure_threshold = 4
BF
run apply "$TMP/bf" && ok "apply: exit 0" || bad "apply: exit $?" "$(cat "$TMP/err")"
printf 'bctl: p1: %s\nbctl: f1: %s\n' "$PROBE_NOTE" "$LINK_NOTE" >"$TMP/want"
diff "$TMP/want" "$TMP/err" >"$TMP/diff" && ok "apply: one note per section that needs one" ||
	bad "apply notes" "$(cat "$TMP/diff")"
[ "$(setting p1 fleet_probe)" = on ] && [ "$(setting f1 fleet)" = on ] &&
	ok "apply: the settings stored as given" || bad "apply stored" "$(b inspect p1)" "$(b inspect f1)"

# --- a link running: no link note ---------------------------------------------
"$FLEETSTAT" "$SHM" connected 60 >"$TMP/ready" &
writer=$!
until_s 5 grep -qs ready "$TMP/ready"
grep -q ready "$TMP/ready" || bad "fleetstat did not report"
run config f2 --fleet on --fleet-probe on && [ ! -s "$TMP/err" ] &&
	ok "config --fleet on with a link connected: no note" || bad "config with link" "$(cat "$TMP/err")"
run config f3 --fleet-probe on && [ "$(cat "$TMP/err")" = "bctl: f3: $PROBE_NOTE" ] &&
	ok "with a link: --fleet-probe without fleet still noted" || bad "probe note with link" "$(cat "$TMP/err")"

echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
