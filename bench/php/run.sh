#!/usr/bin/env bash
# bench/php/run.sh [BUILD_DIR] [bench.php options...]
#
# The PHP benchmark (issue 27): a call on a closed breaker from the
# breakerd extension against ganesha's design on APCu and on Redis, in one
# run; see bench.php.
#   meson setup build-bench -Dbuildtype=release && ninja -C build-bench &&
#   bench/php/run.sh build-bench
# The extension is built against BUILD_DIR's libbreaker by tests/php/run.sh
# (into BUILD_DIR/php-ext, only when a source changed). APCu is enabled for
# the CLI (-d apc.enable_cli=1). With Debian's redis-server and php-redis a
# private redis-server is started on a free 127.0.0.1 port with no
# persistence and stopped by its PID at the end; without them the Redis
# row is skipped.
# Exit status: bench.php's (0 every goal met, 3 a goal missed, 1 error), 2
# on a set-up error.
set -u
build=${1:-./build}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ -z "$(find "$build/lib" -maxdepth 1 -name 'libbreaker*' 2>/dev/null)" ]; then
	echo "run.sh: no built libbreaker in $build; build first:" >&2
	echo "  meson setup $build -Dbuildtype=release && ninja -C $build" >&2
	exit 2
fi
build=$(cd "$build" && pwd)

redis_args=()
redis_pid=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/breakerd-phpbench.XXXXXX")
cleanup() {
	if [ -n "$redis_pid" ]; then
		kill "$redis_pid" 2>/dev/null
		wait "$redis_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if command -v redis-server >/dev/null 2>&1 && php -r 'exit(class_exists("Redis") ? 0 : 1);' 2>/dev/null; then
	port=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);')
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$tmp" --logfile "$tmp/redis.log" --daemonize no &
	redis_pid=$!
	for _ in $(seq 100); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && break
		sleep 0.05
	done
	redis_args=(--redis-port "$port")
	echo "run.sh: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') pid $redis_pid on 127.0.0.1:$port" >&2
else
	echo "run.sh: redis-server or php-redis not installed: the Redis row is skipped" >&2
fi

bash "$src/tests/php/run.sh" "$src" "$build" none -d apc.enable_cli=1 "$here/bench.php" "${redis_args[@]}" "$@"
