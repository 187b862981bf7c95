#!/usr/bin/env bash
# bctl_apply.sh BCTL - `bctl apply FILE [--dry-run]`, the breakers file:
# a good file creates and updates; a bad one (bad value, unknown key or
# section, a combination the library refuses, a record of another kind,
# a setting needed to create missing) exits 2 naming file, line and key
# and changes nothing, not even the sections before the bad one;
# --dry-run says what it would do and changes nothing.
#
# Uses its own segment /brkapply-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_apply.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkapply

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, bctl_run, stored

# The settings of everything in the segment: bctl list, and each
# breaker's config block.
snap() {
	"$BCTL" --shm "$SHM" list 2>&1 | grep -v '^breakerd:'
	for n in api db; do
		"$BCTL" --shm "$SHM" inspect "$n" --json 2>/dev/null |
			sed -n '/"config"/,/}/p'
	done
}

# file NAME: write stdin to $TMP/NAME.conf
file() { cat >"$TMP/$1.conf"; }

# rejected DESC FILE RE...: apply FILE exits 2, stderr matches every RE
# (in order of the lines), ends with "nothing was applied", and the
# segment's settings are what they were.
rejected() {
	local desc=$1 f=$TMP/$2.conf re before after
	shift 2
	before=$(snap)
	run apply "$f"
	after=$(snap)
	if [ "$rc" -ne 2 ]; then
		bad "$desc" "exit $rc, want 2" "stdout: $(head -c 300 "$TMP/out")" \
			"stderr: $(head -c 300 "$TMP/err")"
		return
	fi
	for re in "$@"; do
		if ! grep -Eq -- "$re" "$TMP/err"; then
			bad "$desc" "stderr does not match: $re" "$(cat "$TMP/err")"
			return
		fi
	done
	if ! tail -n 1 "$TMP/err" | grep -Eq "^bctl: $f: [0-9]+ errors?, nothing was applied\$"; then
		bad "$desc" "last line: $(tail -n 1 "$TMP/err")"
	elif [ "$before" != "$after" ]; then
		bad "$desc" "the segment changed:" "$(diff <(echo "$before") <(echo "$after"))"
	elif [ -s "$TMP/out" ]; then
		bad "$desc" "stdout not empty: $(cat "$TMP/out")"
	else
		ok "$desc"
	fi
}

# --- a good file ---------------------------------------------------------------
file good <<'EOF'
# the declared breakers
[breaker api]
failure_threshold = 3
open = 10s        ; a comment after the value
max_concurrent = 8
hold_histogram = on

[breaker db]
failure_rate = 50
window = 20s

[bucket ingest]
rate = 50
burst = 10

[budget retries]
ratio = 0.1

[pace upstream]
ceiling = 100
floor = 5
EOF

bctl_run env BREAKERD_SHM=bad -- apply --dry-run "$TMP/good.conf"
if [ "$rc" -eq 2 ] && grep -q "invalid segment name 'bad' (from \$BREAKERD_SHM)" "$TMP/err"; then
	ok "a bad \$BREAKERD_SHM: apply says the name came from there, exit 2"
else
	bad "a bad \$BREAKERD_SHM in apply" "rc=$rc" "$(cat "$TMP/err")"
fi

run apply --dry-run "$TMP/good.conf"
if [ "$rc" -eq 0 ] && [ ! -e "/dev/shm$SHM" ] &&
   grep -qx '\[breaker api\] would be created: failure_threshold 3, open_ms 10000, max_concurrent 8, hold_histogram on' "$TMP/out" &&
   [ "$(grep -c 'would be created' "$TMP/out")" -eq 5 ]; then
	ok "dry-run on an absent segment: says what it would create, creates no segment"
else
	bad "dry-run on an absent segment" "rc=$rc" "$(cat "$TMP/out" "$TMP/err")"
fi

run apply "$TMP/good.conf"
if [ "$rc" -eq 0 ] && [ ! -s "$TMP/err" ] &&
   [ "$(grep -c ' created' "$TMP/out")" -eq 5 ]; then
	ok "apply: five sections created"
else
	bad "apply" "rc=$rc" "$(cat "$TMP/out" "$TMP/err")"
