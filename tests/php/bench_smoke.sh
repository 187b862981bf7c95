#!/usr/bin/env bash
# tests/php/bench_smoke.sh SRCDIR BUILDDIR SANITIZE - bench/php at its
# smallest size: every row printed, the 8-process no-lost-update check must
# hold; speed goals are not judged here (exit 3 of a missed one is
# accepted). Skipped (77) in a sanitizer build, as the PHP tests are.
set -u
src=$1 build=$2 sanitize=${3:-none}
if [ -n "$sanitize" ] && [ "$sanitize" != none ]; then
	echo "SKIP: a sanitizer build ($sanitize)"
	exit 77
fi
out=$(bash "$src/bench/php/run.sh" "$build" --quick --runs 1 2>&1); rc=$?
echo "$out"
[ "$rc" -eq 77 ] && exit 77
if printf '%s\n' "$out" | grep -q '^SKIP'; then exit 77; fi
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "FAIL: bench/php exited $rc"; exit 1; }
printf '%s\n' "$out" | grep -q '^GOAL met: 8 processes, no lost update' ||
	{ echo "FAIL: updates were lost"; exit 1; }
for row in 'breakerd: $br->call' 'ganesha design on APCu'; do
	printf '%s\n' "$out" | grep -qF "$row" || { echo "FAIL: no row '$row'"; exit 1; }
done
