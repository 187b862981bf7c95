#!/usr/bin/env bash
# update-baseline.sh [BUILD_DIR] - regenerate tests/abi/libbreaker.abi from
# BUILD_DIR/lib/libbreaker.so.0 (default: build). Run it only for a
# deliberate change that keeps old programs working (an addition, or a
# struct grown by the rules of "Growing structs" in breaker.h), after
# reading the report of `meson test -C BUILD_DIR --suite abi`; commit the
# new baseline together with the change and say why in the message.
# BUILD_DIR must be a plain build with debug info (buildtype debug or
# debugoptimized, no sanitizer).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-$src/build}
lib=$build/lib/libbreaker.so.0
[ -e "$lib" ] || { echo "no $lib: build first (ninja -C $build)" >&2; exit 1; }
readelf -S "$lib" | grep -q '\.debug_info' ||
	{ echo "$lib has no debug info: use a debugoptimized build" >&2; exit 1; }
bash "$here/abi_dump.sh" "$lib" "$src/lib/include" "$here/libbreaker.abi"
echo "wrote $here/libbreaker.abi ($(grep -c '<elf-symbol' "$here/libbreaker.abi") symbols)"
