#!/usr/bin/env bash
# check_abi.sh BASELINE LIBFILE HEADERS_DIR
#
# Compare the frozen ABI (tests/abi/libbreaker.abi) with the freshly built
# libbreaker.so.0 (abidiff of two abidw dumps made by abi_dump.sh).
# Policy: added functions are fine (other releases add brk_* functions);
# anything else abidiff reports is not: a removed or changed function or
# variable (bit 8, ABIDIFF_ABI_INCOMPATIBLE_CHANGE) and any change to an
# existing type or signature (bit 4, ABIDIFF_ABI_CHANGE, with additions
# filtered out by --no-added-syms), such as a reordered, retyped or
# removed struct member. Even a compatible growth of a struct (breaker.h,
# "Growing structs") shows as a change here: review it against those rules
# and regenerate the baseline with tests/abi/update-baseline.sh.
#
# Exit 77 (skip) only when abidw/abidiff are not installed or the library
# has no DWARF (a build without -g: there is nothing to compare types
# with). Sanitizer builds are checked too: their instrumentation does not
# change the types or the exported symbols (checked under ASan+UBSan).
set -u
base=$1 lib=$2 hdr=$3
for t in abidw abidiff readelf; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not installed (Debian: abigail-tools, binutils)"; exit 77; }
done
if ! readelf -S "$lib" | grep -q '\.debug_info'; then
	echo "SKIP: $lib has no debug info (build with -g, e.g. buildtype=debugoptimized)"
	exit 77
fi
[ -s "$base" ] || { echo "FAIL: no baseline $base (run tests/abi/update-baseline.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/abi_dump.sh" "$lib" "$hdr" "$tmp/new.abi" || { echo "FAIL: abidw failed"; exit 1; }

abidiff --no-added-syms "$base" "$tmp/new.abi" > "$tmp/diff"
rc=$?
if [ $((rc & 3)) -ne 0 ]; then
	echo "FAIL: abidiff could not compare (exit $rc)"; cat "$tmp/diff"; exit 1
fi
if [ $((rc & 8)) -ne 0 ]; then
	echo "FAIL: incompatible ABI change against $base (abidiff exit $rc):"
	cat "$tmp/diff"; exit 1
fi
if [ $((rc & 4)) -ne 0 ]; then
	echo "FAIL: an existing function or type of the ABI changed (abidiff exit $rc):"
	cat "$tmp/diff"
	echo "If it is a deliberate compatible change (breaker.h, \"Growing structs\"), regenerate the baseline with tests/abi/update-baseline.sh."
	exit 1
fi
abidiff "$base" "$tmp/new.abi" # the additions, if any, for the log
echo "OK: libbreaker.so.0 keeps the ABI of $(basename "$base") (additions only, if any)"
exit 0
