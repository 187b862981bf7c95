#!/usr/bin/env bash
# mutation_check.sh [PYTHON] - do the integration tests catch a broken adapter?
#
# Copies the breakerd package that PYTHON imports (its compiled _core
# included) twice into a temporary directory, puts this source tree's
# bindings/python/breakerd/integrations/*.py into both copies, and in one copy
# applies a sed to breakerd/integrations/requests.py -- the shipped code
# has no hook for this. Checks that the sed really changed the file (so
# this cannot pass vacuously) and that the child pytest imports the copy,
# then runs the catching tests of tests/python/integrations with
# PYTHONPATH set to each copy: the unmutated copy (baseline) must pass,
# the mutant must FAIL (pytest exit 1: tests failed; an import or usage
# error, exit >= 2, makes the run BROKEN, not caught). Exit 0 only if every
# mutant was caught; prints which tests caught which mutant.
#
# Mutants:
#   429-detection  the adapter reports every 429 as a 200 and drops the
#                  headers (so no Retry-After): 429 detection does nothing
#                  -> test_429_retry_after_cools_and_refuses_without_sending,
#                     test_retry_after_longer_than_max_wait_opens_the_breaker,
#                     test_outcome_follows_the_library_classifier
#   connect-lost   a connection error cancels the permit instead of counting
#                  a connect failure
#                  -> test_connection_refused_is_a_connect_failure_and_re_raised
#   celery-429     (integrations/celery.py) retry_countdown no longer sees a
#                  429/503 response: a rate-limited task is not retried
#                  -> test_429_response_returned_becomes_retry_after_...,
#                     test_503_http_error_without_retry_after_...
#
# Takes about 10 s (four small pytest runs).
set -u

PY=${1:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../.." && pwd)
TESTS="$SRC/tests/python/integrations"
WORK=$(mktemp -d /tmp/brk-pymutation.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

pkg=$(cd "$WORK" && "$PY" -c 'import os, breakerd; print(os.path.dirname(os.path.realpath(breakerd.__file__)))') || {
	echo "BROKEN - $PY cannot import breakerd (set PYTHONPATH to the built package)"
	exit 2
}

# make_copy NAME: $WORK/NAME/breakerd = the package + this tree's integrations
make_copy() {
	mkdir -p "$WORK/$1"
	cp -rL "$pkg" "$WORK/$1/breakerd" || return 1
	rm -rf "$WORK/$1/breakerd/integrations"
	mkdir -p "$WORK/$1/breakerd/integrations"
	cp "$SRC"/bindings/python/breakerd/integrations/*.py "$WORK/$1/breakerd/integrations/"
	find "$WORK/$1" -name __pycache__ -prune -exec rm -rf {} +
}

# run_tests NAME SELECTION [TEST_FILE]: the pytest exit status
run_tests() {
	local where file=${3:-test_requests_adapter.py}
	where=$(cd "$WORK" && PYTHONPATH="$WORK/$1" "$PY" -c \
		'import breakerd.integrations.requests as m; print(m.__file__)')
	case "$where" in
	"$WORK/$1/"*) ;;
	*) echo "BROKEN - $1: the child imported $where, not the copy"; return 2 ;;
	esac
	(cd "$WORK" && PYTHONPATH="$WORK/$1" "$PY" -m pytest -q -p no:cacheprovider \
		-W ignore::DeprecationWarning "$TESTS/$file" -k "$2") \
		>"$WORK/$1.log" 2>&1
}

caught=0
missed=0
broken=0

# mutant NAME SELECTION SED_EXPR [MODULE TEST_FILE]
mutant() {
	local name=$1 sel=$2 expr=$3 module=${4:-requests} tfile=${5:-test_requests_adapter.py} f rc
	make_copy "$name" || { echo "BROKEN - $name: copy failed"; broken=$((broken + 1)); return; }
	f="$WORK/$name/breakerd/integrations/$module.py"
	cp "$f" "$WORK/$name.orig"
	sed -i -e "$expr" "$f"
	if cmp -s "$f" "$WORK/$name.orig"; then
		echo "BROKEN - $name: the sed changed nothing (the code moved?)"
		broken=$((broken + 1))
		return
	fi
	run_tests "$name" "$sel" "$tfile"
	rc=$?
	if [ $rc -eq 1 ]; then
		echo "CAUGHT - $name by:"
		grep -E '^FAILED ' "$WORK/$name.log" | sed 's/^/    /'
		caught=$((caught + 1))
	elif [ $rc -eq 0 ]; then
		echo "MISSED - $name: the tests still pass"
		tail -3 "$WORK/$name.log"
		missed=$((missed + 1))
	else
		echo "BROKEN - $name: pytest exit $rc"
		tail -20 "$WORK/$name.log"
		broken=$((broken + 1))
	fi
}

SEL_429="429 or retry_after or classifier"
SEL_CONNECT="connection_refused"
SEL_CELERY="429_response or 503_http_error"

make_copy baseline || { echo "BROKEN - baseline copy failed"; exit 2; }
run_tests baseline "$SEL_429 or $SEL_CONNECT"
rc=$?
if [ $rc -ne 0 ]; then
	echo "BROKEN - the baseline (unmutated copy) fails: pytest exit $rc"
	tail -20 "$WORK/baseline.log"
	exit 2
fi
echo "baseline: $(tail -1 "$WORK/baseline.log")"
run_tests baseline "$SEL_CELERY" test_celery_retry.py
rc=$?
if [ $rc -ne 0 ]; then
	echo "BROKEN - the baseline (unmutated copy) fails the Celery tests: pytest exit $rc"
	tail -20 "$WORK/baseline.log"
	exit 2
fi
echo "baseline (celery): $(tail -1 "$WORK/baseline.log")"

mutant 429-detection "$SEL_429" \
	's/permit\.report_http(response\.status_code, response\.headers)/permit.report_http(200 if response.status_code == 429 else response.status_code, {})/'
mutant connect-lost "$SEL_CONNECT" \
	's/permit\.failure(reason="connect")/permit.cancel()/'

mutant celery-429 "$SEL_CELERY" \
	's/    if reason not in _COOLING_REASONS:/    if True:/' celery test_celery_retry.py

echo "mutants: $caught caught, $missed missed, $broken broken"
[ $missed -eq 0 ] && [ $broken -eq 0 ]
