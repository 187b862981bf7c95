#!/usr/bin/env bash
# bctl_deadline_corrupt.sh BCTL PYTHON3 - a deadline word in the segment
# cannot shut a breaker for longer than its max_open (issue 22 break-it
# pass). Every writer caps an open or a cooling at max_open_ms, so a
# deadline further ahead is a corrupt or hostile word (a writer of a
# group-shared segment, a stray write): before, an OPEN deadline or a
# cool_until_ns set to the far future refused every call for up to 8.7
# years. Now the gate brings such a deadline back to now + max_open (one
# CAS), and inspect shows at most that.
#
# Uses its own segment /brkdeadline-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_deadline_corrupt.sh PATH_TO_BCTL PATH_TO_PYTHON3}
PY=${2:?usage: bctl_deadline_corrupt.sh PATH_TO_BCTL PATH_TO_PYTHON3}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkdeadline

b() { "$BCTL" --shm "$SHM" "$@"; }
field() { # NAME FIELD: the value of FIELD in `bctl inspect NAME`
	b inspect "$1" | awk -v f="$2:" '$1 == f { print $2; exit }'
}

# poke NAME WORD HOW: rewrite record NAME's word at byte offset WORD of
# its record (layout.h struct brk__record): HOW "far" sets a gen-tagged
# deadline slot's 45-bit deadline to its maximum, "huge" the whole word
# to 2^63 - 1.
poke() {
	"$PY" - "/dev/shm$SHM" "$1" "$2" "$3" <<'PYEOF'
import mmap, struct, sys
path, name, word, how = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), sys.argv[4]
with open(path, 'r+b') as f:
    m = mmap.mmap(f.fileno(), 0)
    at = m.find(name + b'\0', 4096)
    while at >= 0 and struct.unpack_from('<Q', m, at - 16)[0] == 0:
        at = m.find(name + b'\0', at + 1)
    rec = at - 16  # head, hash, then the name
    off = rec + word
    u = struct.unpack_from('<Q', m, off)[0]
    v = u | ((1 << 45) - 1) if how == 'far' else (1 << 63) - 1
    struct.pack_into('<Q', m, off, v)
    m.close()
PYEOF
}

# (a refusal's wait is jittered: up to min(remaining / 4, 5 s) more)
# waits DESC MAX: the last exec was refused (75) with "wait N ms" or
# "retry in N ms", N <= MAX
waits() {
	local n
	n=$(sed -En "s/.*(wait|retry in) ([0-9]+) ms.*/\\2/p" "$TMP/err" | head -n 1)
	if [ "$rc" -eq 75 ] && [ -n "$n" ] && [ "$n" -le "$2" ]; then
		ok "$1 (wait $n ms)"
	else
		bad "$1" "exit $rc, want 75 with a wait <= $2 ms" "$(cat "$TMP/err")"
	fi
}

# --- an OPEN deadline in the far future ----------------------------------------
b config pay --max-open 1m >/dev/null
b trip pay --for 30s >/dev/null
poke pay 112 far
poke pay 120 far
b exec pay -- true >"$TMP/out" 2>"$TMP/err"
rc=$?
waits "a far OPEN deadline: refused for at most max_open" 65000
left=$(field pay open_remaining_ms)
[ -n "$left" ] && [ "$left" -le 60000 ] &&
	ok "... and inspect shows open_remaining_ms $left <= 60000" ||
	bad "... and inspect shows open_remaining_ms <= 60000" "open_remaining_ms: $left"

sleep 1.2 # the deadline was stored (one CAS), not re-clamped at each read
left=$(field pay open_remaining_ms)
[ -n "$left" ] && [ "$left" -le 59000 ] &&
	ok "... stored: a second later $left ms are left" ||
	bad "... stored: a second later at most 59000 ms are left" "open_remaining_ms: $left"

# --- a cool_until_ns in the far future -----------------------------------------
b config cool --max-open 1m --max-wait 2m >/dev/null
b exec cool -- printf 'HTTP/1.1 429 x\r\nRetry-After: 30\r\n\r\n' >/dev/null
poke cool 88 huge
b exec cool -- true >"$TMP/out" 2>"$TMP/err"
rc=$?
waits "a far cool_until: cooling for at most max_open" 65000
left=$(field cool cool_until_remaining_ms)
[ -n "$left" ] && [ "$left" -le 60000 ] &&
	ok "... and inspect shows cool_until_remaining_ms $left <= 60000" ||
	bad "... and inspect shows cool_until_remaining_ms <= 60000" "cool_until_remaining_ms: $left"
b exec cool/child -- true >"$TMP/out" 2>"$TMP/err"
rc=$?
waits "... and a child refused by it waits at most max_open too" 65000

echo "# bctl_deadline_corrupt: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
