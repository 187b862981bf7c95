#!/usr/bin/env bash
# bctl_retire.sh BCTL - bctl retire: what it retires and why it keeps the
# others, its exit status, and its bad input (exit status AND the one line
# on stderr; a rejected command retires nothing).
#
# Uses its own segment /brkret-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_retire.sh PATH_TO_BCTL}
SHM=/brkret-$$
TMP=$(mktemp -d /tmp/brkret.XXXXXX)
pass=0
fail=0

cleanup() {
	rm -f "/dev/shm$SHM"
	rm -rf "$TMP"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad

run() {
	"$BCTL" --shm "$SHM" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# expect DESC CODE OUT_REGEX ERR_REGEX (empty: that stream must be empty)
expect() {
	local desc=$1 code=$2 ore=$3 ere=$4 err
	err=$(grep -v "^try 'bctl --help'\$" "$TMP/err")
	if [ "$rc" -ne "$code" ]; then
		bad "$desc" "exit status $rc, want $code" "out: $(head -c 300 "$TMP/out")" \
			"err: $(head -c 300 "$TMP/err")"
	elif [ -n "$ore" ] && ! grep -Eq -- "$ore" "$TMP/out"; then
		bad "$desc" "stdout: $(head -c 300 "$TMP/out")" "does not match: $ore"
	elif [ -z "$ere" ] && [ -n "$err" ]; then
		bad "$desc" "unexpected stderr: $err"
	elif [ -n "$ere" ] && ! printf '%s\n' "$err" | grep -Eq -- "$ere"; then
		bad "$desc" "stderr: $err" "does not match: $ere"
	elif [ "$code" -eq 2 ] && ! grep -q "^try 'bctl --help'\$" "$TMP/err"; then
		bad "$desc" "usage error without the --help hint"
	else
		ok "$desc"
	fi
}

exists() { # NAME: is it listed?
	"$BCTL" --shm "$SHM" list 2>/dev/null | grep -q "^$1 "
}

run config quiet; run config busy --max-concurrent 2; run config opened
run bucket lim --rate 5 --burst 2
run trip opened --for 1m

run retire
expect "no NAME and no --idle: usage error" 2 "" "every record needs --idle"
run retire --idle 0ms
expect "--idle 0: usage error" 2 "" "--idle must be at least 1ms"
run retire --idle soon
expect "--idle not a duration: usage error" 2 "" "--idle"
run retire 'bad name'
expect "a bad name: usage error" 2 "" "name"
exists quiet && ok "rejected commands retired nothing" || bad "rejected commands retired nothing"

run retire opened
expect "an open breaker is kept, saying why (exit 75)" 75 "^opened: kept: not closed \\(open\\)" ""
run retire nope
expect "an absent name: exit 1" 1 "" "no record named 'nope'"
run config fb; run fallback fb on
run retire fb
expect "a breaker in fallback is kept, saying why (exit 75)" 75 \
	"^fb: kept: in fallback \\(bctl fallback fb off first\\)" ""
run fallback fb off
run retire fb
expect "out of fallback: retired" 0 "^fb: retired\$" ""
run retire quiet
expect "a closed breaker without a lease: retired now" 0 "^quiet: retired\$" ""
exists quiet && bad "quiet is gone from the list" || ok "quiet is gone from the list"
run retire --idle 1h lim
expect "--idle: a record not watched that long is kept" 75 \
	"^lim: kept: active within the last 3600000 ms, or not watched that long yet" ""
run retire --idle 1h -v
expect "every record: none idle for 1h, -v says why" 0 \
	"retired 0, kept 3" ""
grep -q "^opened: kept: not closed" "$TMP/out" && ok "-v names the open one" ||
	bad "-v names the open one" "$(cat "$TMP/out")"
run reset opened # a transition: activity, so its watch starts over
sleep 0.3
run retire --idle 200ms
expect "every record idle for 200ms: retired, by name" 0 "retired 2, kept 1" ""
grep -q "^busy: retired (idle for at least 200 ms)" "$TMP/out" &&
	grep -q "^lim: retired (idle for at least 200 ms)" "$TMP/out" &&
	ok "each retirement is named" || bad "each retirement is named" "$(cat "$TMP/out")"
sleep 0.3
run retire --idle 200ms
expect "the reset one: idle for 200ms since the reset" 0 \
	"^opened: retired \\(idle for at least 200 ms\\)" ""
run events
expect "retirements are events" 0 "opened +closed -> closed +retired" ""
run config quiet
expect "a retired name can be created again" 0 "" ""

echo "# bctl_retire: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
