#!/usr/bin/env bash
# bctl_inspect_scale.sh BCTL MKRECORDS PYTHON3 CHECK_PROM - bctl list and
# bctl metrics at scale (issue 10): filters, streaming, cardinality limits.
#
# Segment A (capacity 1024): mkrecords' 300 breakers "t<i%10>/s<i%100>/h<i>",
# every 7th tripped (43 open), and 5 buckets "t<i>/bucket<i>" (i < 5).
#   list         305 rows, in the order brk_record_next() returns them
#                (index order, not sorted); --prefix, --state, --kind keep
#                exactly the records they name; --json is one array, one
#                record a line.
#   metrics      exactly the series counts bctl help documents: 41 per
#                breaker, 6 per bucket, 4 segment series; --not-closed and
#                --changed-within keep only breakers (41 each);
#                --by-level N: 26 per prefix with breakers, 3 per prefix
#                with buckets; --prefix: 41 per breaker, 6 per bucket;
#                then one pace "t9/pace" is added: 12 series (a bucket's 6
#                plus the 6 breakerd_pace_*), --by-level sums it as a bucket.
#                Every output passes check_prom.py.
# Segment B (capacity 20050, 20000 breakers): list streams. bctl list
#   writes into a FIFO nobody reads beyond the first row, so it blocks
#   after the first ~64 KiB (a few hundred of 20000 rows, the first few
#   percent of the name index); it is stopped (SIGSTOP), 50 breakers are
#   created, it is continued and the rest is read: the new breakers whose
#   index slots lie past where bctl was show up in its output. A list that
#   read every record before printing its first line would show none.
# Bad input: --state bogus, --kind x, --prefix 'a b', --by-level 0, 33,
#   huge and abc, --changed-within garbage and a bare number: exit 2, a
#   message naming the option, nothing on stdout.
#
# Uses its own segments /brkft-inspect-$$-[ab] and removes them at the end.
set -u

BCTL=${1:?usage: bctl_inspect_scale.sh BCTL MKRECORDS PYTHON3 CHECK_PROM}
MK=${2:?mkrecords}
PY=${3:?python3}
CHECK=${4:?check_prom.py}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkft-inspect
A=$SHM-a
B=$SHM-b
lpid=

cleanup() {
	[ -n "$lpid" ] && kill -CONT "$lpid" 2>/dev/null
	scratch_cleanup
}
trap cleanup EXIT

a() { "$BCTL" --shm "$A" "$@"; }

# rows FILE: the record rows of a text listing (between header and blank)
rows() { awk 'NR > 1 && /^$/ { exit } NR > 1 { print $1 }' "$1"; }

# expect_rows DESC N ARGS...: `bctl list ARGS` lists exactly N records
expect_rows() {
	local desc=$1 want=$2 n
	shift 2
	if a list "$@" >"$TMP/l" 2>"$TMP/e"; then
		n=$(rows "$TMP/l" | wc -l)
		if [ "$n" -eq "$want" ]; then
			ok "list $* ($desc): $n rows"
		else
			bad "list $* ($desc): $n rows, want $want"
		fi
	else
		bad "list $*: exit $?" "$(cat "$TMP/e")"
	fi
}

# series DESC N ARGS...: `bctl metrics ARGS` is valid with exactly N series
series() {
	local desc=$1 want=$2
	shift 2
	if ! a metrics "$@" >"$TMP/m" 2>"$TMP/e"; then
		bad "metrics $*: exit $?" "$(cat "$TMP/e")"
		return
	fi
	if "$PY" "$CHECK" --series "$want" "$TMP/m" >"$TMP/c" 2>&1; then
		ok "metrics $* ($desc): $(cat "$TMP/c")"
	else
		bad "metrics $* ($desc)" "$(head -5 "$TMP/c")"
	fi
}

# usage_error OPT ARGS...: exit 2, stderr names OPT, stdout empty
usage_error() {
	local opt=$1 rc
	shift
	"$BCTL" --shm "$A" "$@" >"$TMP/o" 2>"$TMP/e"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q -- "$opt" "$TMP/e" && [ ! -s "$TMP/o" ]; then
		ok "$* -> exit 2: $(head -1 "$TMP/e")"
	else
		bad "$*: exit $rc, want 2 naming $opt, no output" \
			"stderr: $(cat "$TMP/e")" "stdout: $(head -3 "$TMP/o")"
	fi
}

if ! "$MK" "$A" 1024 300 7 5 2>"$TMP/e"; then
	bad "mkrecords A" "$(cat "$TMP/e")"
	exit 1
fi

# ---- list: everything, in index order ----------------------------------
expect_rows "every record" 305
"$MK" --walk "$A" >"$TMP/walk"
a list >"$TMP/l"
if rows "$TMP/l" | cmp -s - "$TMP/walk"; then
	ok "list is in brk_record_next() order"
else
	bad "list order differs from brk_record_next()" "$(rows "$TMP/l" | diff - "$TMP/walk" | head -5)"
fi
if rows "$TMP/l" | sort -c 2>/dev/null; then
	bad "list came out sorted: the test cannot tell index order from sorting"
else
	ok "index order is not name order (the order check means something)"
fi

# ---- list: filters -------------------------------------------------------
expect_rows "3 names under t3/s13/" 3 --prefix t3/s13/
if [ "$(rows "$TMP/l" | sort | tr '\n' ' ')" = "t3/s13/h113 t3/s13/h13 t3/s13/h213 " ]; then
	ok "--prefix t3/s13/ lists exactly h13, h113, h213"
