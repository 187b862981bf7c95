#!/usr/bin/env bash
# bctl_apply_room.sh BCTL THIEF_SHIM RACE_CREATOR - a breakers file applies
# all or nothing against the segment's room (issue 22):
#  - 40 sections into a 16-record segment: --dry-run and the real apply
#    both exit 2 naming the file, the line of the first section that does
#    not fit and "40 new records needed, 16 free"; nothing is written
#    (it wrote the first 16 and exited 1, and --dry-run said exit 0);
#  - a write that fails because another process took the room between
#    the check and the write (THIEF_SHIM takes it at the 3rd create,
#    every run) rolls back every section written before: the records it
#    created are gone, an existing breaker's and bucket's settings are
#    what they were; exit 1, "nothing was applied", no "created" line;
#  - worker processes (RACE_CREATOR) creating records while bctl apply
#    runs, many rounds: each round the file is applied whole (exit 0) or
#    not at all (exit 1 or 2), never in part.
#
# Uses its own segments /brkroom-$$* and removes them at the end.
set -u

BCTL=${1:?usage: bctl_apply_room.sh BCTL THIEF_SHIM RACE_CREATOR SLOW_CLOCK_SHIM}
THIEF=${2:?}
CREATOR=${3:?}
SLOW=${4:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkroom
. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run

# names: the record names in the segment, one a line, sorted.
names() {
	"$BCTL" --shm "$SHM" list 2>/dev/null |
		awk 'NR > 1 && NF && $1 !~ /:$/ { print $1 }' | sort
}

# sections FILE FIRST LAST PREFIX: [breaker PREFIX-i] for i in FIRST..LAST.
sections() {
	local i
	for ((i = $2; i <= $3; i++)); do
		printf '[breaker %s-%d]\nfailure_threshold = 4\n\n' "$4" "$i"
	done >>"$1"
}

ft() { "$BCTL" --shm "$SHM" inspect "$1" --json 2>/dev/null |
	sed -n 's/^ *"failure_threshold": \([0-9]*\),$/\1/p' | head -n 1; }

# --- 40 sections into 16 records ----------------------------------------------
b segment create --capacity 16 >/dev/null || bad "segment create"
F=$TMP/forty.conf
: >"$F"
sections "$F" 1 40 s
# the 17th section is the first without a record: line 1 + 16 * 3
want="^bctl: $F:49: \[breaker s-17\] no room for the record: 40 new records needed, 16 free \(capacity 16, 0 used\)"
for mode in --dry-run ""; do
	desc="40 sections into 16 records, apply ${mode:-(real)}"
	# shellcheck disable=SC2086 # no mode: no argument
	run apply $mode "$F"
	if [ "$rc" -ne 2 ]; then
		bad "$desc: exit 2" "exit $rc" "stderr: $(head -c 400 "$TMP/err")" \
			"records: $(names | wc -l)"
	elif ! grep -Eq -- "$want" "$TMP/err" ||
	     ! tail -n 1 "$TMP/err" | grep -Eq "^bctl: $F: 1 error, nothing was applied\$"; then
		bad "$desc: names file, line, records needed and free" "$(cat "$TMP/err")"
	elif [ -s "$TMP/out" ] || [ -n "$(names)" ]; then
		bad "$desc: nothing written" "stdout: $(head -c 200 "$TMP/out")" "records: $(names | tr '\n' ' ')"
	else
		ok "$desc: exit 2, file:line and \"40 new records needed, 16 free\", nothing written"
	fi
done
# the same file fits exactly when it asks for no more than there is
: >"$F"
sections "$F" 1 16 s
run apply "$F"
[ "$rc" -eq 0 ] && [ "$(names | wc -l)" -eq 16 ] &&
	ok "16 sections into 16 records: applied" ||
	bad "16 sections into 16 records" "exit $rc" "$(cat "$TMP/err")"
rm -f "/dev/shm$SHM"

# --- no segment yet: --dry-run checks against the one apply would create -----
F=$TMP/big.conf
: >"$F"
sections "$F" 1 1030 s
want="^bctl: $F:3073: \[breaker s-1025\] no room for the record: 1030 new records needed, 1024 free \(capacity 1024, 0 used\)"
run apply --dry-run "$F"
if [ "$rc" -eq 2 ] && grep -Eq -- "$want" "$TMP/err" && [ ! -e "/dev/shm$SHM" ]; then
	ok "no segment: --dry-run of 1030 sections refused against the default 1024 records, no segment created"
else
	bad "no segment: --dry-run against the default capacity" "exit $rc" "$(head -c 400 "$TMP/err")"
fi
run apply "$F"
if [ "$rc" -eq 2 ] && grep -Eq -- "$want" "$TMP/err" && [ -z "$(names)" ]; then
	ok "  and the real apply (which creates the segment) refuses it the same way"
else
	bad "  the real apply with no segment" "exit $rc" "$(head -c 400 "$TMP/err")"
fi
rm -f "/dev/shm$SHM"

# --- a write fails after the check: everything before it rolled back --------
b segment create --capacity 16 >/dev/null || bad "segment create"
b config old --failure-threshold 9 >/dev/null
b bucket keep --rate 5 --burst 2 >/dev/null
F=$TMP/thief.conf
cat >"$F" <<'CONF'
[breaker old]
failure_threshold = 3

[bucket keep]
rate = 7

CONF
sections "$F" 1 5 n
before=$(names | tr '\n' ' ')
# (an ASan build: the shim comes before the runtime, which is allowed)
bctl_run env LD_PRELOAD="$THIEF" BRKTEST_THIEF_AT=3 "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" -- --shm "$SHM" apply "$F"
after=$(names | grep -v '^thief-' | tr '\n' ' ')
rate=$("$BCTL" --shm "$SHM" inspect keep --json | sed -n 's/^ *"rate_per_s": \([0-9.]*\),$/\1/p')
if [ "$rc" -ne 1 ]; then
	bad "a write fails after the check: exit 1" "exit $rc" "$(cat "$TMP/err")"
elif ! grep -Eq "^bctl: $F:13: \[breaker n-3\] no room for the record: another process took the room the check counted" "$TMP/err" ||
     ! tail -n 1 "$TMP/err" | grep -Fxq "bctl: $F: 1 error, nothing was applied (4 sections written before it put back as each was)"; then
	bad "a write fails after the check: the section and the rollback said" "$(cat "$TMP/err")"
else
	ok "a write fails after the check (the room taken at the 3rd create): exit 1, section named, rolled back"
fi
[ "$after" = "$before" ] && ok "  the records it created are retired again (names: $after)" ||
	bad "  created records retired" "before: $before" "after:  $after"
v=$(ft old)
[ "$v" = 9 ] && ok "  an existing breaker's setting changed before the failure is restored (failure_threshold 9)" ||
	bad "  existing breaker restored" "failure_threshold $v, want 9"
[ "$rate" = 5.0 ] && ok "  an existing bucket's setting changed before the failure is restored (rate 5)" ||
	bad "  existing bucket restored" "rate $rate, want 5.0"
[ -s "$TMP/out" ] && bad "  no created/updated line for a rolled-back apply" "$(cat "$TMP/out")" ||
	ok "  no created/updated line for a rolled-back apply"
rm -f "/dev/shm$SHM"

# --- workers create records while the file is applied: never in part ---------
# 63 free records; the file wants 40 new ones and changes "old"; three
# workers want 20 each. Whoever comes first fits; the file either fits
# whole or leaves no trace. The slow-clock shim (slow_clock.c) stretches
# bctl's reads, so the workers land in the apply at different points:
# before the check, between the check and the writes, during them.
F=$TMP/race.conf
printf '[breaker old]\nfailure_threshold = 3\n\n' >"$F"
sections "$F" 1 40 f
applied=0 refused=0 rolled=0 broken=0
for round in $(seq 1 20); do
	rm -f "/dev/shm$SHM" "$TMP/go"
	b segment create --capacity 64 >/dev/null || bad "segment create"
	b config old --failure-threshold 9 >/dev/null
	pids=()
	for w in 1 2 3; do
		"$CREATOR" "$SHM" "w$w" 20 "$TMP/go" "$round$w" >"$TMP/w$w" 2>&1 &
		pids+=($!)
	done
	: >"$TMP/go"
	bctl_run env LD_PRELOAD="$SLOW" BRKTEST_SLOW_CLOCK_US=300 "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" -- --shm "$SHM" apply "$F"
	wait "${pids[@]}"
	n=$(names | grep -c '^f-')
	v=$(ft old)
	if [ "$rc" -eq 0 ] && [ "$n" -eq 40 ] && [ "$v" = 3 ]; then
		applied=$((applied + 1))
	elif [ "$rc" -eq 2 ] && [ "$n" -eq 0 ] && [ "$v" = 9 ] &&
	     grep -q 'no room for the record: 40 new records needed' "$TMP/err"; then
		refused=$((refused + 1))
	elif [ "$rc" -eq 1 ] && [ "$n" -eq 0 ] && [ "$v" = 9 ] &&
	     tail -n 1 "$TMP/err" | grep -q 'nothing was applied'; then
		rolled=$((rolled + 1))
	else
		broken=$((broken + 1))
		bad "race round $round: all or nothing" "exit $rc, $n of 40 records, old failure_threshold $v" \
			"$(head -c 600 "$TMP/err")"
	fi
done
[ "$broken" -eq 0 ] &&
	ok "3 workers creating records during each of 20 applies: all or nothing every time (applied $applied, refused at the check $refused, rolled back $rolled)"

echo "bctl_apply_room: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