fi
# a created section's line lists every setting it declared (issue msg12-1)
if grep -qx '\[breaker api\] created: failure_threshold 3, open_ms 10000, max_concurrent 8, hold_histogram on' "$TMP/out" &&
   grep -qx '\[breaker db\] created: failure_rate_pct 50, window_ms 20000' "$TMP/out" &&
   grep -qx '\[pace upstream\] created: ceiling 100/s, floor 5/s' "$TMP/out"; then
	ok "created_line_lists_every_declared_setting"
else
	bad "created_line_lists_every_declared_setting" "$(cat "$TMP/out")"
fi
stored "  api: failure_threshold 3" api '"failure_threshold": 3,'
stored "  api: open 10s" api '"open_ms": 10000,'
stored "  api: max_concurrent 8" api '"max_concurrent": 8'
stored "  api: hold_histogram on" api '"hold_histogram": true'
stored "  db: hold_histogram off (the default)" db '"hold_histogram": false'
stored "  db: failure_rate 50" db '"failure_rate_pct": 50,'
stored "  ingest: rate 50, burst 10" ingest '"rate_per_s": 50.0,'
stored "  retries: ratio 0.1, floor the default" retries '"ratio": 0.1,'
stored "  upstream: a pace, ceiling 100" upstream '"ceiling": 100.0,'

run apply "$TMP/good.conf"
if [ "$rc" -eq 0 ] && [ "$(grep -c ' unchanged$' "$TMP/out")" -eq 5 ]; then
	ok "applied again: all five unchanged"
else
	bad "applied again" "rc=$rc" "$(cat "$TMP/out" "$TMP/err")"
fi

# --- a declared setting wins over what a worker created; others are kept -------
run config api --failure-threshold 9 --success-threshold 2
run apply "$TMP/good.conf"
if [ "$rc" -eq 0 ] && grep -qx '\[breaker api\] updated: failure_threshold 9 -> 3' "$TMP/out"; then
	ok "a changed declared setting is put back, and the line says what changed"
else
	bad "declared setting put back" "$(cat "$TMP/out" "$TMP/err")"
fi
stored "  the undeclared success_threshold is kept" api '"success_threshold": 2,'

# --- dry-run changes nothing ---------------------------------------------------
sed 's/^failure_threshold = 3/failure_threshold = 4/; s/^rate = 50/rate = 60/' \
	"$TMP/good.conf" >"$TMP/changed.conf"
before=$(snap)
run apply --dry-run "$TMP/changed.conf"
after=$(snap)
if [ "$rc" -eq 0 ] && [ "$before" = "$after" ] &&
   grep -qx '\[breaker api\] would be updated: failure_threshold 3 -> 4' "$TMP/out" &&
   grep -q '^\[bucket ingest\] would be updated: rate 50/s -> 60/s' "$TMP/out"; then
	ok "dry-run: says what would change, changes nothing"
else
	bad "dry-run" "rc=$rc" "$(cat "$TMP/out" "$TMP/err")" \
		"$(diff <(echo "$before") <(echo "$after"))"
fi

# --- bad files: exit 2, file, line and key named, nothing applied ----------------
# The first section is a valid change: it must not be applied either.
file badvalue <<'EOF'
[breaker api]
failure_threshold = 4

[bucket ingest]
rate = fast
EOF
rejected "a bad value (after a good change): line and key named" badvalue \
	"^bctl: $TMP/badvalue.conf:5: \[bucket ingest\] rate: 'fast' is not a number"

file badbool <<'EOF'
[breaker api]
hold_histogram = yes
EOF
rejected "hold_histogram takes on or off" badbool \
	"^bctl: $TMP/badbool.conf:2: \[breaker api\] hold_histogram: 'yes' is not on or off"

# bctl config --hold-histogram: on|off, shown by inspect (text and --json)
run config db --hold-histogram on
# config says what changed, in apply's words (issue msg12-3)
if [ "$rc" -eq 0 ] && grep -qx 'db: updated: hold_histogram off -> on' "$TMP/out"; then
	ok "config_change_says_what_changed"
else
	bad "config_change_says_what_changed" "rc=$rc" "$(cat "$TMP/out" "$TMP/err")"
