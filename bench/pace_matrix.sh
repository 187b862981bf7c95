#!/usr/bin/env bash
# bench/pace_matrix.sh BUILD [options] - the issue 21 matrix: does the
# default (a breaker with no configuration, its implicit pace learning the
# limit) keep the allowance across shapes of limit, burst and workers?
#
# For every cell - nginx limit_req RATE r/s x burst BURST (nodelay, 429 +
# Retry-After: 1, tests/common/nginx_harness.sh, one nginx per RATE x BURST,
# reloaded before each run so every run starts on fresh limiter state) x
# WORKERS worker processes of BUILD/bench/pace_matrix (acquire, GET,
# classify, release; a "paced" refusal is slept out) - it runs RUNS runs of
# SECONDS s and prints the median over the runs of
#   goodput: 200s as % of RATE x SECONDS + BURST (goal >= 95 %),
#   429s after the cold-start wave as % of the requests sent after it
#        (goal <= 5 %),
#   the wave: 429s of the requests sent before the first 429 came back
#        (at most one per worker), shown apart.
# Then the limit changes mid-run (burst 5, each worker count): 10 -> 4 and
# 4 -> 20 r/s at CHANGE_AT s, judged from 5 s after the change for SECONDS
# s (the same goals), with the time until the learned rate is within 90 %
# of the new limit (>= 0.9 x a rise, <= new / 0.9 for a drop).
#
# Options: --seconds S (30), --runs N (3), --rates "3 10 40",
#   --bursts "1 5 20", --workers "4 16 32", --change-at T (15),
#   --no-changes, --no-matrix. Not in CI: the full matrix (27 cells x 3
#   runs x 30 s, plus 6 x 3 change runs of 50 s) takes about an hour:
#       nice bench/pace_matrix.sh build-rel
#   A short look: nice bench/pace_matrix.sh build --seconds 10 --runs 1
# Needs nginx-light and libcurl (the target is built with curl_dep).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: bench/pace_matrix.sh BUILD [--seconds S] [--runs N] ...}
shift
exe="$build/bench/pace_matrix"
[ -x "$exe" ] || { echo "pace_matrix.sh: $exe not built (ninja -C $build bench/pace_matrix)" >&2; exit 1; }
SECONDS_PER=30 RUNS=3 RATES="3 10 40" BURSTS="1 5 20" WORKERS="4 16 32"
CHANGE_AT=15 CHANGES=1 MATRIX=1
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) SECONDS_PER=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--rates) RATES=$2; shift 2 ;;
	--bursts) BURSTS=$2; shift 2 ;;
	--workers) WORKERS=$2; shift 2 ;;
	--change-at) CHANGE_AT=$2; shift 2 ;;
	--no-changes) CHANGES=0; shift ;;
	--no-matrix) MATRIX=0; shift ;;
	*) echo "pace_matrix.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
. "$here/../tests/common/nginx_harness.sh"
nginx_have || { echo "pace_matrix.sh: nginx not installed (apt-get install -y nginx-light)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/brk-pace-matrix.XXXXXX)
# nginx_start sets its own traps: ours again after each start
traps() {
	trap 'nginx_stop; rm -rf "$TMP"' EXIT
	trap 'exit 130' INT TERM
}
start_nginx() { # RATE BURST
	nginx_stop 2>/dev/null
	NGINX_BURST=$2 nginx_start "$1" >/dev/null || { echo "nginx did not start" >&2; exit 1; }
	traps
}
traps

# field LINE KEY: the value of KEY=... in LINE
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

now_ms() { date +%s%3N; }
met=1
echo "pace_matrix: the implicit pace of a breaker with no configuration against nginx limit_req" \
     "on loopback; $SECONDS_PER s per run, median of $RUNS run(s); $(nproc) CPUs," \
     "load $(cut -d' ' -f1 /proc/loadavg)"
if [ "$MATRIX" = 1 ]; then
	printf '%-6s %-5s' limit burst
	for w in $WORKERS; do printf ' | %-26s' "$w workers: good% 429%(wave)"; done
	echo
	for rate in $RATES; do
		for burst in $BURSTS; do
			start_nginx "$rate" "$burst"
			printf '%-6s %-5s' "$rate" "$burst"
			for w in $WORKERS; do
				: >"$TMP/runs"
				for ((r = 0; r < RUNS; r++)); do
					NGINX_BURST=$burst nginx_reload "$rate" >/dev/null
					"$exe" --url "$NGINX_URL" --rate "$rate" --burst "$burst" \
						--workers "$w" --seconds "$SECONDS_PER" >>"$TMP/runs" 2>>"$TMP/err"
				done
				g=$(while read -r l; do field "$l" goodput; done <"$TMP/runs" | median)
				l=$(while read -r l; do field "$l" limited_pct; done <"$TMP/runs" | median)
				v=$(while read -r l; do field "$l" wave; done <"$TMP/runs" | median)
				cat "$TMP/runs" >>"$TMP/all"
				awk -v g="$g" -v l="$l" 'BEGIN { exit !(g >= 95 && l <= 5) }' || met=0
				printf ' | %6s%% %5s%% (%3s)       ' "$g" "$l" "$v"
			done
			echo
		done
	done
fi
if [ "$CHANGES" = 1 ]; then
	total=$(awk -v c="$CHANGE_AT" -v s="$SECONDS_PER" 'BEGIN { print int(c + 5 + s) }')
	for pair in "10 4" "4 20"; do
		set -- $pair
		from=$1 to=$2
		start_nginx "$from" 5
		for w in $WORKERS; do
			: >"$TMP/runs"
			for ((r = 0; r < RUNS; r++)); do
				NGINX_BURST=5 nginx_reload "$from" >/dev/null
				start=$(( $(now_ms) + 500 ))
				"$exe" --url "$NGINX_URL" --rate "$from" --burst 5 --workers "$w" \
					--seconds "$total" --change-at "$CHANGE_AT" --to "$to" \
					--start-epoch-ms "$start" >>"$TMP/runs" 2>>"$TMP/err" &
				bpid=$!
				sleep "$(awk -v s="$start" -v n="$(now_ms)" -v c="$CHANGE_AT" \
					'BEGIN { d = (s - n) / 1000 + c; print (d > 0 ? d : 0) }')"
				NGINX_BURST=5 nginx_reload "$to" >/dev/null
				wait "$bpid"
			done
			g=$(while read -r l; do field "$l" j_goodput; done <"$TMP/runs" | median)
			l=$(while read -r l; do field "$l" j_limited_pct; done <"$TMP/runs" | median)
			t=$(while read -r l; do field "$l" t90; done <"$TMP/runs" | median)
			cat "$TMP/runs" >>"$TMP/all"
			awk -v g="$g" -v l="$l" 'BEGIN { exit !(g >= 95 && l <= 5) }' || met=0
			echo "limit $from -> $to r/s at ${CHANGE_AT} s, burst 5, $w workers, judged from" \
			     "5 s after for $SECONDS_PER s: goodput $g %, 429s $l %, time to 90 % of" \
			     "the new limit $t s"
		done
	done
fi
if [ -s "$TMP/err" ]; then
	echo "errors (first 5):"
	sort "$TMP/err" | uniq -c | head -5
fi
echo "goals (goodput >= 95 %, 429s after the wave <= 5 %) in every cell: $([ $met = 1 ] && echo met || echo NOT met)"
echo "raw runs:"
cat "$TMP/all" 2>/dev/null
[ $met = 1 ]
