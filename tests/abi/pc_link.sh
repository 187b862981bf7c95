#!/usr/bin/env bash
# pc_link.sh PC_DIR LIBDIR SANITIZE - breaker.pc links both libraries:
#   cc prog.c $(pkg-config --cflags --libs breaker)            -> libbreaker.so.0
#   cc -static prog.c $(pkg-config --cflags --libs --static breaker) -> libbreaker.a
# checked with this build's uninstalled breaker.pc (meson-uninstalled/),
# which differs from the installed one only in its paths. Each program
# must run and use the struct-size convention of the header it was built
# with. In a sanitizer build the program is compiled with the same
# -fsanitize (the library needs its runtime) and the -static link, which
# the sanitizers do not support, is skipped.
set -u
pcdir=$1 libdir=$2 san=${3:-none}
command -v pkg-config >/dev/null 2>&1 || { echo "SKIP: pkg-config not installed"; exit 77; }
sanflags=()
[ -n "$san" ] && [ "$san" != none ] && sanflags=(-fsanitize="$san")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <breaker.h>
int main(void)
{
	struct brk_config c;
	const char *what = NULL;

	brk_config_init(&c);
	if (c.size != sizeof c || brk_config_validate(&c, &what) != 0) {
		fprintf(stderr, "config: size %u, bad %s\n", c.size, what ? what : "-");
		return 1;
	}
	printf("%s\n", brk_strerror(-BRK_EOPEN));
	return 0;
}
PROG
export PKG_CONFIG_PATH=$pcdir
fail=0
if ! cc -std=gnu11 -Wall -Wextra -Werror "${sanflags[@]}" "$tmp/prog.c" $(pkg-config --cflags --libs breaker) -o "$tmp/shared"; then
	echo "FAIL: shared link with pkg-config --libs breaker"; exit 1
fi
if ! readelf -d "$tmp/shared" | grep -q 'NEEDED.*\[libbreaker\.so\.0\]'; then
	echo "FAIL: the default link does not use libbreaker.so.0:"; readelf -d "$tmp/shared" | grep NEEDED; fail=1
fi
out=$(LD_LIBRARY_PATH=$libdir "$tmp/shared") || { echo "FAIL: shared program exited $?"; fail=1; }
[ "$out" = "refused: circuit breaker open" ] || { echo "FAIL: shared program said '$out'"; fail=1; }

if [ ${#sanflags[@]} -gt 0 ]; then
	[ $fail -eq 0 ] && echo "OK: breaker.pc links libbreaker.so.0 by default (-static not tried under -fsanitize=$san)"
	exit $fail
fi
# -static: libbreaker.a and the static liburcu (Debian's liburcu-dev has them)
if ! cc -std=gnu11 -Wall -Wextra -Werror -static "$tmp/prog.c" \
	$(pkg-config --cflags --libs --static breaker) -o "$tmp/static" 2> "$tmp/static.err"; then
	cat "$tmp/static.err"; echo "FAIL: static link with pkg-config --static"; exit 1
fi
if readelf -d "$tmp/static" 2>/dev/null | grep -q 'NEEDED.*libbreaker'; then
	echo "FAIL: the --static link still needs libbreaker.so"; fail=1
fi
out=$("$tmp/static") || { echo "FAIL: static program exited $?"; fail=1; }
[ "$out" = "refused: circuit breaker open" ] || { echo "FAIL: static program said '$out'"; fail=1; }
[ $fail -eq 0 ] && echo "OK: breaker.pc links libbreaker.so.0 by default and libbreaker.a with --static"
exit $fail
