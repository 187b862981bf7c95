#!/usr/bin/env bash
# bench/callgrind.sh [BUILD_DIR]
#
# Instructions per acquire+release, and syscalls on the fast path.
#  1. valgrind --tool=callgrind runs `breakerd-bench --callgrind-op N`
#     (attach, one breaker, 1000 warm-up pairs, N measured pairs, unlink)
#     with N = 0 and N = OPS; (Ir(OPS) - Ir(0)) / OPS is the user-space
#     instruction count of one acquire+release (setup cancels out).
#  2. strace -c -f runs the same mode with N = 1e5 and N = 1e6: if the
#     syscall counts are equal, the fast path makes no syscall.
# valgrind and strace come from the Debian packages valgrind and strace
# (apt-get install valgrind strace).
# Note: valgrind hides the vDSO, so under callgrind clock_gettime enters
# the kernel; its user-space instructions (the libc wrapper) are counted,
# the kernel's are not. strace runs natively (vDSO clock, no syscall).
set -u

build=${1:-./build}
bin="$build/bench/breakerd-bench"
ops=${CALLGRIND_OPS:-100000}
if [ ! -x "$bin" ]; then
	echo "callgrind.sh: $bin not found; build first:" >&2
	echo "  meson setup $build -Dbuildtype=release && ninja -C $build" >&2
	exit 2
fi
for tool in valgrind strace; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "callgrind.sh: $tool not installed (apt-get install $tool)" >&2
		exit 2
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/breakerd-callgrind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Total Ir of one callgrind run of --callgrind-op $1.
ir() {
	local out="$tmp/cg.$1"
	if ! valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$bin" --callgrind-op "$1" >"$tmp/cg.$1.stdout" 2>"$tmp/cg.$1.log"; then
		echo "callgrind.sh: valgrind run with $1 ops failed:" >&2
		cat "$tmp/cg.$1.log" >&2
		return 1
	fi
	awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

# Total syscalls (all threads) of one strace -c -f run of --callgrind-op $1.
syscalls() {
	local out="$tmp/st.$1"
	if ! strace -c -f -o "$out" "$bin" --callgrind-op "$1" >/dev/null; then
		echo "callgrind.sh: strace run with $1 ops failed" >&2
		return 1
	fi
	# rows: % time, seconds, usecs/call, calls, [errors,] syscall
	awk '$1 ~ /^[0-9.]+$/ && $NF != "total" { n += $4 } END { print n + 0 }' "$out"
}

echo "== instructions per acquire+release (valgrind --tool=callgrind)"
ir0=$(ir 0) || exit 1
ir1=$(ir "$ops") || exit 1
awk -v a="$ir0" -v b="$ir1" -v n="$ops" 'BEGIN {
	printf "Ir with 0 measured ops:      %d\n", a
	printf "Ir with %d measured ops: %d\n", n, b
	printf "instructions per acquire+release: %.1f  ((Ir(%d) - Ir(0)) / %d)\n", (b - a) / n, n, n
}'

echo
echo "== syscalls on the fast path (strace -c -f)"
s5=$(syscalls 100000) || exit 1
s6=$(syscalls 1000000) || exit 1
echo "syscalls with 100000 acquire+release:  $s5"
echo "syscalls with 1000000 acquire+release: $s6"
if [ "$s5" -eq "$s6" ]; then
	echo "syscalls on the fast path: 0"
else
	awk -v a="$s5" -v b="$s6" 'BEGIN {
		printf "syscalls on the fast path: %.4f per acquire+release (%d more for 900000 more ops)\n", (b - a) / 900000, b - a }'
	echo "strace -c for 1e6 ops:"
	cat "$tmp/st.1000000"
	exit 1
fi
echo "(strace -c table for the 1e6-op run: setup and exit only)"
cat "$tmp/st.1000000"
