#!/bin/sh
# check_lmap.sh - model-check tests/model/lmap.pml (the lease map's mark /
# unmark protocol) with spin: the protocol holds; STRICT (no exemption for
# a claimer killed between claim and re-mark) and every bug variant fail.
# Exit 0 if every run gave its expected verdict, 1 if not, 77 if spin or
# gcc is missing.
#
# Usage: check_lmap.sh [MODEL.pml]   (default: lmap.pml next to this script)
set -u

here=$(cd "$(dirname "$0")" && pwd)
model=${1:-$here/lmap.pml}

for tool in spin gcc; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool not installed (Debian: apt-get install spin gcc)"
		exit 77
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/brk-lmap.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
cp "$model" "$work/lmap.pml" || exit 1
cd "$work" || exit 1
fails=0

# run NAME EXPECT(ok|violation) "SPIN_DEFINES"
run() {
	name=$1 expect=$2 defs=$3
	rm -f pan pan.c pan.h pan.m pan.b pan.t pan.p ./*.trail
	# shellcheck disable=SC2086
	if ! spin -a $defs lmap.pml >spin.out 2>&1 ||
	   ! gcc -O2 -w -DSAFETY -DCOLLAPSE -DMEMLIM=1024 -o pan pan.c 2>gcc.out; then
		echo "FAIL $name: could not build the verifier"
		cat spin.out gcc.out 2>/dev/null
		fails=$((fails + 1))
		return
	fi
	./pan -m100000 >pan.out 2>&1
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | head -n 1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | head -n 1)
	if grep -q "max search depth too small\|out of memory" pan.out; then
		echo "FAIL $name: search incomplete"
		fails=$((fails + 1))
		return
	fi
	case "$expect:${errors:-none}" in
	ok:0) echo "ok   $name: holds ($states states)" ;;
	violation:[1-9]*) echo "ok   $name: violation found, as expected" ;;
	*) echo "FAIL $name: expected $expect, errors=${errors:-none}"
		cat pan.out; fails=$((fails + 1)) ;;
	esac
}

run protocol ok ""
run protocol-3-passes ok "-DPASSES=3"
run strict-window-is-real violation "-DSTRICT"
run bug-no-remark violation "-DNO_REMARK"
run bug-no-recheck violation "-DNO_RECHECK"
run bug-no-l1-recheck violation "-DNO_L1_RECHECK"
run bug-fast-path-l0-only violation "-DFAST_L0_ONLY"
[ "$fails" -eq 0 ] && echo "lmap model: every verdict as expected" && exit 0
echo "lmap model: $fails unexpected verdict(s)"
exit 1
