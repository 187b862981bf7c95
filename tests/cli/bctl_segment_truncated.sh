#!/usr/bin/env bash
# bctl_segment_truncated.sh BCTL BREAKERD - a segment shorter than its
# header says (0 bytes included) is never re-initialised silently (issue
# 22): bctl and breakerd refuse it, say what happened (truncated, how many
# bytes, the live records lost when the header survived) and what to do
# (stop the users, bctl segment remove --force, restart breakerd), at warn
# level in breakerd's log; bctl no longer blames "a creator that died
# half-way" then. A segment whose creator really died half-way (its
# init-in-progress marker still set) is still told apart and repaired by
# breakerd.
#
# Uses its own segment /brktrunc-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_segment_truncated.sh PATH_TO_BCTL PATH_TO_BREAKERD}
BREAKERD=${2:?usage: bctl_segment_truncated.sh PATH_TO_BCTL PATH_TO_BREAKERD}
SHM=/brktrunc-$$
F=/dev/shm$SHM
TMP=$(mktemp -d /tmp/brktrunc.XXXXXX)
pass=0
fail=0
trap 'rm -f "$F"; rm -rf "$TMP"' EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad

# expect DESC CODE ERR_REGEX [NOT_REGEX] -- CMD...
expect() {
	local desc=$1 code=$2 ere=$3 nre=$4
	shift 5
	"$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		bad "$desc" "exit status $rc, want $code" "err: $(head -c 600 "$TMP/err")"
	elif [ -n "$ere" ] && ! grep -Eq -- "$ere" "$TMP/err"; then
		bad "$desc" "stderr: $(head -c 600 "$TMP/err")" "does not match: $ere"
	elif [ -n "$nre" ] && grep -Eq -- "$nre" "$TMP/err"; then
		bad "$desc" "stderr: $(head -c 600 "$TMP/err")" "must not match: $nre"
	else
		ok "$desc"
	fi
}

size() { stat -c %s "$F" 2>/dev/null; }
what_to_do="bctl --shm $SHM segment remove --force.*start breakerd"

fresh() { # a segment with a breaker open for an hour
	rm -f "$F"
	"$BCTL" --shm "$SHM" config pay --open 1h --max-open 2h >/dev/null &&
		"$BCTL" --shm "$SHM" trip pay --for 1h >/dev/null
}

# --- emptied to 0 bytes --------------------------------------------------------
fresh
truncate -s 0 "$F"
expect "bctl on a segment emptied to 0 bytes: truncated, what to do" 1 \
	"truncated: 0 bytes, less than its 4096-byte header, after it was made.*$what_to_do" \
	"died half-way" -- "$BCTL" --shm "$SHM" inspect pay
expect "bctl config (a would-be creator) refuses it too" 1 "truncated" "" -- \
	"$BCTL" --shm "$SHM" config other
expect "breakerd refuses it with a warn line, never re-creates it" 1 \
	"level=warn msg=\"segment truncated\".*truncated: 0 bytes" "created=true" -- \
	timeout 10 "$BREAKERD" --shm "$SHM"
[ "$(size)" = 0 ] && ok "the emptied segment is left as it is (0 bytes)" ||
	bad "the emptied segment is left as it is" "size $(size)"
expect "segment remove without --force says it cannot be checked" 1 \
	"cannot be checked.*truncated.*--force" "" -- "$BCTL" --shm "$SHM" segment remove
expect "segment remove --force removes it" 0 "" "" -- \
	"$BCTL" --shm "$SHM" segment remove --force

# --- cut short, header intact: the records lost are counted --------------------
fresh
full=$(size)
truncate -s $((full / 2)) "$F"
expect "a segment cut to half its size: bytes and live records lost" 1 \
	"truncated: $((full / 2)) bytes of the $full its header says, with 1 live records" \
	"" -- "$BCTL" --shm "$SHM" list
expect "breakerd: the same, at warn level" 1 "level=warn msg=\"segment truncated\"" \
	"created=true" -- timeout 10 "$BREAKERD" --shm "$SHM"

