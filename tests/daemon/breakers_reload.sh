#!/usr/bin/env bash
# breakers_reload.sh BREAKERD BCTL WORKER - breakerd applies the breakers
# file at start and on SIGHUP, and a worker process that attached before
# sees each new setting: the declared setting wins over the worker's
# create-time config; a section removed is logged and its record kept;
# a bad file on SIGHUP is logged (file, line, key) and changes nothing;
# a bad file at start is exit 2 and changes nothing.
#
# Uses its own segment /brkreload-$$ and removes it at the end.
set -u

BREAKERD=${1:?usage: breakers_reload.sh BREAKERD BCTL WORKER}
BCTL=${2:?}
WORKER=${3:?}
SHM=/brkreload-$$
TMP=$(mktemp -d /tmp/brkreload.XXXXXX)
CONF=$TMP/breakers.conf
LOG=$TMP/breakerd.log
pass=0
fail=0
DPID=

cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	[ -n "${W_PID:-}" ] && kill "$W_PID" 2>/dev/null
	rm -f "/dev/shm$SHM"
	rm -rf "$TMP"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad

# wait_log N RE: until RE matches at least N lines of the log (10 s at most).
log_count_ge() { [ "$(grep -Ec -- "$2" "$LOG" 2>/dev/null)" -ge "$1" ]; }
wait_log() { until_s 10 log_count_ge "$@"; }

# seen: the failure_threshold the worker sees now.
seen() {
	local line
	echo >&"${W[1]}"
	read -r -t 10 line <&"${W[0]}" || line="(no answer)"
	echo "${line#failure_threshold }"
}

coproc W { exec "$WORKER" "$SHM" api; }
read -r -t 10 first <&"${W[0]}"
[ "$first" = ready ] && [ "$(seen)" = 9 ] &&
	ok "the worker created api with its own failure_threshold 9" ||
	bad "worker start" "$first"

cat >"$CONF" <<'EOF'
[breaker api]
failure_threshold = 3

[bucket keep]
rate = 5
burst = 2
EOF
"$BREAKERD" --shm "$SHM" --interval 50ms --breakers "$CONF" 2>"$LOG" &
DPID=$!
if wait_log 1 'msg="breakers file applied"' &&
   grep -q 'change="\[breaker api\] updated: failure_threshold 9 -> 3"' "$LOG"; then
	ok "start: the file applied, the change logged"
else
	bad "start" "$(cat "$LOG")"
fi
v=$(seen)
[ "$v" = 3 ] && ok "the worker sees the declared setting (3), not its create-time 9" ||
	bad "worker after start" "sees $v"

cat >"$CONF" <<'EOF'
[breaker api]
failure_threshold = 6
EOF
kill -HUP "$DPID"
if wait_log 2 'msg="breakers file applied"'; then
	ok "SIGHUP: applied again"
else
	bad "SIGHUP" "$(cat "$LOG")"
fi
v=$(seen)
[ "$v" = 6 ] && ok "the worker (attached before) sees the reloaded setting 6" ||
	bad "worker after SIGHUP" "sees $v"
grep -q 'change="\[bucket keep\] removed from the file: the record is kept as it is and no longer managed"' "$LOG" &&
	ok "the removed section is logged" || bad "removed section" "$(cat "$LOG")"
"$BCTL" --shm "$SHM" inspect keep --json 2>&1 | grep -q '"rate_per_s": 5.0' &&
	ok "  and its record is kept as it is" || bad "removed record kept"

cat >"$CONF" <<'EOF'
[breaker api]
failure_threshold = 0
EOF
kill -HUP "$DPID"
if wait_log 1 'msg="breakers file rejected, nothing of it applied".*kept="the settings applied before"' &&
   grep -Eq "^ts=[^ ]+ level=error msg=\"'0' is out of range[^\"]*\" file=$CONF line=2 section=\"\[breaker api\]\" key=failure_threshold\$" "$LOG"; then
	ok "SIGHUP with a bad file: rejected, file, line and key logged"
else
	bad "SIGHUP bad file" "$(cat "$LOG")"
fi
if grep -q '^breakerd: ' "$LOG"; then
	bad "SIGHUP per-line errors are logfmt lines (file, line, key, msg)" "$(grep '^breakerd: ' "$LOG")"
else
	ok "SIGHUP per-line errors are logfmt lines (file, line, key, msg)"
