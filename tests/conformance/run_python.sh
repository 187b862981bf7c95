#!/usr/bin/env bash
# tests/conformance/run_python.sh SRCDIR BUILDDIR SANITIZE SCENARIO...
# Runs the scenarios with the breakerd Python package of this tree. The
# package comes from where tests/python gets it (the one place that knows
# how: tests/python/run.sh, which builds it into BUILDDIR/python-venv
# against this build's libbreaker, and preloads the sanitizer runtime in a
# sanitizer build); exit 77 (skip) when it skips.
set -u
src=$1 build=$2 sanitize=$3
shift 3
BRKPY_SCRIPT=$src/tests/conformance/run_python.py \
	exec bash "$src/tests/python/run.sh" "$src" "$build" "" "$sanitize" "" "$@"
