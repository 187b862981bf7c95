#!/usr/bin/env bash
# mutation_check.sh SRCDIR - do the tests catch what they claim to?
#
# For each mutant: copy the source tree (the files git knows, tracked or
# not ignored; a plain copy without build directories if SRCDIR is not a
# git work tree) to a temporary directory, apply one sed, check that the
# sed really changed the file (so this cannot pass vacuously), configure
# a build, build only the targets the catching tests need, run those tests
# and require that at least one FAILS. Exit 0 only if every mutant was
# caught; prints which test caught which mutant.
#
# Mutants:
#   retry-after   lib/src/textscan.c (the library's text scanner, which bctl
#                 exec and brk_http_classify() share): the "Retry-After: N"
#                 detector records nothing (match_header_value's delta-
#                 seconds note_wait() call removed)
#                 -> tests/cli 'scan' (retry_after_header_gives_the_wait_in_ms ...) and
#                    tests/integration 'it_bctl_retry_after' (bctl exec)
#   no-failures   lib/src/release.c: closed_failure() returns at once, so
#                 consecutive failures never open a breaker
#                 -> tests/unit 'transitions' (closed_to_open_at_threshold),
#                    tests/integration 'it_shared_trip' and
#                    tests/integration 'it_trip_quorum'
#   stale-handle  lib/src/internal.h: brk__fresh() never notices that the
#                 handle's record was retired (the head check always passes)
#                 -> tests/integration 'it_retire_handle' (the old handle
#                    writes into the record of the name that took its slot)
#                    and tests/unit 'retire'
#
# A test counts as catching a mutant only if meson ran it and reported it
# failed ("Fail: 1" in its summary; a test that does not exist or was not
# built makes the run BROKEN, not caught), and the same tests first pass
# on an unmutated copy (the baseline), so the failure is the mutant's.
#
# Takes well under a minute here, at most a few (four configures, four
# small builds).
set -u

SRC=${1:?usage: mutation_check.sh SOURCE_DIR}
SRC=$(cd "$SRC" && pwd) || exit 1
WORK=$(mktemp -d /tmp/brk-mutation.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
caught=0
missed=0
broken=0

# copy_tree DEST: the source tree without build directories.
copy_tree() {
	local dest=$1
	mkdir -p "$dest"
	if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				[ -e "$f" ] && printf '%s\0' "$f"
			done | xargs -0 cp --parents -t "$dest")
	else
		(cd "$SRC" && tar --exclude='./build*' --exclude='./.git' -cf - .) |
			(cd "$dest" && tar -xf -)
	fi
}

# build NAME TREE "TARGETS": configure and build TREE in $WORK/NAME-build.
build() {
	local name=$1 tree=$2 targets=$3 bdir="$WORK/$1-build"
	if ! meson setup "$bdir" "$tree" -Dwerror=false -Ddemo=disabled \
		-Dbuildtype=debugoptimized >"$WORK/$name-setup.log" 2>&1; then
		tail -20 "$WORK/$name-setup.log"
		echo "BROKEN - $name: configure failed"
		return 1
	fi
	# shellcheck disable=SC2086
	if ! ninja -C "$bdir" $targets >"$WORK/$name-build.log" 2>&1; then
		tail -20 "$WORK/$name-build.log"
		echo "BROKEN - $name: build failed"
		return 1
	fi
}

# run_test NAME TEST: 0 passed, 1 failed, 2 did not run properly.
run_test() {
	local log="$WORK/$1-$2.log"
	meson test -C "$WORK/$1-build" --no-rebuild --print-errorlogs "$2" >"$log" 2>&1
	if grep -Eq '^Ok: +1 *$' "$log" && grep -Eq '^Fail: +0 *$' "$log"; then
		return 0
	fi
	if grep -Eq '^Fail: +1 *$' "$log"; then
		return 1
	fi
	return 2
}

# Why it failed: the first lines of the test's own FAIL/ERROR output.
why_failed() {
	grep -E 'FAIL|ERROR|Failure|error:' "$WORK/$1-$2.log" |
		grep -vE '^(Fail|Unexpected|Expected|Timeout)|/[0-9]+ ' | head -3 |
		sed 's/^/         /'
}

