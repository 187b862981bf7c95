#!/usr/bin/env bash
# readme_example.sh SRCDIR INCDIR LIBFILE [SANITIZE] - every ```c block of
# README.md and docs/guide/*.md compiles as written: a block with main() is
# a whole program, built against this tree's libbreaker and run on a
# private segment (it must exit 0 and create the segment); any other block
# is a fragment, which must compile inside a function that has an attached
# segment `seg` and a do_request() of the caller's. The README must have a
# whole program (its C example).
set -u
src=$1 incdir=$2 libfile=$3 sanitize=${4:-none}
san=()
[ "$sanitize" != none ] && [ -n "$sanitize" ] && san=(-fsanitize="$sanitize")
tmp=$(mktemp -d)
shm="/brkreadme-$$"
trap 'rm -rf "$tmp"; rm -f /dev/shm"${shm}"-*' EXIT
fail=0 programs=0 fragments=0
cd "$src" || exit 1

# blocks FILE: each ```c block of FILE into $tmp/b.N (N from 1), the fence's
# line in $tmp/b.N.line; prints the count.
blocks() {
	rm -f "$tmp"/b.*
	awk -v dir="$tmp" '
	/^ *```c *$/ { n++; on = 1; f = dir "/b." n; printf "" > f; print FNR > (f ".line"); close(f ".line"); next }
	/^ *``` *$/ && on { on = 0; close(f); next }
	on { print >> f }
	END { print n + 0 }' "$1"
}

for page in README.md docs/guide/*.md; do
	n=$(blocks "$page")
	body=$tmp/fragments.body
	: >"$body"
	for ((i = 1; i <= n; i++)); do
		where="$page:$(cat "$tmp/b.$i.line")"
		if grep -q '^int main(' "$tmp/b.$i"; then
			programs=$((programs + 1))
			cp "$tmp/b.$i" "$tmp/example.c"
			if ! cc -std=gnu11 -Wall -Wextra -Werror "${san[@]}" -I"$incdir" "$tmp/example.c" "$libfile" \
				$(pkg-config --cflags --libs liburcu-cds liburcu-bp) -lpthread -lm -o "$tmp/example"; then
				echo "FAIL - $where: the C program does not compile"; fail=1; continue
			fi
			out=$(BREAKERD_SHM=$shm-$programs "$tmp/example" 2>&1); rc=$?
			printf '%s\n' "$out"
			if [ $rc -ne 0 ]; then
				echo "FAIL - $where: the C program exited $rc"; fail=1
			elif [ ! -e "/dev/shm$shm-$programs" ]; then
				echo "FAIL - $where: the C program did not create its segment"; fail=1
			else
				echo "ok - $where: the C program compiles and runs"
			fi
		else
			fragments=$((fragments + 1))
			{ echo "#line $(($(cat "$tmp/b.$i.line") + 1)) \"$page\""; cat "$tmp/b.$i"; echo "/* -- */"; } >>"$body"
		fi
	done
	[ -s "$body" ] || continue
	{
		echo '#include <unistd.h>'
		echo '#include <breaker.h>'
		echo 'static int do_request(void) { return 1; }'
		echo 'int fragment(brk_segment *seg);'
		echo 'int fragment(brk_segment *seg) {'
		cat "$body"
		echo 'return 0; }'
	} >"$tmp/fragments.c"
	if cc -std=gnu11 -Wall -Wextra -Werror -I"$incdir" -c "$tmp/fragments.c" -o "$tmp/fragments.o"; then
		echo "ok - $page: its C fragments compile"
	else
		echo "FAIL - $page: a C fragment does not compile"; fail=1
	fi
done
awk '/^```c *$/ { c = 1 } END { exit !c }' README.md ||
	{ echo "FAIL - README.md has no C example"; fail=1; }
echo "$programs C programs built and run, $fragments fragments compiled"
[ $programs -gt 0 ] || fail=1
exit $fail