# --- emptied then re-grown: all zero, no creator at work -----------------------
fresh
truncate -s 0 "$F"
truncate -s "$full" "$F"
expect "emptied and re-grown to its size: all zero, truncated" 1 \
	"truncated: its header is all zero after it was made" "died half-way" -- \
	"$BCTL" --shm "$SHM" inspect pay
expect "breakerd does not re-initialise it" 1 "level=warn msg=\"segment truncated\"" \
	"created=true" -- timeout 10 "$BREAKERD" --shm "$SHM"

# --- a creator that died half-way (marker set): told apart, repaired -----------
rm -f "$F"
install -m 0700 /dev/null "$F" # what a creator leaves before sizing: u+x set
expect "a creator that died half-way is still told as such" 1 "died half-way" \
	"truncated" -- "$BCTL" --shm "$SHM" inspect pay
timeout 5 "$BREAKERD" --shm "$SHM" >"$TMP/out" 2>"$TMP/err" &
d=$!
if until_s 4 grep -q 'created=true' "$TMP/err"; then
	ok "breakerd repairs a half-made segment (created=true)"
else
	bad "breakerd repairs a half-made segment" "$(head -c 600 "$TMP/err")"
fi
kill "$d" 2>/dev/null; wait "$d" 2>/dev/null
mode=$(stat -c %a "$F")
[ "$mode" = 600 ] && ok "a made segment has no init marker (mode 600)" ||
	bad "a made segment has no init marker" "mode $mode"

# --- made, but the marker left set (creator died right after the magic) ---------
fresh
chmod 0700 "$F"
"$BCTL" --shm "$SHM" config pay >/dev/null 2>&1
mode=$(stat -c %a "$F")
[ "$mode" = 600 ] && ok "a read-write attach clears a marker left on a made segment" ||
	bad "a read-write attach clears a marker left on a made segment" "mode $mode"
truncate -s 0 "$F"
expect "... so a later truncation is reported as one" 1 "truncated: 0 bytes" \
	"died half-way" -- "$BCTL" --shm "$SHM" inspect pay


# --- cut short under a running breakerd ----------------------------------------
# Half the segment gone: breakerd touches only the header and the first
# records' pages, so no SIGBUS kills it; before, it went on heartbeating a
# segment every worker refuses (a fresh heartbeat that tells `segment
# remove` it is in use, and a /metrics that looks healthy). It must notice
# at its next scan, say so at warn level and exit 1, like at start. (64
# records: the pages it touches all lie in the first half.)
rm -f "$F"
"$BCTL" --shm "$SHM" segment create --capacity 64 >/dev/null
"$BCTL" --shm "$SHM" config pay >/dev/null
full=$(size)
"$BREAKERD" --shm "$SHM" --interval 50ms >"$TMP/out" 2>"$TMP/err" &
d=$!
if ! until_s 4 grep -q 'msg=starting' "$TMP/err"; then
	bad "a running breakerd: started" "$(head -c 600 "$TMP/err")"
fi
truncate -s $((full / 2)) "$F"
gone=0
for ((i = 0; i < 60; i++)); do
	kill -0 "$d" 2>/dev/null || { gone=1; break; }
	sleep 0.05
done
if [ "$gone" = 1 ]; then
	wait "$d"
	drc=$?
else
	kill "$d" 2>/dev/null; wait "$d" 2>/dev/null
	drc=running
fi
if [ "$drc" = 1 ] && grep -q "level=warn msg=\"segment truncated\".*truncated: $((full / 2)) bytes of the $full.*$what_to_do" "$TMP/err"; then
	ok "a running breakerd notices a segment cut short, says so at warn level, exits 1"
else
	bad "a running breakerd notices a segment cut short, says so at warn level, exits 1" \
		"exit: $drc (still running after 3 s if 'running')" "err: $(tail -c 600 "$TMP/err")"
fi

echo "# bctl_segment_truncated: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
