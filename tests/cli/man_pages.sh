#!/usr/bin/env bash
# man_pages.sh BCTL BREAKERD BREAKER_H BCTL_1 BREAKERD_8 LIBBREAKER_3 VERSION
# The man pages (docs/man/*.scd, built by scdoc) against the programs and
# the header they describe, so the pages cannot fall behind:
#   - every long option that `bctl help` names appears in bctl(1), and
#     every one of `breakerd --help` in breakerd(8);
#   - every public function of breaker.h (BRK_API) appears in libbreaker(3);
#   - each page renders with `man --warnings -l` and `groff -ww` without a
#     warning, and each character set it spells out (A-Z a-z 0-9 . _ -)
#     renders as written (not as a list item);
#   - `bctl --version` and `breakerd --version` print "PROG (breakerd)
#     VERSION", meson's project version.
set -u
BCTL=${1:?usage: man_pages.sh BCTL BREAKERD BREAKER_H BCTL_1 BREAKERD_8 LIBBREAKER_3 VERSION}
BREAKERD=${2:?} HEADER=${3:?} BCTL_1=${4:?} BREAKERD_8=${5:?} LIB_3=${6:?} VERSION=${7:?}
. "$(dirname "$0")/../common/check.sh"
TMP=$(mktemp -d /tmp/man-pages.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# The page's text as roff source without font changes and escapes, so an
# option is found whatever the renderer's line breaking and hyphenation.
plain() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\&//g' -e "s/\\\\(aq/'/g" "$1"
}

# page_has_all WHAT PAGE WORDFILE CLASS: every word of WORDFILE occurs in
# PAGE, not as part of a longer word (CLASS: the characters of a word).
page_has_all() {
	local what=$1 page=$2 words=$3 class=$4 n missing=""
	n=$(wc -l < "$words")
	if [ "$n" -lt 5 ]; then
		bad "$what: found only $n names to look for (the extraction broke?)"
		return
	fi
	plain "$page" > "$TMP/plain"
	while read -r w; do
		grep -qE -- "(^|[^$class])$w([^$class]|\$)" "$TMP/plain" ||
			missing="$missing $w"
	done < "$words"
	if [ -z "$missing" ]; then
		ok "$what: all $n in $(basename "$page")"
	else
		bad "$what: missing from $(basename "$page"):$missing"
	fi
}

long_opts() { # the long options a help text names
	grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

if "$BCTL" help > "$TMP/bctl.help"; then
	long_opts < "$TMP/bctl.help" > "$TMP/bctl.opts"
	page_has_all "bctl help's long options" "$BCTL_1" "$TMP/bctl.opts" 'a-z0-9-'
else
	bad "bctl help exited non-zero"
fi
if "$BREAKERD" --help > "$TMP/breakerd.help"; then
	long_opts < "$TMP/breakerd.help" > "$TMP/breakerd.opts"
	page_has_all "breakerd --help's long options" "$BREAKERD_8" "$TMP/breakerd.opts" 'a-z0-9-'
else
	bad "breakerd --help exited non-zero"
fi

# The public functions: each BRK_API declaration (joined up to its '('),
# "brk_x(" or "(brk_x)(" (a function also defined as a macro).
awk '/^BRK_API/ { l = $0; while (l !~ /\(/ && (getline n) > 0) l = l " " n; print l }' \
	"$HEADER" |
	sed -nE 's/^BRK_API[^(]*[ *]\(?(brk_[a-z0-9_]+)\)?[[:space:]]*\(.*/\1/p' |
	sort -u > "$TMP/functions"
page_has_all "breaker.h's public functions" "$LIB_3" "$TMP/functions" 'A-Za-z0-9_'

# Rendering: no warning from man (man-db) or groff.
for page in "$BCTL_1" "$BREAKERD_8" "$LIB_3"; do
	name=$(basename "$page")
	if command -v man > /dev/null; then
		LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" \
			> "$TMP/out" 2> "$TMP/err"
		if [ -s "$TMP/err" ] || ! [ -s "$TMP/out" ]; then
			bad "$name: man --warnings -l" "$(head -5 "$TMP/err")"
		else
			ok "$name: man --warnings -l renders it without a warning"
		fi
	else
		echo "skip - $name: no man(1) here"
	fi
	if command -v groff > /dev/null; then
		if groff -ww -b -z -man -Tutf8 "$page" 2> "$TMP/err" && ! [ -s "$TMP/err" ]; then
			ok "$name: groff -ww: no warning"
		else
			bad "$name: groff -ww" "$(head -5 "$TMP/err")"
		fi
	fi
done

# The character sets the pages spell out ("1-63 bytes of A-Z a-z 0-9 . _ -")
# render as written: a source line that starts with ". " is an ordered list
# item for scdoc ("1. _ -."), so every rendered "A-Z a-z 0-9" must go on
# with its punctuation, not with a list number.
if command -v man > /dev/null; then
	for page in "$BCTL_1" "$BREAKERD_8" "$LIB_3"; do
		name=$(basename "$page")
		LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$page" 2>/dev/null | col -b |
			tr -s ' \t\n' '   ' > "$TMP/flat"
		sets=$(grep -o 'A-Z a-z 0-9' "$TMP/flat" | wc -l)
		whole=$(grep -oE 'A-Z a-z 0-9 \. _ (: / )?-' "$TMP/flat" | wc -l)
		if [ "$sets" -gt 0 ] && [ "$sets" -eq "$whole" ]; then
			ok "$name: each of its $sets character sets renders as written"
		elif [ "$sets" -gt 0 ]; then
			bad "$name: a character set renders broken ($whole of $sets whole)" \
				"$(grep -oE 'A-Z a-z 0-9 .{0,12}' "$TMP/flat")"
		fi
	done
fi

# --version: one line, the project version.
for prog in "$BCTL" "$BREAKERD"; do
	name=$(basename "$prog")
	out=$("$prog" --version 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ "$out" = "$name (breakerd) $VERSION" ]; then
		ok "$name --version: '$out'"
	else
		bad "$name --version" "exit $rc, printed '$out', expected '$name (breakerd) $VERSION'"
	fi
done
out=$("$BCTL" list --version 2>&1)
[ "$out" = "bctl (breakerd) $VERSION" ] && ok "bctl list --version (after the command)" ||
	bad "bctl list --version" "printed '$out'"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