fi
if [ "$rc" -eq 0 ] && "$BCTL" --shm "$SHM" inspect db 2>&1 | grep -Eq '^  hold_histogram: +on$'; then
	ok "config --hold-histogram on: inspect shows it"
else
	bad "config --hold-histogram on" "rc=$rc" "$(cat "$TMP/err")" \
		"$("$BCTL" --shm "$SHM" inspect db 2>&1 | grep hold)"
fi
stored "  db: hold_histogram on (--json)" db '"hold_histogram": true'
run config db --hold-histogram off
grep -qx 'db: updated: hold_histogram on -> off' "$TMP/out" && ok "  config: hold_histogram on -> off" ||
	bad "  config: hold_histogram on -> off" "$(cat "$TMP/out" "$TMP/err")"
run config db --hold-histogram off
grep -qx 'db: unchanged' "$TMP/out" && ok "  config with the stored value: unchanged" ||
	bad "  config with the stored value: unchanged" "$(cat "$TMP/out" "$TMP/err")"
run config db
grep -qx 'db: unchanged' "$TMP/out" && ok "  config with no setting: unchanged" ||
	bad "  config with no setting: unchanged" "$(cat "$TMP/out" "$TMP/err")"
stored "  db: hold_histogram off again" db '"hold_histogram": false'
run config db --hold-histogram 1
if [ "$rc" -eq 2 ] && grep -q "^bctl: --hold-histogram: '1' is not on or off" "$TMP/err"; then
	ok "config --hold-histogram 1: usage error naming the value"
else
	bad "config --hold-histogram 1" "rc=$rc" "$(cat "$TMP/err")"
fi

file badkey <<'EOF'
[breaker api]
failure_threshold = 4
failure-treshold = 4
EOF
rejected "an unknown key" badkey \
	"^bctl: $TMP/badkey.conf:3: \[breaker api\] failure-treshold: no such setting of a breaker"

file twice <<'EOF'
[breaker api]
failure_threshold = 4
failure_threshold = 5
EOF
rejected "a key set twice" twice \
	"^bctl: $TMP/twice.conf:3: \[breaker api\] failure_threshold: set twice \(first at line 2\)"

file dupsec <<'EOF'
[breaker api]
failure_threshold = 4
[bucket api]
rate = 5
burst = 1
EOF
rejected "a record name declared twice" dupsec \
	"^bctl: $TMP/dupsec.conf:3: \[bucket api\]: 'api' is already declared at line 1"

file kind <<'EOF'
[breaker api]
failure_threshold = 4
[widget w]
size = 1
EOF
rejected "an unknown section kind" kind "^bctl: $TMP/kind.conf:3: \[widget w\]: unknown section"

file badname <<'EOF'
[breaker api]
failure_threshold = 4
[breaker bad name!]
EOF
rejected "a bad record name" badname "^bctl: $TMP/badname.conf:3: \[breaker bad name!\]: unexpected text"

file outside <<'EOF'
failure_threshold = 4
[breaker api]
failure_threshold = 4
EOF
rejected "a key before any section" outside "^bctl: $TMP/outside.conf:1: failure_threshold: a key outside a section"

file syntax <<'EOF'
[breaker api]
failure_threshold = 4
this is not ini
EOF
rejected "a line that is neither section nor key" syntax "^bctl: $TMP/syntax.conf:3: syntax error"

file combo <<'EOF'
[breaker api]
failure_threshold = 4

[breaker db]
slow_call = 2s
EOF
# slow_call needs slow_rate, which is not declared: slow_call's line, the file's words
rejected "slow_call without slow_rate: slow_call's line and key, the file's words" combo \
	"^bctl: $TMP/combo.conf:5: \[breaker db\] slow_call: slow_call = 2s needs slow_rate \(1-100\) too\$"

file wrongkind <<'EOF'
[breaker api]
failure_threshold = 4

[bucket db]
rate = 5
burst = 2
EOF
rejected "a section whose record is of another kind" wrongkind \
	"^bctl: $TMP/wrongkind.conf:4: \[bucket db\] the segment's record 'db' is of another kind"

