#!/usr/bin/env bash
# breakers_room.sh BREAKERD BCTL - breakerd applies a breakers file that
# does not fit the segment's room not at all (issue 22): at start, 40
# sections into a 16-record segment exit 2 with the why logged (file,
# line of the first section that does not fit, "40 new records needed,
# 16 free") and no record written (it wrote the first 16); on SIGHUP the
# same file changes nothing, not even the sections before the first that
# does not fit, and the why is logged at level=warn: breakerd runs on
# with the settings applied before.
#
# Uses its own segment /brkbroom-$$ and removes it at the end.
set -u

BREAKERD=${1:?usage: breakers_room.sh BREAKERD BCTL}
BCTL=${2:?}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, until_s, scratch
scratch brkbroom
[ -n "${KEEP_TMP:-}" ] && trap - EXIT
CONF=$TMP/breakers.conf
LOG=$TMP/breakerd.log
DPID=

log_count_ge() { [ "$(grep -Ec -- "$2" "$LOG" 2>/dev/null)" -ge "$1" ]; }
wait_log() { until_s 10 log_count_ge "$@"; }
names() {
	"$BCTL" --shm "$SHM" list 2>/dev/null |
		awk 'NR > 1 && NF && $1 !~ /:$/ { print $1 }' | sort | tr '\n' ' '
}
ft() { "$BCTL" --shm "$SHM" inspect "$1" --json 2>/dev/null |
	sed -n 's/^ *"failure_threshold": \([0-9]*\),$/\1/p' | head -n 1; }

# forty FIRST: [breaker api] with failure_threshold FIRST, then 39 more.
forty() {
	local i
	printf '[breaker api]\nfailure_threshold = %s\n\n' "$1"
	for ((i = 2; i <= 40; i++)); do
		printf '[breaker s-%d]\nfailure_threshold = 4\n\n' "$i"
	done
}

# --- at start ------------------------------------------------------------------
forty 3 >"$CONF"
"$BREAKERD" --shm "$SHM" --capacity 16 --interval 50ms --breakers "$CONF" 2>"$LOG" &
bpid=$!
( sleep 10; kill "$bpid" 2>/dev/null ) >/dev/null 2>&1 &
killer=$!
wait "$bpid"
rc=$?
kill "$killer" 2>/dev/null
# the 17th section: line 1 + 16 * 3
if [ "$rc" -eq 2 ] &&
   grep -Eq "level=error msg=\"no room for the record: 40 new records needed, 16 free \(capacity 16, 0 used\)[^\"]*\" file=$CONF line=49 section=\"\[breaker s-17\]\"" "$LOG" &&
   grep -q 'msg="breakers file rejected, nothing of it applied"' "$LOG"; then
	ok "start with 40 sections for 16 records: exit 2, file, line and \"40 new records needed, 16 free\" logged"
else
	bad "start with 40 sections for 16 records" "exit $rc" "$(cat "$LOG")"
fi
n=$(names)
[ -z "$n" ] && ok "  nothing written (no record)" || bad "  nothing written at start" "records: $n"

# --- on SIGHUP -----------------------------------------------------------------
printf '[breaker api]\nfailure_threshold = 3\n' >"$CONF"
"$BREAKERD" --shm "$SHM" --interval 50ms --breakers "$CONF" 2>"$LOG" &
DPID=$!
wait_log 1 'msg="breakers file applied"' && [ "$(ft api)" = 3 ] &&
	ok "start with a file that fits: applied" || bad "start with a file that fits" "$(cat "$LOG")"
forty 7 >"$CONF"
kill -HUP "$DPID"
if wait_log 1 'level=warn msg="breakers file rejected, nothing of it applied".*kept="the settings applied before"' &&
   grep -Eq "level=warn msg=\"no room for the record: 39 new records needed, 15 free \(capacity 16, 1 used\)[^\"]*\" file=$CONF line=49 section=\"\[breaker s-17\]\"" "$LOG"; then
	ok "SIGHUP with 39 new sections for 15 free records: rejected, why logged at warn (file, line, "39 new records needed, 15 free")"
else
	bad "SIGHUP that does not fit: rejected at warn" "$(cat "$LOG")"
fi
n=$(names)
v=$(ft api)
[ "$n" = "api " ] && [ "$v" = 3 ] &&
	ok "  nothing changed: no new record, api keeps failure_threshold 3 (the file's first section said 7)" ||
	bad "  SIGHUP changed nothing" "records: $n" "api failure_threshold $v"
kill -0 "$DPID" 2>/dev/null && ok "  breakerd runs on" || bad "breakerd died on a reload that does not fit"
kill -TERM "$DPID"
wait "$DPID"
rc=$?
DPID=
[ "$rc" -eq 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM" "exit $rc"

echo "breakers_room: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
