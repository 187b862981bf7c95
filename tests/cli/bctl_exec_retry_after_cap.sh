#!/usr/bin/env bash
# bctl_exec_retry_after_cap.sh BCTL - one output line cannot open a breaker
# for years (issue 22): a Retry-After of 10^12 s, a year-9999 HTTP-date or
# "try again in 10^12 seconds" in a command's output opens the breaker for
# at most its max_open_ms (600000 by default; 5000 set here for one), not
# BRK_MAX_DURATION_MS (8.7 years); trip --for is capped alike.
#
# Uses its own segment /brkracap-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_exec_retry_after_cap.sh PATH_TO_BCTL}
SHM=/brkracap-$$
pass=0
fail=0
trap 'rm -f "/dev/shm$SHM"' EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad

field() { # NAME FIELD: the value of FIELD in `bctl inspect NAME`
	"$BCTL" --shm "$SHM" inspect "$1" | awk -v f="$2:" '$1 == f { print $2; exit }'
}

# capped DESC NAME MAX: NAME is open for at most MAX ms (and for a while)
capped() {
	local st left
	st=$(field "$2" state)
	left=$(field "$2" open_remaining_ms)
	if [ "$st" = open ] && [ -n "$left" ] && [ "$left" -le "$3" ] &&
		[ "$left" -gt $(($3 - 60000 > 0 ? $3 - 60000 : 0)) ]; then
		ok "$1: open_remaining_ms $left <= max_open $3"
	else
		bad "$1" "state '$st', open_remaining_ms '$left', want open and <= $3"
	fi
}

# the issue's reproduction, as written
"$BCTL" --shm "$SHM" exec r1 -- printf 'HTTP/1.1 429 x\r\nRetry-After: 1000000000000\r\n\r\n' >/dev/null
capped "Retry-After: 10^12 s" r1 600000

"$BCTL" --shm "$SHM" exec r2 -- printf 'HTTP/1.1 429 x\r\nRetry-After: Fri, 31 Dec 9999 23:59:59 GMT\r\n\r\n' >/dev/null
capped "Retry-After: a year-9999 HTTP-date" r2 600000

"$BCTL" --shm "$SHM" exec r3 -- sh -c 'echo "error: try again in 1000000000000 seconds" >&2; exit 1' 2>/dev/null
capped "try again in 10^12 seconds" r3 600000

"$BCTL" --shm "$SHM" config r4 --open 1s --max-open 5s >/dev/null
"$BCTL" --shm "$SHM" exec r4 -- printf 'HTTP/1.1 429 x\r\nRetry-After: 1000000000000\r\n\r\n' >/dev/null
capped "a breaker's own max_open (5 s)" r4 5000

"$BCTL" --shm "$SHM" config r5 --open 1s --max-open 5s >/dev/null
out=$("$BCTL" --shm "$SHM" trip r5 --for 3000d)
capped "trip --for 3000d" r5 5000
# bctl says the period it set, not the one asked for
case $out in
"r5: open for 5000 ms (capped at max_open)") ok "trip --for 3000d reports the capped period: $out" ;;
*) bad "trip --for 3000d reports the capped period" "printed '$out'" ;;
esac

echo "# bctl_exec_retry_after_cap: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