file pacekind <<'EOF'
[breaker api]
failure_threshold = 4
[bucket upstream]
rate = 5
EOF
rejected "a [bucket] for a pace" pacekind \
	"^bctl: $TMP/pacekind.conf:3: \[bucket upstream\] 'upstream' is a pace"

file needs <<'EOF'
[breaker api]
failure_threshold = 4
[bucket fresh]
rate = 5
[pace fresh2]
floor = 1
EOF
# the FILE:LINE: [kind NAME] key: why form, the key the one missing (issue msg12-2)
rejected "missing_create_setting_names_its_key: a new bucket without burst, a new pace without ceiling" needs \
	"^bctl: $TMP/needs.conf:3: \\[bucket fresh\\] burst: needed to create the bucket \\(no such bucket: rate and burst are both needed\\)\$" \
	"^bctl: $TMP/needs.conf:5: \\[pace fresh2\\] ceiling: needed to create the pace \\(no such pace\\)\$" \
	"2 errors, nothing was applied"

file floor <<'EOF'
[pace p9]
ceiling = 5
floor = 9
EOF
rejected "a pace's floor above its ceiling" floor \
	"^bctl: $TMP/floor.conf:3: \[pace p9\] floor: 9 is above ceiling \(line 2\) 5"

printf '[breaker api]\nfailure_threshold = 4\nopen = %s\n' "$(head -c 400 /dev/zero | tr '\0' 1)s" >"$TMP/long.conf"
rejected "a line too long" long "^bctl: $TMP/long.conf:3: line longer than"

# a missing file, a directory: "cannot read FILE: why", no line 0, exit 2
run apply "$TMP/nonexistent.conf"
if [ "$rc" -eq 2 ] && grep -qx "bctl: cannot read $TMP/nonexistent.conf: No such file or directory" "$TMP/err" &&
   ! grep -q "applied in part" "$TMP/err" && [ ! -s "$TMP/out" ]; then
	ok "missing file: cannot read FILE: No such file or directory, exit 2"
else
	bad "missing file: cannot read FILE" "rc=$rc" "$(cat "$TMP/err")"
fi
mkdir -p "$TMP/adir"
run apply --dry-run "$TMP/adir"
if [ "$rc" -eq 2 ] && grep -qx "bctl: cannot read $TMP/adir: Is a directory" "$TMP/err" &&
   ! grep -q ':0:' "$TMP/err"; then
	ok "directory as FILE: cannot read DIR: Is a directory, no line 0, exit 2"
else
	bad "directory as FILE: cannot read DIR" "rc=$rc" "$(cat "$TMP/err")"
fi
run apply
if [ "$rc" -eq 2 ] && grep -q "^bctl: apply: missing FILE" "$TMP/err"; then
	ok "no FILE: usage error"
else
	bad "no FILE" "rc=$rc" "$(cat "$TMP/err")"
fi
run apply --dry-run "$TMP/badvalue.conf"
if [ "$rc" -eq 2 ] && grep -q "badvalue.conf:5: \[bucket ingest\] rate" "$TMP/err"; then
	ok "dry-run of a bad file: the same errors, exit 2"
else
	bad "dry-run of a bad file" "rc=$rc" "$(cat "$TMP/err")"
fi

# --- open above the default max_open: open's line and key, the file's words ----
file openmax <<'EOF'
[breaker z]
failure_threshold = 2
open = 20m
EOF
rejected "open above max_open: open's line and key, in the file's words" openmax \
	"^bctl: $TMP/openmax.conf:3: \[breaker z\] open: open = 20m is more than max_open \(10m, the default\); raise max_open too\$"
if grep -q 'max_open_ms\|--slow\|max-open' "$TMP/err"; then
	bad "  no library or option names in the message" "$(cat "$TMP/err")"
else
	ok "  no library or option names in the message"
fi

# --- every error at once: syntax and semantic ones in one run ------------------
# (a section with an error of its own is not checked against the segment:
# its settings are not all known; the report says which)
file allerrs <<'EOF'
[breaker api]
failure_threshold = 0
this is not ini
nor is this

[breaker z]
open = 20m