else
	bad "--prefix t3/s13/ lists $(rows "$TMP/l" | tr '\n' ' ')"
fi
expect_rows "i % 7 == 0: 43 open" 43 --state open
if awk 'NR > 1 && /^$/ { exit } NR > 1 && $2 != "open" { bad = 1 } END { exit bad }' "$TMP/l"; then
	ok "--state open rows are all open"
else
	bad "--state open lists a record that is not open"
fi
expect_rows "257 closed breakers, no bucket" 257 --state closed
expect_rows "none half-open" 0 --state half_open
expect_rows "5 buckets" 5 --kind bucket
expect_rows "i % 70 == 0: 0, 70, 140, 210, 280" 5 --prefix t0/ --state open --kind breaker
if a list --json >"$TMP/j" && "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and len(d) == 305, len(d)
lines = open(sys.argv[1]).read().splitlines()
assert lines[0] == "[" and lines[-1] == "]" and len(lines) == 307, len(lines)
' "$TMP/j" 2>"$TMP/e"; then
	ok "list --json: one array of 305, one record a line"
else
	bad "list --json" "$(cat "$TMP/e")"
fi
if a list --json --state open | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert len(d) == 43 and all(r["state"] == "open" for r in d), len(d)
' 2>"$TMP/e"; then
	ok "list --json --state open: 43 open records"
else
	bad "list --json --state open" "$(cat "$TMP/e")"
fi
if [ "$(a list --json --prefix nothing/)" = "[]" ]; then
	ok "list --json with nothing matching: []"
else
	bad "list --json with nothing matching: $(a list --json --prefix nothing/)"
fi

# ---- metrics: series counts as documented ----------------------------------
series "41 x 300 + 6 x 5 + 4" 12334
series "41 x 43 open" 1767 --not-closed
series "the trips are recent" 1767 --changed-within 1h
sleep 0.3
series "no transition in the last 100ms (slept 300ms)" 4 --changed-within 100ms
series "10 prefixes x 26 + 5 x 3 (buckets t0..t4)" 279 --by-level 1
series "100 x 26 + 5 x 3" 2619 --by-level 2
series "300 x 26 + 5 x 3 (every name its own prefix)" 7819 --by-level 3
series "deeper than any name: as level 3" 7819 --by-level 32
series "10 prefixes with open breakers x 26" 264 --by-level 1 --not-closed
series "30 x 41 + 1 bucket x 6" 1240 --prefix t3/
series "one prefix x 26 + its bucket x 3" 33 --prefix t3/ --by-level 1
series "buckets only: 5 x 6" 34 --kind bucket
a pace t9/pace --ceiling 10 >/dev/null
series "a pace has 12 series: 1 x 12 + 4" 16 --kind pace
series "buckets: 5 x 6 + the pace's 12" 46 --kind bucket
series "one prefix x 26 + its pace (a bucket) x 3" 33 --prefix t9/ --by-level 1
a metrics --by-level 1 >"$TMP/m"
if grep -q '^breakerd_breakers{prefix="t3",state="open"} 4$' "$TMP/m" &&
	grep -q '^breakerd_allowed_total{prefix="t3"} 0$' "$TMP/m"; then
	ok "--by-level 1: t3 has 4 open breakers (i = 3, 73, 143, 213 ... % 7)"
else
	bad "--by-level 1 t3 series" "$(grep 't3"' "$TMP/m" | head -5)"
fi

# ---- list streams ---------------------------------------------------------
if "$MK" "$B" 20050 20000 0 2>"$TMP/e"; then
	mkfifo "$TMP/fifo"
	"$BCTL" --shm "$B" list >"$TMP/fifo" 2>"$TMP/le" &
	lpid=$!
	exec 3<"$TMP/fifo"
	IFS= read -r head <&3
	IFS= read -r first <&3
	kill -STOP "$lpid"
	for i in $(seq 1 50); do
		"$BCTL" --shm "$B" config "late/$i" >/dev/null 2>>"$TMP/e"
	done
	kill -CONT "$lpid"
	cat <&3 >"$TMP/rest"
	exec 3<&-
	wait "$lpid"
	rc=$?
	lpid=
	late=$(grep -c '^late/' "$TMP/rest")
	total=$(($(awk '/^$/ { exit } { n++ } END { print n }' "$TMP/rest") + 1))
	if [ "$rc" -eq 0 ] && [ -n "$first" ] && [ "$late" -ge 40 ]; then
		ok "list streams: $late of 50 breakers created after its first row are in its output ($total rows)"
	else
		bad "list streaming: exit $rc, first '$first', $late late names" "$(cat "$TMP/le" "$TMP/e")"
	fi
else
	bad "mkrecords B" "$(cat "$TMP/e")"
fi
rm -f "/dev/shm$B"

# ---- bad input --------------------------------------------------------------
usage_error --state list --state bogus
usage_error --state metrics --state bogus
usage_error --kind list --kind x
usage_error --prefix list --prefix 'a b'
usage_error --prefix metrics --prefix ''
usage_error --by-level metrics --by-level 0
usage_error --by-level metrics --by-level 33
usage_error --by-level metrics --by-level 99999999999999999999999
usage_error --by-level metrics --by-level abc
usage_error --changed-within metrics --changed-within garbage
usage_error --changed-within metrics --changed-within 5
usage_error --changed-within list --changed-within -1s

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
