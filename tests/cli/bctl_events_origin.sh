#!/usr/bin/env bash
# bctl_events_origin.sh BCTL MKORIGIN - bctl events shows whose decision
# an event records: `origin=remote:HOST` (text) and "origin" (--json:
# "local" or "remote:HOST") for a fleet peer's decision applied here, and
# the fleet link's own event with link states.
#
# Uses its own segment /brkorigin-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_events_origin.sh BCTL MKORIGIN}
MKORIGIN=${2:?usage: bctl_events_origin.sh BCTL MKORIGIN}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkorigin

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run

if ! "$MKORIGIN" "$SHM" host-b >"$TMP/mk" 2>&1; then
	bad "mkorigin" "$(cat "$TMP/mk")"
	exit 1
fi
if ! run events; then
	bad "bctl events" "$(cat "$TMP/err")"
	exit 1
fi
grep -E 'fleet/a +closed -> open +trip .*origin=remote:host-b$' "$TMP/out" >/dev/null &&
	ok "the peer's trip says origin=remote:host-b" || bad "trip line" "$(cat "$TMP/out")"
grep -E 'fleet/a +open -> closed +reset' "$TMP/out" | grep -qv origin= &&
	ok "the local reset has no origin" || bad "reset line" "$(cat "$TMP/out")"
grep -E 'fleet/p +pace_cut +rate (49\.9[0-9]*|50\.000)/s +pid [0-9]+ +origin=remote:host-b$' "$TMP/out" >/dev/null &&
	ok "a peer's pace cut says origin=remote:host-b" || bad "pace_cut line" "$(cat "$TMP/out")"
grep -E '\(fleet link\) +off -> connecting +fleet_link' "$TMP/out" >/dev/null &&
	ok "the link's own event shows link states" || bad "fleet_link line" "$(cat "$TMP/out")"

if ! "$BCTL" --shm "$SHM" events --json >"$TMP/json" 2>"$TMP/err"; then
	bad "bctl events --json" "$(cat "$TMP/err")"
	exit 1
fi
got=$(/usr/bin/python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(" ".join("%s:%s:%s" % (e["reason"], e["origin"], e["to"]) for e in ev))
' "$TMP/json" 2>&1)
want="trip:remote:host-b:open reset:local:closed fleet_link:local:connecting pace_cut:remote:host-b:closed"
[ "$got" = "$want" ] && ok "--json: origin per event" || bad "--json origin" "got  $got" "want $want"

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