# baseline "TARGETS" TESTS...: the tests pass on an unmutated copy.
baseline() {
	local targets=$1 t rc
	shift
	echo "=== baseline (no mutation)"
	copy_tree "$WORK/base" && build base "$WORK/base" "$targets" || {
		broken=$((broken + 1)); return; }
	for t in "$@"; do
		run_test base "$t"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "BROKEN - baseline: test $t $([ $rc -eq 1 ] && echo fails ||
				echo did not run) without any mutation"
			tail -15 "$WORK/base-$t.log"
			broken=$((broken + 1))
		else
			echo "ok - baseline: $t passes"
		fi
	done
}

# mutant NAME FILE SED_EXPR GREP_PATTERN "TARGETS" TESTS...
#   GREP_PATTERN must match the mutated file and not the original one.
mutant() {
	local name=$1 file=$2 expr=$3 pat=$4 targets=$5
	shift 5
	local tree="$WORK/$name" t rc failed_by=() passed=() bad_run=()
	echo "=== mutant $name: $file"
	copy_tree "$tree" || { echo "copy failed"; broken=$((broken + 1)); return; }
	if [ ! -f "$tree/$file" ]; then
		echo "BROKEN - $name: $file is not in the copy"
		broken=$((broken + 1))
		return
	fi
	sed -i -e "$expr" "$tree/$file"
	if cmp -s "$SRC/$file" "$tree/$file" || ! grep -q -e "$pat" "$tree/$file" ||
	   grep -q -e "$pat" "$SRC/$file"; then
		echo "BROKEN - $name: the sed did not change $file as intended"
		broken=$((broken + 1))
		return
	fi
	diff -u "$SRC/$file" "$tree/$file" | sed -n '3,$p' | head -20
	build "$name" "$tree" "$targets" || { broken=$((broken + 1)); return; }
	for t in "$@"; do
		run_test "$name" "$t"
		rc=$?
		case $rc in
		0) passed+=("$t") ;;
		1) failed_by+=("$t"); why_failed "$name" "$t" ;;
		*) bad_run+=("$t"); tail -15 "$WORK/$name-$t.log" ;;
		esac
	done
	if [ "${#bad_run[@]}" -gt 0 ]; then
		echo "BROKEN - mutant $name: did not run properly: ${bad_run[*]}"
		broken=$((broken + 1))
	elif [ "${#failed_by[@]}" -gt 0 ]; then
		echo "caught - mutant $name caught by: ${failed_by[*]}${passed[*]:+ (passed anyway: ${passed[*]})}"
		caught=$((caught + 1))
	else
		echo "MISSED - mutant $name: every test passed (${passed[*]})"
		missed=$((missed + 1))
	fi
}

baseline "tests/cli/test_scan tools/bctl tests/integration/it_bctl_retry_after \
	tests/unit/test_transitions tests/integration/it_shared_trip tests/integration/it_trip_quorum \
	tests/integration/it_retire_handle tests/unit/test_retire" \
	scan it_bctl_retry_after transitions it_shared_trip it_trip_quorum \
	it_retire_handle retire

# (a) the Retry-After detector does nothing
mutant retry-after lib/src/textscan.c \
	's|^\t\tnote_wait(f, milli); /\* thousandths of a second are ms \*/$|\t\t(void)milli; /* MUTANT: Retry-After ignored */|' \
	'MUTANT: Retry-After ignored' \
	"tests/cli/test_scan tools/bctl tests/integration/it_bctl_retry_after" \
	scan it_bctl_retry_after

# (b) failures of a closed breaker are not counted toward the threshold
mutant no-failures lib/src/release.c \
	'/^static int closed_failure(/,/^}/ s|^\tint tries;$|\tint tries;\n\n\treturn 0; /* MUTANT: failures never counted */|' \
	'MUTANT: failures never counted' \
	"tests/unit/test_transitions tests/integration/it_shared_trip tests/integration/it_trip_quorum" \
	transitions it_shared_trip it_trip_quorum

# (c) a handle never notices its record was retired
mutant stale-handle lib/src/fresh.h \
	's|^\tif (__builtin_expect(uatomic_read(&v->rec->head) == v->head, 1))$|\tif ((void)v, 1) /* MUTANT: head never checked */|' \
	'MUTANT: head never checked' \
	"tests/integration/it_retire_handle tests/unit/test_retire" \
	it_retire_handle retire

echo "# mutation check: $caught caught, $missed missed, $broken broken"
[ "$missed" -eq 0 ] && [ "$broken" -eq 0 ] && [ "$caught" -eq 3 ]
