#!/usr/bin/env bash
# tests/run-all.sh - the whole test suite, as the README's second command and
# CI run it: a -Werror build, a release build (meson release: -O3, NDEBUG; suites unit,
# cli, integration, python), the same suite under AddressSanitizer +
# UndefinedBehaviorSanitizer, the in-process concurrency tests (suite
# 'threads') under ThreadSanitizer, and a short libFuzzer smoke run of
# each fuzz target (suite 'fuzz', clang, tests/fuzz/). Prints meson's summaries and a final line
# "N passed, N failed[, N skipped]". Exit status: 0 only if nothing failed.
set -u
cd "$(dirname "$0")/.."

passed=0 failed=0 skipped=0

run_suite() { # name, build dir, meson test args..., -- setup args...
	local name=$1 dir=$2; shift 2
	local test_args=() setup_args=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do test_args+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	setup_args=("$@")
	echo "=== $name: meson setup $dir ${setup_args[*]}"
	if [ -d "$dir" ]; then
		meson setup --wipe "$dir" "${setup_args[@]}" >"$dir.setup.log" 2>&1
	else
		meson setup "$dir" "${setup_args[@]}" >"$dir.setup.log" 2>&1
	fi || { cat "$dir.setup.log"; echo "$name: configure failed"; failed=$((failed + 1)); return; }
	sed -n '/^breakerd/,$p' "$dir.setup.log"
	if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
		tail -50 "$dir.build.log"; echo "$name: build failed"; failed=$((failed + 1)); return
	fi
	meson test -C "$dir" --print-errorlogs "${test_args[@]}" 2>&1 | tee "$dir.test.log" |
		grep -vE '^ *[0-9]+/[0-9]+ .* OK ' || true
	local ok fail skip
	ok=$(awk '/^Ok:/ {print $2}' "$dir.test.log")
	fail=$(awk '/^(Fail|Timeout|Unexpected Pass):/ {s += $NF} END {print s + 0}' "$dir.test.log")
	skip=$(awk '/^Skipped:/ {print $2}' "$dir.test.log")
	if [ -z "$ok" ]; then
		echo "$name: meson test printed no summary"; failed=$((failed + 1)); return
	fi
	passed=$((passed + ok)); failed=$((failed + fail)); skipped=$((skipped + ${skip:-0}))
	pytest_cases "$dir"
}

# The python suite is one meson test running pytest: count its cases
# instead (the line tests/python/run.sh prints, "pytest: N passed, ...").
pytest_cases() {
	local line pp pf ps
	line=$(grep -m1 '^pytest: ' "$1/meson-logs/testlog.txt" 2>/dev/null) || return 0
	pp=$(sed -n 's/.* \([0-9][0-9]*\) passed.*/\1/p' <<<"$line")
	pf=$(sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p' <<<"$line")
	ps=$(sed -n 's/.* \([0-9][0-9]*\) skipped.*/\1/p' <<<"$line")
	echo "python suite: $line"
	if [ -n "$pf" ] && [ "$pf" -gt 0 ]; then
		failed=$((failed + pf - 1)); passed=$((passed + ${pp:-0}))
	elif [ -n "$pp" ]; then
		passed=$((passed + pp - 1))
	fi
	skipped=$((skipped + ${ps:-0}))
}

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0

run_suite "plain -Werror" build-ci --num-processes 2 -- \
	-Dwerror=true
# What packagers build (optimised, assertions off): the suites a user's build
# would show failing (issue 22: a struct compared with its padding failed
# only here).
run_suite "release (-O3, NDEBUG)" build-release --num-processes 2 \
	--suite unit --suite cli --suite integration --suite python -- \
	-Dwerror=true -Dbuildtype=release -Db_ndebug=true
# The spin model (suite model) checks a Promela model, and the layers
# test (suite layout) the source tree's includes, not our C as it runs:
# once is enough. The python suite runs with libasan preloaded into the
# interpreter (tests/python/run.sh, tests/python/lsan.supp).
run_suite "ASan+UBSan" build-asan --num-processes 2 --timeout-multiplier 3 --no-suite model --no-suite layout -- \
	-Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
TSAN_OPTIONS=halt_on_error=1 run_suite "TSan (suite threads)" build-tsan \
	--suite threads --timeout-multiplier 3 -- \
	-Dwerror=true -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug -Ddemo=disabled
CC=clang run_suite "libFuzzer smoke (suite fuzz)" build-fuzz --suite fuzz -- \
	-Dfuzz=enabled -Dtests=disabled -Ddemo=disabled -Dwerror=true

line="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ "$failed" -eq 0 ]
