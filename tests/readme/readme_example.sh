#!/usr/bin/env bash
# The README's C example must compile as written and run: extract the first
# ```c block, build it against this tree's libbreaker, run it on a private
# segment.
set -u
readme=$1 incdir=$2 libfile=$3 sanitize=${4:-none}
san=()
[ "$sanitize" != none ] && [ -n "$sanitize" ] && san=(-fsanitize="$sanitize")
tmp=$(mktemp -d)
shm="/brkreadme-$$"
trap 'rm -rf "$tmp"; rm -f "/dev/shm${shm}"' EXIT
awk '/^```c$/ {on=1; next} /^```$/ && on {exit} on {print}' "$readme" > "$tmp/example.c"
if [ ! -s "$tmp/example.c" ]; then echo "no C example in $readme"; exit 1; fi
if ! cc -std=gnu11 -Wall -Wextra -Werror "${san[@]}" -I"$incdir" "$tmp/example.c" "$libfile" \
	$(pkg-config --cflags --libs liburcu-cds liburcu-bp) -lpthread -lm -o "$tmp/example"; then
	echo "README example does not compile"; exit 1
fi
out=$(BREAKERD_SHM=$shm "$tmp/example" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "README example exited $rc"; exit 1; }
[ -e "/dev/shm${shm}" ] || { echo "example did not create its segment"; exit 1; }
# Every further ```c block is a fragment: it must compile inside a function
# that has an attached segment `seg` and a do_request() of the caller's.
awk '/^```c$/ {n++; if (n > 1) {on=1; next}} /^```$/ && on {on=0; print "/* -- */"} on {print}' \
	"$readme" > "$tmp/fragments.body"
if [ -s "$tmp/fragments.body" ]; then
	{
		echo '#include <unistd.h>'
		echo '#include <breaker.h>'
		echo 'static int do_request(void) { return 1; }'
		echo 'int fragment(brk_segment *seg);'
		echo 'int fragment(brk_segment *seg) {'
		cat "$tmp/fragments.body"
		echo 'return 0; }'
	} > "$tmp/fragments.c"
	if ! cc -std=gnu11 -Wall -Wextra -Werror -I"$incdir" -c "$tmp/fragments.c" -o "$tmp/fragments.o"; then
		echo "a README C fragment does not compile"; exit 1
	fi
fi
echo "README example compiles and runs; C fragments compile"
