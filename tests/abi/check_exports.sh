#!/usr/bin/env bash
# check_exports.sh LIBFILE HEADER - libbreaker.so.0 is what breaker.h says:
#  - SONAME libbreaker.so.0 (readelf -d);
#  - it defines only brk_* symbols (nm -D --defined-only; the version node
#    BREAKER_0 itself is the one other entry), each with version BREAKER_0;
#  - every function breaker.h marks BRK_API is exported, and nothing else;
#  - no function is declared in breaker.h without BRK_API.
set -u
lib=$1 hdr=$2
for t in readelf nm; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not installed (Debian: binutils)"; exit 77; }
done
fail=0
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != libbreaker.so.0 ]; then
	echo "FAIL: SONAME is '$soname', not libbreaker.so.0"; fail=1
fi
others=$(nm -D --defined-only "$lib" | awk '!($2 == "A" && $3 == "BREAKER_0") && $3 !~ /^brk_/')
if [ -n "$others" ]; then
	echo "FAIL: symbols exported that are not brk_*:"; echo "$others"; fail=1
fi
internals=$(nm -D --defined-only "$lib" | awk '$3 ~ /^brk__/')
if [ -n "$internals" ]; then
	echo "FAIL: internal brk__ symbols exported:"; echo "$internals"; fail=1
fi
unversioned=$(nm -D --defined-only --with-symbol-versions "$lib" 2>/dev/null |
	awk '$3 ~ /^brk_/ && $3 !~ /@@BREAKER_0$/')
if [ -n "$unversioned" ]; then
	echo "FAIL: brk_ symbols without version BREAKER_0:"; echo "$unversioned"; fail=1
fi
# a public function declared without BRK_API would be hidden (and a
# program linking libbreaker.so.0 would fail to link against it)
unmarked=$(grep -nE '^(const |unsigned |struct [a-z_]+ |enum [a-z_]+ )?[a-z_0-9]+[ *]+\(?brk_[a-z0-9_]+\)?[ ]*\(' "$hdr" | grep -v 'BRK_API')
if [ -n "$unmarked" ]; then
	echo "FAIL: public functions in breaker.h without BRK_API (add it):"; echo "$unmarked"; fail=1
fi
exported=$(nm -D --defined-only "$lib" | awk '$3 ~ /^brk_/ {sub(/@.*/, "", $3); print $3}' | sort -u)
# BRK_API [type] [(]brk_name[)]( ... : the declared public functions
declared=$(tr '\n' ' ' < "$hdr" | grep -oE 'BRK_API [^;{}]*' |
	grep -oE '\(?brk_[a-z0-9_]+\)?[ ]*\(' | head -n 100000 |
	grep -oE 'brk_[a-z0-9_]+' | sort -u)
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
if [ -n "$missing" ]; then
	echo "FAIL: declared BRK_API in breaker.h but not exported:"; echo "$missing"; fail=1
fi
if [ -n "$extra" ]; then
	echo "FAIL: exported but not declared BRK_API in breaker.h:"; echo "$extra"; fail=1
fi
[ $fail -eq 0 ] && echo "OK: SONAME $soname; $(echo "$exported" | wc -l) brk_* symbols, all declared in breaker.h, version BREAKER_0"
exit $fail