[bucket fresh]
rate = 5
EOF
rejected "every error at once: a bad value, a syntax error and the semantic ones" allerrs \
	"^bctl: $TMP/allerrs.conf:2: \[breaker api\] failure_threshold: '0' is out of range" \
	"^bctl: $TMP/allerrs.conf:3: syntax error" \
	"^bctl: $TMP/allerrs.conf:4: syntax error" \
	"^bctl: $TMP/allerrs.conf:7: \[breaker z\] open: open = 20m is more than max_open" \
	"^bctl: $TMP/allerrs.conf:9: \[bucket fresh\] burst: needed to create the bucket" \
	"^bctl: $TMP/allerrs.conf: not checked against the segment: \[breaker api\] \(it has an error above\)\$" \
	"5 errors, nothing was applied"

# --- a pace whose floor is stored rounded: unchanged when applied again ---------
file pace7 <<'EOF'
[pace upstream]
ceiling = 100
floor = 7
EOF
run apply "$TMP/pace7.conf"
if [ "$rc" -eq 0 ] && grep -qx '\[pace upstream\] updated: floor 5/s -> 7/s' "$TMP/out"; then
	ok "pace update line says what changed (floor 5/s -> 7/s)"
else
	bad "pace update line says what changed" "rc=$rc" "$(cat "$TMP/out" "$TMP/err")"
fi
run apply "$TMP/pace7.conf"
if [ "$rc" -eq 0 ] && grep -qx '\[pace upstream\] unchanged' "$TMP/out"; then
	ok "pace floor 7 applied again: unchanged (the stored value is compared)"
else
	bad "pace floor 7 applied again: unchanged" "$(cat "$TMP/out" "$TMP/err")"
fi
run apply --dry-run "$TMP/pace7.conf"
if [ "$rc" -eq 0 ] && grep -qx '\[pace upstream\] unchanged' "$TMP/out"; then
	ok "pace floor 7, dry-run: unchanged"
else
	bad "pace floor 7, dry-run: unchanged" "$(cat "$TMP/out" "$TMP/err")"
fi
file budget2 <<'EOF'
[budget retries]
ratio = 0.2
EOF
run apply "$TMP/budget2.conf"
if [ "$rc" -eq 0 ] && grep -qx '\[budget retries\] updated: ratio 0.1 -> 0.2' "$TMP/out"; then
	ok "budget update line names only what changed"
else
	bad "budget update line names only what changed" "$(cat "$TMP/out" "$TMP/err")"
fi

# --- the fleet keys (issue 13): [breaker] fleet, fleet_probe; [pace] fleet ----
file fleet <<'EOF'
[breaker fleetapi]
fleet = on
fleet_probe = on

[pace fleetpace]
ceiling = 10
fleet = on
EOF
run apply "$TMP/fleet.conf"
if [ "$rc" -eq 0 ] && grep -qx '\[breaker fleetapi\] created: fleet on, fleet_probe on' "$TMP/out" &&
   grep -qx '\[pace fleetpace\] created: ceiling 10/s, fleet on' "$TMP/out"; then
	ok "fleet keys: created lines name them"
else
	bad "fleet keys: created" "rc=$rc" "$(cat "$TMP/out" "$TMP/err")"
fi
stored "  fleetapi: fleet, fleet_probe stored" fleetapi '"fleet_probe": true'
stored "  fleetpace: fleet stored" fleetpace '"fleet": true'
file fleet2 <<'EOF'
[breaker fleetapi]
fleet_probe = off

[pace fleetpace]
fleet = off
EOF
run apply "$TMP/fleet2.conf"
if [ "$rc" -eq 0 ] && grep -qx '\[breaker fleetapi\] updated: fleet_probe on -> off' "$TMP/out" &&
   grep -qx '\[pace fleetpace\] updated: fleet on -> off' "$TMP/out"; then
	ok "fleet keys: update lines name only what changed"
else
	bad "fleet keys: updated" "rc=$rc" "$(cat "$TMP/out" "$TMP/err")"
fi
stored "  fleetapi: fleet kept on" fleetapi '"fleet": true'
file badfleet <<'EOF'
[pace fleetpace]
fleet = maybe
EOF
rejected "[pace] fleet takes on or off" badfleet \
	"^bctl: $TMP/badfleet.conf:2: \[pace fleetpace\] fleet: 'maybe' is not on or off"

echo "bctl_apply: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
