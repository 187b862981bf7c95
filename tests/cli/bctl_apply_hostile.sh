#!/usr/bin/env bash
# bctl_apply_hostile.sh BCTL - breakers files an editor does not show as
# they are read (issue 22's break-it pass):
# - a NUL byte is refused with its line: a value "2s<NUL>garbage" is not
#   taken as 2s, and a comment with a NUL does not hide a key after it (the
#   line reader took the rest of such a line as a line of its own);
# - a file that is not a regular file (a FIFO, /dev/zero, /dev/urandom) is
#   refused at once instead of read forever (a FIFO blocked bctl, and
#   breakerd's SIGHUP, until a writer came; /dev/urandom grew to GBs);
# - a file of very many errors is reported in bounded memory: the first
#   errors, then how many more, then the summary with the full count;
# - text after a section header's ']' is an error, not dropped: a key
#   written on the header's line ("[breaker a] failure_threshold = 3") was
#   silently ignored;
# - a UTF-8 byte order mark (Windows editors) before the first line is
#   skipped, not a syntax error that puts every key outside a section.
#
# Uses its own segment /brkhostile-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_apply_hostile.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkhostile

"$BCTL" --shm "$SHM" segment create --capacity 16 >/dev/null

# apply ARGS: bctl --shm $SHM apply ARGS with a 10 s bound; rc, $TMP/out, $TMP/err
apply() {
	timeout 10 "$BCTL" --shm "$SHM" apply "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# refused DESC RE: the last apply exited 2, stderr matches RE, ends with
# "nothing was applied", and created nothing
refused() {
	if [ "$rc" -ne 2 ]; then
		bad "$1" "exit $rc, want 2" "out: $(head -c 300 "$TMP/out")" \
			"err: $(head -c 300 "$TMP/err")"
	elif ! grep -Eq -- "$2" "$TMP/err"; then
		bad "$1" "stderr does not match: $2" "$(head -c 600 "$TMP/err")"
	elif ! tail -n 1 "$TMP/err" | grep -q 'nothing was applied$'; then
		bad "$1" "last line: $(tail -n 1 "$TMP/err")"
	elif [ "$("$BCTL" --shm "$SHM" list 2>/dev/null | grep -vc -e '^NAME' -e '^$' -e '^segment' -e '^arena' -e '^breakerd')" != 0 ]; then
		bad "$1" "records were created:" "$("$BCTL" --shm "$SHM" list 2>&1)"
	else
		ok "$1"
	fi
}

# --- NUL bytes -----------------------------------------------------------------
printf '[breaker a]\nopen = 2s\0garbage\nfailure_threshold = 3\n' >"$TMP/nul1.conf"
apply "$TMP/nul1.conf" --dry-run
refused "a NUL in a value is refused with its line (--dry-run)" \
	"nul1.conf:2: .*NUL byte"
apply "$TMP/nul1.conf"
refused "a NUL in a value is refused with its line" "nul1.conf:2: .*NUL byte"

# a comment whose NUL, then padding to the reader's line size, hid a key
{
	printf '[breaker b]\nfailure_threshold = 3\n# harmless comment\0'
	head -c 180 /dev/zero | tr '\0' x
	printf 'open = 1ms\n'
} >"$TMP/nul2.conf"
apply "$TMP/nul2.conf" --dry-run
refused "a NUL in a comment does not hide a key after it" "nul2.conf:3: .*NUL byte"
if grep -q 'open_ms 1' "$TMP/out"; then
	bad "... and the hidden open = 1ms is not read" "$(cat "$TMP/out")"
else
	ok "... and the hidden open = 1ms is not read"
fi

# --- files that are not regular files ------------------------------------------
mkfifo "$TMP/fifo.conf"
for f in "$TMP/fifo.conf" /dev/zero /dev/urandom; do
	apply "$f" --dry-run
	if [ "$rc" -eq 124 ]; then
		bad "$f is refused at once, not read forever" "still reading after 10 s"
	else
		refused "$f is refused at once, not read forever" \
			"cannot read $f: not a regular file"
	fi
done

# --- very many errors ----------------------------------------------------------
awk 'BEGIN { for (i = 0; i < 200000; i++) print "zz" }' >"$TMP/many.conf"
apply "$TMP/many.conf" --dry-run
refused "200000 bad lines: refused" "many.conf: 200000 errors"
lines=$(wc -l <"$TMP/err")
if [ "$lines" -le 110 ] && grep -q 'and 199900 more errors' "$TMP/err"; then
	ok "... reporting the first 100 errors, then how many more ($lines lines)"
else
	bad "... reporting the first 100 errors, then how many more" \
		"$lines lines; tail: $(tail -n 3 "$TMP/err")"
fi

# --- text after a section header -----------------------------------------------
printf '[breaker a] failure_threshold = 3\n' >"$TMP/hdr1.conf"
apply "$TMP/hdr1.conf" --dry-run
refused "a key on the header's line is an error, not dropped" \
	"hdr1.conf:1: \\[breaker a\\]: text after the section header"
printf '[breaker a]]\nopen = 1s\n' >"$TMP/hdr2.conf"
apply "$TMP/hdr2.conf" --dry-run
refused "a stray ']' after the header is an error" "hdr2.conf:1: .*text after the section header"
printf '[breaker a]   ; a comment\nopen = 1s\n[breaker b] # another\n' >"$TMP/hdr3.conf"
apply "$TMP/hdr3.conf" --dry-run
if [ "$rc" -eq 0 ] && grep -q '\[breaker a\] would be created: open_ms 1000' "$TMP/out"; then
	ok "a comment after the header is still fine"
else
	bad "a comment after the header is still fine" "exit $rc" "$(cat "$TMP/err")"
fi

# --- a byte order mark ---------------------------------------------------------
printf '\xef\xbb\xbf[breaker a]\nopen = 1s\n' >"$TMP/bom.conf"
apply "$TMP/bom.conf" --dry-run
if [ "$rc" -eq 0 ] && grep -q '\[breaker a\] would be created: open_ms 1000' "$TMP/out"; then
	ok "a UTF-8 byte order mark before the first line is skipped"
else
	bad "a UTF-8 byte order mark before the first line is skipped" "exit $rc" \
		"$(cat "$TMP/err")"
fi

echo "# bctl_apply_hostile: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
