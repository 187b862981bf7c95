#!/usr/bin/env bash
# bench/scale.sh [BUILD_DIR] [--max N] [scale options...]
#
# Runs bench/scale (issue 10): bytes per record by kind, then for N =
# 10^3, 10^5, 10^6 records (up to --max N) the create rate, cached and
# fresh lookups, breakerd's CPU % idle and with 1,000 leases held by 100
# processes, the dead-owner reclaim latency and bctl list/metrics; then
# the goals. It uses the breakerd and bctl of BUILD_DIR, a private
# segment per run (removed at the end, also on Ctrl-C), and skips an N
# whose segment would not fit in /dev/shm. Builds nothing: build first,
#   meson setup build-rel -Dbuildtype=release && ninja -C build-rel &&
#   bench/scale.sh build-rel
# BUILD_DIR defaults to ./build.
# Exit status: the program's (0 every goal met, 3 a goal missed or not
# measured, 1 a measurement failed, 2 usage).
set -u

build=${1:-./build}
[ $# -gt 0 ] && shift
bin="$build/bench/scale"
if [ ! -x "$bin" ]; then
	echo "scale.sh: $bin not found; build first:" >&2
	echo "  meson setup $build -Dbuildtype=release && ninja -C $build" >&2
	exit 2
fi
exec "$bin" --bctl "$build/tools/bctl" --breakerd "$build/daemon/breakerd" "$@"
