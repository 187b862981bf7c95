#!/usr/bin/env bash
# bench/python/run.sh [BUILD_DIR] [bench.py options...]
#
# The Python benchmark (issue 8): `with br:` on a closed breaker from the
# breakerd package against a pybreaker-design in-process lock breaker and a
# CircuitRedisStorage-design Redis breaker, in one run; see bench.py.
#   meson setup build-bench -Dbuildtype=release && ninja -C build-bench &&
#   bench/python/run.sh build-bench
# BUILD_DIR (default ./build) must hold a built libbreaker: the package
# (./bindings/python) is built against it (PKG_CONFIG_PATH=BUILD_DIR/meson-uninstalled)
# with Debian's /usr/bin/python3 and python3-mesonpy into
# BUILD_DIR/python-bench-site, again only when a source changed. When
# redis-server is installed (Debian package redis-server) a private one is
# started on a free 127.0.0.1 port with no persistence and stopped by its
# PID at the end; without it the Redis baseline is skipped with a note.
# Exit status: bench.py's (0 every goal met, 3 a goal missed, 1 error),
# 2 on a set-up error.
set -u

build=${1:-./build}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
py=/usr/bin/python3

if [ ! -d "$build/meson-uninstalled" ] || [ -z "$(find "$build/lib" -maxdepth 1 -name 'libbreaker*' 2>/dev/null)" ]; then
	echo "run.sh: no built libbreaker in $build; build first:" >&2
	echo "  meson setup $build -Dbuildtype=release && ninja -C $build" >&2
	exit 2
fi
build=$(cd "$build" && pwd)
if ! "$py" -c 'import mesonpy, redis' 2>/dev/null; then
	echo "run.sh: $py needs python3-mesonpy and python3-redis" >&2
	exit 2
fi

site=$build/python-bench-site
stamp=$( { find "$src/bindings/python" "$src/lib/include" -type f \
		\( -name '*.py' -o -name '*.c' -o -name '*.h' -o -name '*.build' -o -name '*.toml' \) \
		-not -path '*/.mesonpy-*' -print0 | sort -z | xargs -0 sha256sum
	   find "$build/lib" -maxdepth 1 -name 'libbreaker*' -printf '%f %s %T@\n' | sort; } |
	 sha256sum | cut -d' ' -f1)
if [ "$(cat "$site/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$site"
	echo "run.sh: building the breakerd package into $site" >&2
	if ! PKG_CONFIG_PATH=$build/meson-uninstalled "$py" -m pip install -q \
		--no-build-isolation --no-index --no-deps --disable-pip-version-check \
		--target "$site" "$src/bindings/python" >"$build/python-bench-install.log" 2>&1; then
		cat "$build/python-bench-install.log" >&2
		echo "run.sh: pip install ./bindings/python failed" >&2
		exit 2
	fi
	echo "$stamp" >"$site/.stamp"
fi

redis_args=()
redis_pid=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/breakerd-pybench.XXXXXX")
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
	port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$tmp" --logfile "$tmp/redis.log" --daemonize no &
	redis_pid=$!
	for _ in $(seq 100); do
		"$py" -c "import redis; redis.Redis(port=$port).ping()" 2>/dev/null && break
		sleep 0.05
	done
	redis_args=(--redis-port "$port")
	echo "run.sh: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') pid $redis_pid on 127.0.0.1:$port" >&2
else
	echo "run.sh: redis-server not installed (Debian package redis-server):" \
		"the Redis baseline is skipped" >&2
fi

PYTHONPATH=$site "$py" "$here/bench.py" "${redis_args[@]}" "$@"
exit $?
