#!/usr/bin/env bash
# tests/python/run.sh - build the breakerd Python package against this build
# tree and run its pytest suite.
#   run.sh SRCDIR BUILDDIR BCTL SANITIZE PROJECT_VERSION
# Installs ./bindings/python into a venv made once per build dir from /usr/bin/python3
# (--system-site-packages: Debian's mesonpy and pytest), with
# PKG_CONFIG_PATH=BUILDDIR/meson-uninstalled so dependency('breaker') finds
# this tree's libbreaker, and reinstalls only when a source changed.
# In an ASan(+UBSan) build pytest runs with the sanitizer runtimes
# preloaded into the interpreter (the extension and libbreaker are
# instrumented, python is not), PYTHONMALLOC=malloc so ASan sees Python's
# allocations, and the interpreter's own leaks suppressed
# (tests/python/lsan.supp); a leak or error of ours fails the run.
# Exit 77 (skipped) in a ThreadSanitizer/MSan build (a runtime that must
# own the process from its start) or without mesonpy/pytest/venv.
set -u
src=$1 build=$2 bctl=$3 sanitize=${4:-none} version=${5:-}
py=/usr/bin/python3

preload=
case $sanitize in
none | '') ;;
*thread* | *memory*)
	echo "SKIP: a $sanitize build: the Python tests run in the plain and ASan builds"
	exit 77 ;;
*)
	cc=${CC:-cc}
	for rt in $(case $sanitize in *address*) echo asan;; esac) \
		  $(case $sanitize in *undefined*) echo ubsan;; esac); do
		lib=$("$cc" -print-file-name="lib$rt.so")
		if ! [ -e "$lib" ]; then
			echo "SKIP: no lib$rt.so from $cc to preload into python"
			exit 77
		fi
		preload=${preload:+$preload:}$lib
	done ;;
esac
if ! [ -x "$py" ] || ! "$py" -c 'import mesonpy, pytest, venv, ensurepip' 2>/dev/null; then
	echo "SKIP: $py lacks mesonpy, pytest or venv (apt-get install python3-mesonpy python3-pytest python3-venv python3-pip)"
	exit 77
fi

# One definition of the version: the package's must be the project's.
pyver=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$src/bindings/python/meson.build" | head -1)
if [ -n "$version" ] && [ "$pyver" != "$version" ]; then
	echo "FAIL: bindings/python/meson.build has version '$pyver', the project '$version'"
	exit 1
fi

venv=$build/python-venv
# One installer at a time (tests/conformance/run_python.sh uses this venv
# too, and may run alongside): the lock is held until the install is done.
exec 9>"$build/python-venv.lock"
flock 9
vpy=$venv/bin/python
if ! [ -x "$vpy" ]; then
	rm -rf "$venv"
	"$py" -m venv --system-site-packages "$venv" || { echo "FAIL: venv"; exit 1; }
fi
export PKG_CONFIG_PATH=$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# Reinstall when the package sources or the library changed. (No
# builddir= config setting: meson-python 0.12 then fails to reconfigure.)
stamp=$( { find "$src/bindings/python" "$src/lib/include" -type f \
		\( -name '*.py' -o -name '*.c' -o -name '*.h' -o -name '*.build' -o -name '*.toml' \) \
		-not -path '*/.mesonpy-*' -print0 | sort -z | xargs -0 sha256sum
	   find "$build/lib" -maxdepth 1 -name 'libbreaker*' -printf '%f %s %T@\n' | sort; } |
	 sha256sum | cut -d' ' -f1)
if [ "$(cat "$venv/.breakerd-stamp" 2>/dev/null)" != "$stamp" ]; then
	if ! "$vpy" -m pip install --no-build-isolation --no-index --no-deps --force-reinstall \
		-q --disable-pip-version-check \
		--config-settings=setup-args=-Dwerror=true \
		"$src/bindings/python" >"$build/python-install.log" 2>&1; then
		cat "$build/python-install.log"
		echo "FAIL: pip install ./bindings/python"
		exit 1
	fi
	echo "$stamp" >"$venv/.breakerd-stamp"
