#!/usr/bin/env bash
# abi_dump.sh LIBFILE HEADERS_DIR OUT - the ABI of libbreaker.so.0 as
# abidw's XML, made comparable across build directories and machines: only
# the types reachable from breaker.h (--headers-dir, --drop-private-types),
# no locations, no corpus or compilation path, translation-unit paths cut
# to lib/src/FILE. Used by update-baseline.sh and check_abi.sh alike, so
# the baseline and the fresh dump are made the same way.
set -eu
lib=$1 hdr=$2 out=$3
abidw --no-corpus-path --no-comp-dir-path --no-show-locs \
	--drop-private-types --headers-dir "$hdr" --out-file "$out.tmp" "$lib"
sed -E "s|path='[^']*lib/src/|path='lib/src/|" "$out.tmp" > "$out"
rm -f "$out.tmp"
