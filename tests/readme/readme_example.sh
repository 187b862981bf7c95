#!/usr/bin/env bash
# The README's C example must compile as written and run: extract the first
# ```c block, build it against this tree's libbreaker, run it on a private
# segment.
set -u
readme=$1 incdir=$2 libfile=$3
tmp=$(mktemp -d)
shm="/brkreadme-$$"
trap 'rm -rf "$tmp"; rm -f "/dev/shm${shm}"' EXIT
awk '/^```c$/ {on=1; next} /^```$/ && on {exit} on {print}' "$readme" > "$tmp/example.c"
if [ ! -s "$tmp/example.c" ]; then echo "no C example in $readme"; exit 1; fi
if ! cc -std=gnu11 -Wall -Wextra -Werror -I"$incdir" "$tmp/example.c" "$libfile" \
	$(pkg-config --cflags --libs liburcu-cds liburcu-bp) -lpthread -o "$tmp/example"; then
	echo "README example does not compile"; exit 1
fi
out=$(BREAKERD_SHM=$shm "$tmp/example" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "README example exited $rc"; exit 1; }
[ -e "/dev/shm${shm}" ] || { echo "example did not create its segment"; exit 1; }
echo "README example compiles and runs"