fi
exec 9>&-

# BRKPY_INSTALL_ONLY=1: only make sure the venv holds this tree's package
# (the Puma and FPM fleet tests' Python process), run no test.
[ "${BRKPY_INSTALL_ONLY:-}" = 1 ] && exit 0
export BRKPY_BCTL=$bctl BRKPY_SRCDIR=$src BRKPY_BUILDDIR=$build
if [ -n "$preload" ]; then
	export LD_PRELOAD=$preload${LD_PRELOAD:+:$LD_PRELOAD} PYTHONMALLOC=malloc
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1
	export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$src/tests/python/lsan.supp:print_suppressions=0
	echo "python under $sanitize: LD_PRELOAD=$LD_PRELOAD"
fi
cd "$build" || exit 1
# BRKPY_SCRIPT=FILE: run FILE (with the arguments after the fifth) under
# the same venv and sanitizer preload instead of pytest
# (tests/conformance/run_python.sh).
if [ -n "${BRKPY_SCRIPT:-}" ]; then
	shift 5
	exec "$vpy" "$BRKPY_SCRIPT" "$@"
fi
# Run from the build dir, with the venv's python: never a python3 on PATH.
# A test that hangs fails after 300 s with its traceback (pytest-timeout,
# python3-pytest-timeout; signal method: the rest of the suite still
# runs). pytest writes to a file, not a pipe: a hung child forked by a
# test keeps no pipe open. If meson's own timeout stops us, what pytest
# printed so far is shown (-v: one line per test), so the log names the
# test it was in.
tmo=()
if "$vpy" -c 'import pytest_timeout' 2>/dev/null; then
	tmo=(--timeout=300 --timeout-method=signal)
else
	echo "note: no pytest_timeout (apt-get install python3-pytest-timeout): a hung test hangs the suite"
fi
log=$build/pytest.log
"$vpy" -m pytest -p no:cacheprovider -v -rfEs --import-mode=importlib "${tmo[@]}" \
	--ignore="$src/tests/python/pybreaker" "$src/tests/python" >"$log" 2>&1 &
pytest_pid=$!
trap 'kill -TERM $pytest_pid 2>/dev/null; sleep 1; tail -n 60 "$log"
      echo "pytest: stopped by a signal while running (see the last test above)"; exit 1' TERM INT
wait $pytest_pid; rc=$?
trap - TERM INT
out=$(cat "$log")
echo "$out"
summary=$(printf '%s\n' "$out" | grep -E '^(=+ )?[0-9]+ (passed|failed|error)' | tail -1 | sed 's/^=* *//; s/ *=*$//')
echo "pytest: ${summary:-no summary}"

# pybreaker's own suite against breakerd.pybreaker (tests/python/pybreaker):
# as root in a private network namespace with a private redis-server on
# 127.0.0.1:6379 (netns.sh); otherwise without Redis (its one real-Redis
# test skips itself, said below).
pyb=$src/tests/python/pybreaker
if "$vpy" -c 'import tornado, fakeredis' 2>/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null &&
	   command -v redis-server >/dev/null; then
		out2=$(unshare -n bash "$pyb/netns.sh" "$vpy" "$pyb" "${tmo[@]}" 2>&1); rc2=$?
	else
		echo "pybreaker suite: not root (or no unshare/ip/redis-server): its real-Redis test skips"
		out2=$("$vpy" -m pytest -p no:cacheprovider -q -rfEs --import-mode=importlib "${tmo[@]}" \
			--rootdir "$pyb" --confcutdir "$pyb" "$pyb/pybreaker_test.py" 2>&1); rc2=$?
	fi
	echo "$out2"
	summary2=$(printf '%s\n' "$out2" | grep -E '^(=+ )?[0-9]+ (passed|failed|error)' | tail -1)
	echo "pybreaker suite: ${summary2:-no summary}"
	[ $rc -eq 0 ] && rc=$rc2
else
	echo "pybreaker suite: SKIPPED (needs python3-tornado and python3-fakeredis)"
fi
exit $rc
