#!/usr/bin/env bash
# bctl_segment.sh BCTL BREAKERD - bctl segment create / info / remove: what
# each does, what remove refuses and why (exit 75, the segment untouched),
# and bad input (exit status AND the one line on stderr; a rejected command
# creates or removes nothing).
#
# Uses its own segments /brkseg-$$* and removes them at the end.
set -u

BCTL=${1:?usage: bctl_segment.sh PATH_TO_BCTL PATH_TO_BREAKERD}
BREAKERD=${2:?usage: bctl_segment.sh PATH_TO_BCTL PATH_TO_BREAKERD}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkseg

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, bctl_run, check_both

absent() { # DESC: the segment must not exist
	if [ -e "/dev/shm$SHM" ]; then bad "$1: nothing created" "/dev/shm$SHM exists"
	else ok "$1: nothing created"; fi
}

# --- bad input creates nothing -------------------------------------------
run segment
check_both "no subcommand: usage error" 2 "" "missing subcommand \\(create, info or remove\\)"
run segment grow
check_both "unknown subcommand: usage error" 2 "" "unknown subcommand 'grow'"
run segment create
check_both "create without --capacity: usage error" 2 "" "--capacity N is required"
absent "create without --capacity"
run segment create --capacity 0
check_both "--capacity 0: usage error" 2 "" "--capacity: '0' is not a number of records from 1 to 1048576"
run segment create --capacity 2000000
check_both "--capacity above the library's maximum: usage error" 2 "" "from 1 to 1048576"
run segment create --capacity 64 --arena-mb 0
check_both "--arena-mb 0: usage error" 2 "" "--arena-mb: '0' is not a number of MiB from 1 to 1024"
run segment create --capacity 64 --mode 0666
check_both "--mode 0666: usage error" 2 "" "--mode: '0666' would make the segment world-writable"
run segment create --capacity 64 --mode 0400
check_both "--mode 0400: usage error" 2 "" "leaves the owner without read and write permission"
run segment create --capacity 64 --mode 9
check_both "--mode 9: usage error" 2 "" "--mode: '9' is not an octal mode"
run segment create --capacity 64 --group no-such-group-$$
check_both "--group unknown: usage error" 2 "" "--group: no such group 'no-such-group-$$'"
run segment create --capacity 64 extra
check_both "an operand: usage error" 2 "" "unexpected|operand|argument"
absent "bad create input"
run segment info
check_both "info of an absent segment: error" 1 "" "no such segment"
run segment remove
check_both "remove of an absent segment: error" 1 "" "^bctl: $SHM: no such segment\$"

# --- create ----------------------------------------------------------------
run segment create --capacity 64 --arena-mb 1 --mode 0640 --group 0
check_both "create: created, with its size" 0 \
	"^$SHM: created, capacity 64 records, arena 1048576 bytes, [0-9]+ bytes in /dev/shm, mode 0640\$" ""
[ "$(stat -c %a "/dev/shm$SHM")" = 640 ] && ok "the mode is applied" ||
	bad "the mode is applied" "$(stat -c %a "/dev/shm$SHM")"
run segment create --capacity 64 --arena-mb 1
check_both "create again, same size: kept" 0 "^$SHM: exists already, capacity 64 records" ""
run segment create --capacity 128
check_both "create again, another capacity: error saying how to resize" 1 "" \
	"exists with capacity 64 records .*fixed when it is created. To resize it: stop every worker using it and breakerd, run 'bctl --shm $SHM segment remove', then create it again"
run config a --max-concurrent 2
run segment info
check_both "info: capacity and use" 0 "^segment: +$SHM, 1 of 64 records used\$" ""
for re in "^arena: +[0-9]+ of 1048576 bytes used" "^breakerd: +not running\$" \
	"^size: +[0-9]+ bytes\$" "^layout: +[0-9]+\$" "^mode: +0640\$" "^owner: +[^:]+:" \
	"^created: +20[0-9-]+T.*Z by pid [0-9]+\$" "^pid_namespace: +[0-9]+ \\(ours too\\)\$" \
	"^time_namespace: +"; do
	grep -Eq -- "$re" "$TMP/out" && ok "info shows $re" || bad "info shows $re" "$(cat "$TMP/out")"
