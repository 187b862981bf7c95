#!/usr/bin/env bash
# bench/apply.sh BUILD [N...] - the breakers file applied at scale (issue
# 22): for each N (default 5000 10000 20000 100000) a file of N sections
# (nine breakers with two settings for every bucket), a segment with room
# for them (capacity N + 16, arena sized to fit), and the time and peak
# memory (/usr/bin/time: elapsed, max RSS) of
#   dry-run    bctl apply --dry-run FILE       (every record new)
#   apply      bctl apply FILE                 (creates every record)
#   again      bctl apply FILE                 (every record unchanged)
#   change     bctl apply FILE2                (every record updated)
#   breakerd   breakerd --breakers FILE, on a fresh segment: from start
#              to its "breakers file applied" line; peak from VmHWM
#   sighup     the same breakerd, FILE2 written, SIGHUP to "applied"
# Prints one line per N and step: sections, step, seconds, peak MB.
# Uses its own segment /brkbench-apply-$$ and removes it at the end.
set -u
build=${1:?usage: bench/apply.sh BUILD [N...]}
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(5000 10000 20000 100000)
bctl=$build/tools/bctl
breakerd=$build/daemon/breakerd
for x in "$bctl" "$breakerd" /usr/bin/time; do
	[ -x "$x" ] || { echo "apply.sh: $x not found (ninja -C $build; apt-get install time)" >&2; exit 1; }
done
SHM=/brkbench-apply-$$
TMP=$(mktemp -d /tmp/brkbench-apply.XXXXXX)
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	rm -f "/dev/shm$SHM"
	rm -rf "$TMP"
}
trap cleanup EXIT
export BREAKERD_BREAKERS=

# gen N THRESHOLD: the file, on stdout.
gen() {
	awk -v n="$1" -v t="$2" 'BEGIN {
		for (i = 1; i <= n; i++)
			if (i % 10 == 0)
				printf "[bucket svc/b%d]\nrate = %d\nburst = 10\n\n", i, t * 10
			else
				printf "[breaker svc/s%d]\nfailure_threshold = %d\nopen = 10s\n\n", i, t
	}'
}

# timed STEP N CMD...: run CMD under /usr/bin/time, print the line.
timed() {
	local step=$1 n=$2 s kb
	shift 2
	/usr/bin/time -o "$TMP/time" -f '%e %M' "$@" >/dev/null 2>"$TMP/err" ||
		{ echo "apply.sh: $step of $n failed:" >&2; tail -n 3 "$TMP/err" >&2; exit 1; }
	read -r s kb <"$TMP/time"
	printf '%9d  %-9s %8.2f s %8.1f MB\n' "$n" "$step" "$s" "$(echo "$kb / 1024" | bc -l)"
}

# daemon_wait N COUNT: until the log has COUNT "breakers file applied"
# lines (600 s at most); prints the seconds since $t0 and breakerd's
# peak RSS.
daemon_wait() {
	local step=$1 n=$2 count=$3 i t1 kb
	for ((i = 0; i < 12000; i++)); do
		[ "$(grep -c 'msg="breakers file applied"' "$TMP/log")" -ge "$count" ] && break
		grep -q 'level=error' "$TMP/log" && { echo "apply.sh: breakerd:" >&2; grep level=error "$TMP/log" | head -3 >&2; exit 1; }
		sleep 0.05
	done
	t1=$(date +%s.%N)
	kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$DPID/status")
	printf '%9d  %-9s %8.2f s %8.1f MB\n' "$n" "$step" "$(echo "$t1 - $t0" | bc -l)" "$(echo "$kb / 1024" | bc -l)"
}

printf '%9s  %-9s %10s %11s\n' sections step seconds "peak RSS"
for n in "${sizes[@]}"; do
	gen "$n" 3 >"$TMP/f.conf"
	gen "$n" 4 >"$TMP/f2.conf"
	cap=$((n + 16))
	mb=$((n * 512 / 1048576 + 4)) # a breaker is 448 bytes, a bucket 256
	rm -f "/dev/shm$SHM"
	"$bctl" --shm "$SHM" segment create --capacity "$cap" --arena-mb "$mb" >/dev/null || exit 1
	timed dry-run "$n" "$bctl" --shm "$SHM" apply --dry-run "$TMP/f.conf"
	timed apply "$n" "$bctl" --shm "$SHM" apply "$TMP/f.conf"
	timed again "$n" "$bctl" --shm "$SHM" apply "$TMP/f.conf"
	timed change "$n" "$bctl" --shm "$SHM" apply "$TMP/f2.conf"
	rm -f "/dev/shm$SHM"
	t0=$(date +%s.%N)
	"$breakerd" --shm "$SHM" --capacity "$cap" --arena-mb "$mb" --breakers "$TMP/f.conf" 2>"$TMP/log" &
	DPID=$!
	daemon_wait breakerd "$n" 1
	cp "$TMP/f2.conf" "$TMP/f.conf"
	t0=$(date +%s.%N)
	kill -HUP "$DPID"
	daemon_wait sighup "$n" 2
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
	DPID=
done