fi
v=$(seen)
[ "$v" = 6 ] && ok "  the worker still sees 6" || bad "after bad SIGHUP" "sees $v"

# SIGHUP with the file removed: rejected, nothing applied, the old settings stay
mv "$CONF" "$CONF.away"
kill -HUP "$DPID"
if wait_log 2 'msg="breakers file rejected, nothing of it applied".*kept="the settings applied before"' &&
   grep -Eq "level=error msg=\"cannot read $CONF: No such file or directory\" file=$CONF\$" "$LOG" &&
   ! grep -q 'applied in part' "$LOG"; then
	ok "SIGHUP with the file removed: rejected (cannot read FILE), old settings kept"
else
	bad "SIGHUP with the file removed: rejected (cannot read FILE)" "$(cat "$LOG")"
fi
mv "$CONF.away" "$CONF"
v=$(seen)
[ "$v" = 6 ] && ok "  the worker still sees 6 after the removed file" || bad "after SIGHUP of a removed file" "sees $v"
kill -0 "$DPID" 2>/dev/null && ok "  breakerd still runs" || bad "breakerd died on a bad file"

kill -TERM "$DPID"
wait "$DPID"
rc=$?
DPID=
[ "$rc" -eq 0 ] && ok "SIGTERM: exit 0" || bad "SIGTERM" "exit $rc"

"$BREAKERD" --shm "$SHM" --interval 50ms --breakers "$CONF" 2>"$TMP/bad.log" &
bpid=$!
( sleep 10; kill "$bpid" 2>/dev/null ) >/dev/null 2>&1 &
killer=$!
wait "$bpid"
rc=$?
kill "$killer" 2>/dev/null
if [ "$rc" -eq 2 ] && grep -q "file=$CONF line=2 section=\"\[breaker api\]\" key=failure_threshold" "$TMP/bad.log"; then
	ok "start with a bad file: exit 2, file, line and key named"
else
	bad "start with a bad file" "exit $rc" "$(cat "$TMP/bad.log")"
fi
v=$(seen)
[ "$v" = 6 ] && ok "  nothing applied: the worker still sees 6" || bad "after bad start" "sees $v"

"$BREAKERD" --shm "$SHM" --breakers "$TMP/absent.conf" 2>"$TMP/absent.log"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "msg=\"cannot read $TMP/absent.conf: No such file or directory\"" "$TMP/absent.log" &&
   grep -q 'msg="breakers file rejected, nothing of it applied"' "$TMP/absent.log" &&
   ! grep -q 'applied in part' "$TMP/absent.log"; then
	ok "--breakers of a missing file: cannot read FILE, rejected, exit 2"
else
	bad "--breakers of a missing file: cannot read FILE, rejected, exit 2" "exit $rc" "$(cat "$TMP/absent.log")"
fi
# Without --breakers: $BREAKERD_BREAKERS names the file, and set and empty
# no file at all. The suite sets it empty for every test (tests/meson.build,
# add_test_setup), so a host's own /etc/breakerd/breakers.conf never
# reaches a test's breakerd (it did: a file an operator wrote made every
# test's breakerd apply it, or exit 2).
[ "${BREAKERD_BREAKERS-unset}" = "" ] &&
	ok "the suite runs with \$BREAKERD_BREAKERS set and empty" ||
	bad "the suite's environment" "BREAKERD_BREAKERS='${BREAKERD_BREAKERS-unset}'"
BREAKERD_BREAKERS=$CONF "$BREAKERD" --shm "$SHM" 2>"$TMP/env.log"
rc=$?
[ "$rc" -eq 2 ] && grep -q "file=$CONF line=2" "$TMP/env.log" &&
	ok "\$BREAKERD_BREAKERS=FILE without --breakers: FILE is the breakers file" ||
	bad "\$BREAKERD_BREAKERS=FILE" "exit $rc" "$(cat "$TMP/env.log")"
BREAKERD_BREAKERS= timeout -s TERM 1 "$BREAKERD" --shm "$SHM" 2>"$TMP/none.log"
rc=$?
[ "$rc" -eq 124 ] && ! grep -q 'breakers file' "$TMP/none.log" &&
	ok "\$BREAKERD_BREAKERS empty: no breakers file, breakerd runs until stopped" ||
	bad "\$BREAKERD_BREAKERS empty" "exit $rc" "$(cat "$TMP/none.log")"

exec {W[1]}>&-
echo "breakers_reload: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
