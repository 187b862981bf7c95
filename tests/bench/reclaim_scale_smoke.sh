#!/usr/bin/env bash
# tests/bench/reclaim_scale_smoke.sh RECLAIM_SCALE BREAKERD
#
# bench/reclaim-scale at a small size (2,000 bulkheads, 200 leases held by
# 4 processes, a real breakerd watched for 1 s) exits 0, prints every
# figure, and leaves no segment behind. No figure is judged. Before
# bench/reclaim_scale.c sized its arena with brk_arena_cost() it died at
# its first thousand creates (the default arena has no room for a
# bulkhead per record) and nothing ran it.
set -u
rs=$1 breakerd=$2
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$rs" --records 2000 --leases 200 --holders 4 --calls 5 \
	--breakerd "$breakerd" --cpu-seconds 1 >"$out" 2>"$err" &
pid=$!  # its segment is /brk-rscale-PID (meson's timeout bounds the run)
wait $pid
rc=$?
[ $rc -eq 0 ] || bad "exit status $rc: $(cat "$err")"
for key in records create_s reclaim_idle_ns_per_call reclaim_idle_core_pct_at_interval \
	breakerd_idle_cpu_pct leases holders reclaim_leased_ns_per_call \
	reclaim_leased_core_pct_at_interval breakerd_leased_cpu_pct; do
	grep -Eq "^$key=[0-9]+(\.[0-9]+)?$" "$out" || bad "no figure for $key"
done
[ -e "/dev/shm/brk-rscale-$pid" ] && bad "segment left behind: /dev/shm/brk-rscale-$pid"
cat "$out"
[ $fails -eq 0 ] && echo "reclaim-scale smoke: ok"
[ $fails -eq 0 ]
