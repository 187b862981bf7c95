#!/usr/bin/env bash
# bctl_config_concurrent.sh BCTL [ROUNDS [SHIM]] - two operators change DIFFERENT
# settings of one record at the same time; both changes must take effect,
# every time (issue 9: `bctl config` rewrote every setting, so one of two
# concurrent changes could be lost).
#
# Each round starts two bctl processes at once, with new values:
#   breaker: --failure-threshold N   and   --success-threshold M
#            (and, every other round, --open DUR  and  --max-wait DUR)
#   bucket:  --rate R                and   --burst B
#   budget:  --floor F               and   --ratio Q
# then reads the record back with `bctl inspect` and checks both values.
# SHIM (tests/cli/slow_clock.c, LD_PRELOADed into the two changing
# commands only) stretches each command's read-to-write gap, so that the
# two really interleave instead of one finishing before the other starts.
#
# Uses its own segment /brktest-cc-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_config_concurrent.sh PATH_TO_BCTL [ROUNDS [SHIM]]}
ROUNDS=${2:-100}
SHIM=${3:-}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # scratch
scratch brktest-cc
lost=0

bctl() {
	"$BCTL" --shm "$SHM" "$@"
}

# slow CMD...: CMD with the shim, if there is one (up to 3 ms per clock read;
# an ASan build's runtime then is not first in the library list: allowed).
slow() {
	if [ -n "$SHIM" ]; then
		LD_PRELOAD=$SHIM BRKTEST_SLOW_CLOCK_US=3000 \
			ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 "$@"
	else
		"$@"
	fi
}

# field NAME KEY: the value of "KEY: value" in `bctl inspect NAME`.
field() {
	bctl inspect "$1" | awk -v k="$2:" '$1 == k { print $2; exit }'
}

# both DESC CMD1... -- CMD2...: run the two bctl commands at once.
both() {
	local desc=$1 a=() b=()
	shift
	while [ "$1" != "--" ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	slow bctl "${a[@]}" >"$TMP/a.out" 2>"$TMP/a.err" &
	local pa=$!
	slow bctl "${b[@]}" >"$TMP/b.out" 2>"$TMP/b.err" &
	local pb=$!
	wait "$pa" || { echo "FAIL - $desc: bctl ${a[*]}: $(cat "$TMP/a.err")"; fail=$((fail + 1)); }
	wait "$pb" || { echo "FAIL - $desc: bctl ${b[*]}: $(cat "$TMP/b.err")"; fail=$((fail + 1)); }
}

# want DESC NAME KEY VALUE
want() {
	local got
	got=$(field "$2" "$3")
	if [ "$got" != "$4" ]; then
		lost=$((lost + 1))
		[ "$lost" -le 10 ] && echo "FAIL - $1: $2 $3 = '$got', want '$4' (a concurrent change was lost)"
	fi
}

bctl config cc/api >/dev/null || { echo "FAIL - create breaker"; exit 1; }
bctl bucket cc/rate --rate 100 --burst 10 >/dev/null || { echo "FAIL - create bucket"; exit 1; }
bctl budget cc/retry --floor 10 --ratio 0.2 >/dev/null || { echo "FAIL - create budget"; exit 1; }

for ((i = 1; i <= ROUNDS; i++)); do
	ft=$((10 + i)) st=$((20 + i))
	both "round $i breaker" config cc/api --failure-threshold "$ft" -- \
		config cc/api --success-threshold "$st"
	want "round $i" cc/api failure_threshold "$ft"
	want "round $i" cc/api success_threshold "$st"
	if ((i % 2 == 0)); then
		both "round $i breaker durations" config cc/api --open "$((i + 1))s" -- \
			config cc/api --max-wait "$((i + 2))s"
		want "round $i" cc/api open_ms "$(((i + 1) * 1000))"
		want "round $i" cc/api max_wait_ms "$(((i + 2) * 1000))"
	fi
	rate=$((100 + i)) burst=$((10 + i))
	both "round $i bucket" bucket cc/rate --rate "$rate" -- \
		bucket cc/rate --burst "$burst"
	want "round $i" cc/rate burst "$burst"
	# the rate is stored as its emission interval, round(1e9 / rate) ns
	want "round $i" cc/rate interval_ns "$(awk -v r="$rate" 'BEGIN { printf "%d", 1e9 / r + 0.5 }')"
	fl=$((1 + i % 50)) ratio=0.$((100 + i % 800))
	both "round $i budget" budget cc/retry --floor "$fl" -- \
		budget cc/retry --ratio "$ratio"
	out=$(bctl inspect cc/retry --json)
	gf=$(printf '%s\n' "$out" | awk -F'[:,]' '/"floor_per_s"/ { gsub(/ /, "", $2); print $2; exit }')
	gr=$(printf '%s\n' "$out" | awk -F'[:,]' '/"ratio"/ { gsub(/ /, "", $2); print $2; exit }')
	if ! awk -v a="$gf" -v b="$fl" -v c="$gr" -v d="$ratio" \
		'BEGIN { exit !(a - b < 1e-6 && b - a < 1e-6 && c - d < 1e-6 && d - c < 1e-6) }'; then
		lost=$((lost + 1))
		[ "$lost" -le 10 ] && echo "FAIL - round $i: cc/retry floor $gf ratio $gr, want $fl and $ratio (a concurrent change was lost)"
	fi
done

if [ "$fail" -ne 0 ] || [ "$lost" -ne 0 ]; then
	echo "$ROUNDS rounds: $lost changes lost, $fail commands failed"
	exit 1
fi
echo "ok   - $ROUNDS rounds: every concurrent change of different settings took effect"
exit 0