done
run segment info --json
if /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["capacity"] == 64 and d["used"] == 1, d
assert d["mode"] == "0640" and d["same_pidns"] is True, d
for k in ("arena_bytes", "size", "layout", "owner", "group", "creator_pid",
          "creator_pidns", "own_pidns", "heartbeat_age_ms", "daemon_running"):
    assert k in d, k
' "$TMP/out"; then ok "info --json: the same facts"; else bad "info --json" "$(cat "$TMP/out")"; fi

# --- remove refuses while in use -----------------------------------------
"$BCTL" --shm "$SHM" exec a -- sleep 30 </dev/null >/dev/null 2>&1 &
holder=$!
leased() { "$BCTL" --shm "$SHM" inspect a 2>/dev/null | grep -Eq '^in_flight: +1'; }
until_s 5 leased
run segment remove
check_both "remove while a lease is held: refused, saying why" 75 "" \
	"^bctl: $SHM: not removed: 1 lease is held \\(first: 'a'\\): processes are using it"
[ -e "/dev/shm$SHM" ] && ok "refused remove keeps the segment" || bad "refused remove keeps the segment"
kill "$holder"; wait "$holder" 2>/dev/null
"$BREAKERD" --shm "$SHM" --interval 50ms 2>"$TMP/d.log" &
daemon=$!
attached() { "$BCTL" --shm "$SHM" segment info 2>/dev/null | grep -q "^breakerd: *pid $daemon"; }
until_s 5 attached
run segment remove
check_both "remove while breakerd's heartbeat is fresh: refused, saying why" 75 "" \
	"^bctl: $SHM: not removed: breakerd \\(pid $daemon\\) is attached, heartbeat [0-9]+ ms ago; stop it"
run segment info
check_both "after the refusals the record is still there" 0 "1 of 64 records used" ""
kill "$daemon"; wait "$daemon" 2>/dev/null

# --- remove -------------------------------------------------------------------
run segment remove
check_both "remove once nothing uses it" 0 "^$SHM: removed \\(a process that still has it mapped keeps the unlinked copy; the next to attach creates a fresh one\\)\$" ""
[ -e "/dev/shm$SHM" ] && bad "remove unlinks it" || ok "remove unlinks it"
run segment remove
check_both "remove twice: no such segment" 1 "" "no such segment"

printf 'not a segment' >"/dev/shm$SHM-junk"
bctl_run -- --shm "$SHM-junk" segment remove
check_both "remove of what cannot be checked: refused, naming --force" 1 "" \
	"not removed: it cannot be checked \\(.*truncated.*\\); --force removes it without checking"
[ -e "/dev/shm$SHM-junk" ] && ok "the unchecked one is kept" || bad "the unchecked one is kept"
bctl_run -- --shm "$SHM-junk" segment remove --force
check_both "remove --force removes it" 0 "removed" ""
[ -e "/dev/shm$SHM-junk" ] && bad "--force unlinks it" || ok "--force unlinks it"

# Something else at the name (issue 22 break-it pass): what it is, whose,
# and how to remove it; before, a link said "shm_open: Too many levels of
# symbolic links" and a directory "shm_open: Invalid argument".
ln -s /etc/passwd "/dev/shm$SHM-link"
run segment info
SHM0=$SHM
SHM=$SHM0-link
run list
check_both "a symbolic link at the name: what it is and how to remove it" 1 "" \
	"/dev/shm$SHM is a symbolic link, owned by uid $(id -u).*segment remove --force"
run config pay
check_both "... refused read-write too, never followed" 1 "" "is a symbolic link"
run segment remove --force
[ -L "/dev/shm$SHM" ] && bad "remove --force removes the link" || ok "remove --force removes the link"
mkdir "/dev/shm$SHM0-dir"
SHM=$SHM0-dir
run config pay
check_both "a directory at the name: what it is and how to remove it" 1 "" \
	"/dev/shm$SHM is a directory, owned by uid $(id -u)\\b.*; .*rmdir /dev/shm$SHM"
rmdir "/dev/shm$SHM"
mkfifo "/dev/shm$SHM0-fifo"
SHM=$SHM0-fifo
run list
check_both "a FIFO at the name: what it is" 1 "" "/dev/shm$SHM is a FIFO, owned by"
rm -f "/dev/shm$SHM"
SHM=$SHM0

echo "# bctl_segment: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
