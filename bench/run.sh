#!/usr/bin/env bash
# bench/run.sh [BUILD_DIR] [breakerd-bench options...]
#
# Runs the breakerd benchmark (issue 5) and prints its table and goals.
# Builds nothing: build first, e.g.
#   meson setup build -Dbuildtype=release && ninja -C build && bench/run.sh build
# BUILD_DIR defaults to ./build. When redis-server is installed (Debian
# package redis-server) a private one is started for the Redis baseline on
# a free 127.0.0.1 port, with no persistence, and stopped by its PID at the
# end; without it that baseline is skipped with a note.
# Exit status: the benchmark's (0 every goal met, 3 a goal missed, 1 error).
set -u

build=${1:-./build}
[ $# -gt 0 ] && shift
bin="$build/bench/breakerd-bench"
if [ ! -x "$bin" ]; then
	echo "run.sh: $bin not found; build first:" >&2
	echo "  meson setup $build -Dbuildtype=release && ninja -C $build" >&2
	exit 2
fi

redis_args=()
redis_pid=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/breakerd-bench.XXXXXX")
cleanup() {
	if [ -n "$redis_pid" ]; then
		kill "$redis_pid" 2>/dev/null
		wait "$redis_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if command -v redis-server >/dev/null 2>&1; then
	port=$("$bin" --free-port) || { echo "run.sh: no free port" >&2; exit 1; }
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$tmp" --logfile "$tmp/redis.log" --daemonize no &
	redis_pid=$!
	redis_args=(--redis-port "$port")
	echo "run.sh: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') pid $redis_pid on 127.0.0.1:$port" >&2
else
	echo "run.sh: redis-server not installed (Debian package redis-server):" \
		"the Redis baseline is skipped" >&2
fi

"$bin" "${redis_args[@]}" "$@"
exit $?
