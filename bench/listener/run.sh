#!/usr/bin/env bash
# bench/listener/run.sh [BUILD_DIR] [listener.py options...]
#
# The listener benchmark (issue 24): transition in process A -> callback in
# process B, p50/p99 with B idle and busy, idle wake-ups, and the cost of a
# transition with and without a listener; see listener.py. BUILD_DIR
# (default ./build) must hold a built libbreaker; the package is built into
# BUILD_DIR/python-bench-site as bench/python/run.sh does (only when a
# source changed), with Debian's /usr/bin/python3.
set -u
build=${1:-./build}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
if [ -z "$(find "$build/lib" -maxdepth 1 -name 'libbreaker*' 2>/dev/null)" ]; then
	echo "run.sh: no built libbreaker in $build (meson setup $build && ninja -C $build)" >&2
	exit 2
fi
build=$(cd "$build" && pwd)
site=$build/python-bench-site
stamp=$( { find "$src/bindings/python" "$src/lib/include" -type f \
		\( -name '*.py' -o -name '*.c' -o -name '*.h' -o -name '*.build' -o -name '*.toml' \) \
		-not -path '*/.mesonpy-*' -print0 | sort -z | xargs -0 sha256sum
	   find "$build/lib" -maxdepth 1 -name 'libbreaker*' -printf '%f %s %T@\n' | sort; } |
	 sha256sum | cut -d' ' -f1)
if [ "$(cat "$site/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$site"
	if ! PKG_CONFIG_PATH=$build/meson-uninstalled "$py" -m pip install -q \
		--no-build-isolation --no-index --no-deps --disable-pip-version-check \
		--target "$site" "$src/bindings/python" >"$build/python-bench-install.log" 2>&1; then
		cat "$build/python-bench-install.log" >&2
		exit 2
	fi
	echo "$stamp" >"$site/.stamp"
fi
PYTHONPATH=$site LD_LIBRARY_PATH=$build/lib exec "$py" "$here/listener.py" "$@"
