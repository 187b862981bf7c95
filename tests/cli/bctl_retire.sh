#!/usr/bin/env bash
# bctl_retire.sh BCTL - bctl retire: what it retires and why it keeps the
# others, its exit status, and its bad input (exit status AND the one line
# on stderr; a rejected command retires nothing).
#
# Uses its own segment /brkret-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_retire.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkret

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, check_both

exists() { # NAME: is it listed?
	"$BCTL" --shm "$SHM" list 2>/dev/null | grep -q "^$1 "
}

run config quiet; run config busy --max-concurrent 2; run config opened
run bucket lim --rate 5 --burst 2
run trip opened --for 1m

run retire
check_both "no NAME and no --idle: usage error" 2 "" "every record needs --idle"
run retire --idle 0ms
check_both "--idle 0: usage error" 2 "" "--idle must be at least 1ms"
run retire --idle soon
check_both "--idle not a duration: usage error" 2 "" "--idle"
run retire 'bad name'
check_both "a bad name: usage error" 2 "" "name"
exists quiet && ok "rejected commands retired nothing" || bad "rejected commands retired nothing"

run retire opened
check_both "an open breaker is kept, saying why (exit 75)" 75 "^opened: kept: not closed \\(open\\)" ""
run retire nope
check_both "an absent name: exit 1" 1 "" "no record named 'nope'"
run config fb; run fallback fb on
run retire fb
check_both "a breaker in fallback is kept, saying why (exit 75)" 75 \
	"^fb: kept: in fallback \\(bctl fallback fb off first\\)" ""
run fallback fb off
run retire fb
check_both "out of fallback: retired" 0 "^fb: retired\$" ""
run retire quiet
check_both "a closed breaker without a lease: retired now" 0 "^quiet: retired\$" ""
exists quiet && bad "quiet is gone from the list" || ok "quiet is gone from the list"
run retire --idle 1h lim
check_both "--idle: a record not watched that long is kept" 75 \
	"^lim: kept: active within the last 3600000 ms, or not watched that long yet" ""
run retire --idle 1h -v
check_both "every record: none idle for 1h, -v says why" 0 \
	"retired 0, kept 3" ""
grep -q "^opened: kept: not closed" "$TMP/out" && ok "-v names the open one" ||
	bad "-v names the open one" "$(cat "$TMP/out")"
run reset opened # a transition: activity, so its watch starts over
sleep 0.3
run retire --idle 200ms
check_both "every record idle for 200ms: retired, by name" 0 "retired 2, kept 1" ""
grep -q "^busy: retired (idle for at least 200 ms)" "$TMP/out" &&
	grep -q "^lim: retired (idle for at least 200 ms)" "$TMP/out" &&
	ok "each retirement is named" || bad "each retirement is named" "$(cat "$TMP/out")"
sleep 0.3
run retire --idle 200ms
check_both "the reset one: idle for 200ms since the reset" 0 \
	"^opened: retired \\(idle for at least 200 ms\\)" ""
run events
check_both "retirements are events" 0 "opened +closed -> closed +retired" ""
run config quiet
check_both "a retired name can be created again" 0 "" ""

echo "# bctl_retire: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
