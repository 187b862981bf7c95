#!/bin/sh
# check.sh - model-check tests/model/lease.pml with spin.
#
# For each run: spin -a (with the run's -D switches), gcc pan.c, run pan,
# print the state vector, the states stored and the time, and compare the
# verdict with the expected one:
#   - the fixed protocol: every safety assertion, (a) (b) (d), holds; the
#     liveness formulas c_probe, c_permit (with breakerd) and c_late
#     (without breakerd) hold under weak fairness;
#   - every bug variant makes spin report a violation (errors > 0).
# Exit 0 if every run gave its expected verdict, 1 if not, 77 if spin or
# gcc is missing.
#
# Usage: check.sh [MODEL.pml]   (default: lease.pml next to this script)
set -u

here=$(cd "$(dirname "$0")" && pwd)
model=${1:-$here/lease.pml}

for tool in spin gcc; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool not installed (Debian: apt-get install spin gcc)"
		exit 77
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/brk-model.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
cp "$model" "$work/lease.pml" || exit 1
cd "$work" || exit 1

fails=0
runs=0
# Memory bound for pan (MB): a run that hits it is a failure, not a pass.
memlim=${BRK_MODEL_MEMLIM:-2048}

# run NAME EXPECT(ok|violation) "SPIN_DEFINES" "PAN_CFLAGS" "PAN_ARGS"
run() {
	name=$1 expect=$2 defs=$3 cflags=$4 args=$5
	runs=$((runs + 1))
	rm -f pan pan.c pan.h pan.m pan.b pan.t pan.p ./*.trail
	# shellcheck disable=SC2086
	if ! spin -a $defs lease.pml >spin.out 2>&1; then
		echo "FAIL $name: spin -a $defs"
		cat spin.out
		fails=$((fails + 1))
		return
	fi
	# shellcheck disable=SC2086
	if ! gcc -O2 -w -DMEMLIM="$memlim" -DCOLLAPSE $cflags -o pan pan.c \
		2>gcc.out; then
		echo "FAIL $name: gcc pan.c"
		cat gcc.out
		fails=$((fails + 1))
		return
	fi
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	./pan -m200000 $args >pan.out 2>&1
	t1=$(date +%s.%N)
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | tail -1)
	vec=$(sed -n 's/^State-vector \([0-9]*\) byte.*/\1/p' pan.out | tail -1)
	stored=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | tail -1)
	what=$(grep -E '^pan:[0-9]+: .*(assertion violated|acceptance cycle|invalid end state)' \
		pan.out | head -1 | sed 's/^pan:[0-9]*: *//')
	secs=$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')
	incomplete=
	if grep -q -E 'out of memory|reached -DMEMLIM|max search depth too small' \
		pan.out; then
		incomplete=" (INCOMPLETE: memory or depth bound hit)"
	fi
	line="$name: state-vector ${vec:-?} B, ${stored:-?} states stored, ${secs} s, errors ${errors:-?}"
	[ -n "$what" ] && line="$line [$what]"
	if [ -z "$errors" ]; then
		echo "FAIL $line: pan gave no verdict"
		tail -20 pan.out
		fails=$((fails + 1))
	elif [ "$expect" = ok ] && { [ "$errors" != 0 ] || [ -n "$incomplete" ]; }; then
		echo "FAIL $line$incomplete (expected: no violation)"
		fails=$((fails + 1))
	elif [ "$expect" = violation ] && [ "$errors" = 0 ]; then
		echo "FAIL $line$incomplete (expected: spin reports a violation)"
		fails=$((fails + 1))
	else
		echo "ok   $line"
	fi
}

SAFE=-DSAFETY
LIVE=-DNFAIR=3
# The fixed protocol (2 workers, 1 call each, breakerd, an operator).
run "fixed: safety (a) (b) (d)" ok "" "$SAFE" ""
run "fixed: liveness c_probe (breakerd frees a dead probe)" ok \
	"-DLIVE" "$LIVE" "-a -f -N c_probe"
run "fixed: liveness c_permit (breakerd frees a dead permit)" ok \
	"-DLIVE" "$LIVE" "-a -f -N c_permit"
run "fixed: liveness c_late (no breakerd: a refused caller reclaims)" ok \
	"-DLIVE -DNODAEMON" "$LIVE" "-a -f -N c_late"
# The bug variants: each must be caught.
run "bug: reset breaks the bulkhead (d)" violation \
	"-DBUG_RESET_BULKHEAD" "$SAFE" ""
run "bug: probe slot freed before the verdict (a)" violation \
	"-DBUG_FREE_BEFORE_VERDICT" "$SAFE" ""
run "bug: today's claim evicts a newer-generation probe (b)" violation \
	"-DBUG_CLAIM_OTHER_GEN -DATTEMPTS1=2" "$SAFE" ""
run "bug: reclaim by plain store (b)" violation \
	"-DBUG_RECLAIM_STORE -DNW=3" "$SAFE" ""
run "bug: reclaim only current-epoch permits (c_permit)" violation \
	"-DLIVE -DBUG_RECLAIM_EPOCH" "$LIVE" "-a -f -N c_permit"
run "bug: reclaim only current-epoch permits, no breakerd (c_late)" violation \
	"-DLIVE -DNODAEMON -DBUG_RECLAIM_EPOCH" "$LIVE" "-a -f -N c_late"
# Deeper runs (3 workers; ~25 M states, ~45 s each): BRK_MODEL_DEEP=1.
if [ "${BRK_MODEL_DEEP:-0}" = 1 ]; then
	run "bug: today's try_probe admits a reclaimed probe (a)" violation \
		"-DBUG_ADMIT_UNOWNED -DNW=3" "$SAFE" ""
	run "fixed: safety, worker 1 makes 2 calls" ok "-DATTEMPTS1=2" "$SAFE" ""
fi

echo "$((runs - fails)) of $runs model runs gave the expected verdict"
[ "$fails" = 0 ]
