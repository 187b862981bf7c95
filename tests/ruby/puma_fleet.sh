#!/usr/bin/env bash
# tests/ruby/puma_fleet.sh SRCDIR BUILDDIR SANITIZE - the Puma fleet test
# (puma_fleet.rb). Skipped (77) without Debian's puma; the Python part
# uses the breakerd package tests/python/run.sh installs into the build
# tree (skipped by itself if that is unavailable).
set -u
src=$1 build=$2 sanitize=$3
if ! command -v puma >/dev/null 2>&1; then
	echo "SKIP: no puma (apt-get install puma)"
	exit 77
fi
if BRKPY_INSTALL_ONLY=1 bash "$src/tests/python/run.sh" "$src" "$build" "" "$sanitize" "" >/dev/null 2>&1; then
	export BRKRB_PYTHON=$build/python-venv/bin/python
fi
exec bash "$src/tests/ruby/run.sh" "$src" "$build" "$sanitize" "$src/tests/ruby/puma_fleet.rb"
