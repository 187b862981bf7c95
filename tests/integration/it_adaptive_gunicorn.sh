#!/usr/bin/env bash
# it_adaptive_gunicorn.sh ADAPTIVE_BENCH - the host-wide learned concurrency
# limit against a real upstream of fixed capacity (issue 25 acceptance).
#
# Debian's gunicorn on loopback (tests/common/gunicorn_harness.sh: 4 sync
# workers serving bench/adaptive/upstream.py, whose handler sleeps 20 ms:
# 200 r/s). The benchmark binary (bench/adaptive_bench.c) runs 16 client
# processes in a closed loop (each request: brk_admit, GET, release) for
# SECONDS (8) per strategy, no capacity cut, two strategies:
#   none       no limit: 16 requests queue for 4 workers in gunicorn's
#              listen backlog, so each waits for about 3 others: p99 about
#              4x the unloaded latency (8x after a cut);
#   host-wide  one shared segment, concurrency_auto = 1 (min_concurrent 1,
#              max_concurrent 32: the upper bound): the limit learned from
#              every client's completion latency.
# Over [WARMUP, SECONDS) (3 s of learning left out), bounds (generous for a
# loaded 2-core box):
#   no limit:  p99 >= 3x the unloaded p50 (1 client, measured first) - the
#              upstream really is overloaded, else the test proves nothing;
#   host-wide: p99 < 3x the unloaded p50, and goodput >= 70 % of the
#              measured capacity (8 clients, no limit: what 4 workers
#              serve), so that a limit starving the upstream fails too.
# The host-wide limit is the adaptive rule's (branch adaptive); a build
# without it runs max_concurrent 32 as a static bulkhead, which does not
# hold the queue and fails the host-wide p99 bound.
# Prints the benchmark's table. Skips (77) if gunicorn (python3-gunicorn)
# or the benchmark (built with libcurl) is missing. Stops by itself: the
# benchmark ends after its strategies; gunicorn is stopped and the
# benchmark's segments removed by the EXIT trap.
set -u
BENCH=${1:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../common/check.sh"
. "$HERE/../common/gunicorn_harness.sh"

SECONDS_PER=${SECONDS_PER:-8}
WARMUP=${WARMUP:-3}
if [ -z "$BENCH" ] || [ ! -x "$BENCH" ]; then
	echo "SKIP: bench/adaptive_bench is not built (it needs libcurl: apt-get install -y libcurl4-openssl-dev)"
	exit 77
fi
if ! gunicorn_have; then
	echo "SKIP: gunicorn is not installed (apt-get install -y python3-gunicorn)"
	exit 77
fi
if ! command -v curl >/dev/null 2>&1; then
	echo "SKIP: curl is not installed (apt-get install -y curl)"
	exit 77
fi

TMP=$(mktemp -d /tmp/brk-it-adaptive.XXXXXX)
bench_pid=
cleanup() {
	if [ -n "$bench_pid" ]; then
		kill "$bench_pid" 2>/dev/null
		wait "$bench_pid" 2>/dev/null
		rm -f /dev/shm/brk-bench-adaptive-"$bench_pid" \
			/dev/shm/brk-bench-adaptive-"$bench_pid"-*
	fi
	gunicorn_stop
	rm -rf "$TMP"
}
gunicorn_start 4 20 || { echo "FAIL - gunicorn did not start"; rm -rf "$TMP"; exit 1; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$BENCH" --url "$GUNICORN_URL" --upstream-pid "$GUNICORN_PID" --workers 4 \
	--service-ms 20 --clients 16 --seconds "$SECONDS_PER" --halve-at 0 \
	--warmup "$WARMUP" --only none,host-wide --kv >"$TMP/out" 2>"$TMP/err" &
bench_pid=$!
wait "$bench_pid"
rc=$?
grep -v '^kv ' "$TMP/out"
cat "$TMP/err"
if [ "$rc" -ne 0 ]; then
	bad "adaptive_bench exited $rc"
	echo "$pass passed, $fail failed"
	exit 1
fi

# kv: the value of KEY on the line of strategy S (or the header's line).
kv() { # S KEY
	awk -v s="$1" -v k="$2" '
		/^kv / && (s == "" ? $2 !~ /^strategy=/ : $2 == "strategy=" s) {
			for (i = 2; i <= NF; i++) {
				split($i, a, "=")
				if (a[1] == k) { print a[2]; exit }
			}
		}' "$TMP/out"
}
unl=$(kv "" unloaded_p50_ms)
cap=$(kv "" measured_capacity)
none_r=$(kv none p99_over_unloaded)
host_r=$(kv host-wide p99_over_unloaded)
host_g=$(kv host-wide goodput)
host_l=$(kv host-wide limit)
if [ -z "$unl" ] || [ -z "$none_r" ] || [ -z "$host_r" ] || [ -z "$host_g" ]; then
	bad "the benchmark printed its figures" "$(cat "$TMP/out")"
	echo "$pass passed, $fail failed"
	exit 1
fi
echo "unloaded p50 $unl ms, measured capacity $cap r/s; no limit: p99 ${none_r}x unloaded;" \
     "host-wide: p99 ${host_r}x unloaded, goodput $host_g r/s, limit $host_l"
if awk -v r="$none_r" 'BEGIN { exit !(r >= 3) }'; then
	ok "no limit: p99 ${none_r}x >= 3x unloaded (the upstream is overloaded)"
else
	bad "no limit: p99 ${none_r}x >= 3x unloaded (the upstream is overloaded)"
fi
if awk -v r="$host_r" 'BEGIN { exit !(r < 3) }'; then
	ok "host-wide learned limit: p99 ${host_r}x < 3x unloaded"
else
	bad "host-wide learned limit: p99 ${host_r}x < 3x unloaded" \
		"(limit $host_l; a build without the adaptive rule runs max_concurrent 32 as a static bulkhead)"
fi
if awk -v g="$host_g" -v c="$cap" 'BEGIN { exit !(g >= 0.7 * c) }'; then
	ok "host-wide learned limit: goodput $host_g r/s >= 70 % of the measured $cap"
else
	bad "host-wide learned limit: goodput $host_g r/s >= 70 % of the measured $cap"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
