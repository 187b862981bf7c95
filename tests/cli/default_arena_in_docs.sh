#!/usr/bin/env bash
# default_arena_in_docs.sh BCTL BREAKERD SRCDIR - the default arena the docs
# quote is the one the library makes: a default segment's arena_bytes
# (`bctl segment info --json`, brk__default_arena_units() × 64) appears in
# docs/guide/operating.md ("The segment"), bctl(1) and breakerd(8) /
# `breakerd --help` as KiB, and the guide and bctl(1) give its byte count too, so a change of the default
# (layout.h) cannot leave the docs behind.
#
# Uses its own segment /brkarena-docs-$$ and removes it at the end.
set -u
BCTL=${1:?usage: default_arena_in_docs.sh BCTL BREAKERD SRCDIR}
BREAKERD=${2:?usage: default_arena_in_docs.sh BCTL BREAKERD SRCDIR}
SRC=${3:?usage: default_arena_in_docs.sh BCTL BREAKERD SRCDIR}
SHM=/brkarena-docs-$$
trap 'rm -f "/dev/shm$SHM"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad

"$BCTL" --shm "$SHM" config x >/dev/null || bad "bctl config x on a fresh segment"
info=$("$BCTL" --shm "$SHM" segment info --json)
bytes=$(printf '%s\n' "$info" | sed -n 's/^ *"arena_bytes": \([0-9]*\),$/\1/p')
cap=$(printf '%s\n' "$info" | sed -n 's/^ *"capacity": \([0-9]*\),$/\1/p')
if [ -z "$bytes" ] || [ "$cap" != 1024 ]; then
	bad "segment info --json: arena_bytes '$bytes', capacity '$cap' (want 1024)" "$info"
	echo "$pass passed, $fail failed"
	exit 1
fi
kib="$((bytes / 1024)) KiB"
ok "a default segment: $cap records, $bytes bytes of arena ($kib)"
# the formula the docs give, at the default capacity
want=$((cap * 448 + (cap / 8 > 1024 ? cap / 8 : 1024) * 64))
[ "$bytes" -eq "$want" ] && ok "  = 1024 x 448 + max(1024 / 8, 1024) x 64, the docs' formula" ||
	bad "  $bytes bytes, the docs' formula gives $want"

has() { # FILE WHAT TEXT: FILE (newlines folded) contains TEXT
	if tr '\n\t' '  ' <"$1" | tr -s ' ' | grep -qF -- "$3"; then
		ok "$2 says '$3'"
	else
		bad "$2 does not say '$3'"
	fi
}
has "$SRC/docs/guide/operating.md" docs/guide/operating.md "1024 records and $kib of record storage"
has "$SRC/docs/guide/operating.md" docs/guide/operating.md "$bytes bytes"
has "$SRC/docs/man/bctl.1.scd" "bctl(1)" "1024 records and $kib of record storage"
has "$SRC/docs/man/bctl.1.scd" "bctl(1)" "$bytes bytes"
has "$SRC/docs/man/breakerd.8.scd" "breakerd(8)" "$kib at 1024 records"
"$BREAKERD" --help >"/tmp/brkarena-docs-$$.help" 2>&1
has "/tmp/brkarena-docs-$$.help" "breakerd --help" "$kib at 1024 records"
rm -f "/tmp/brkarena-docs-$$.help"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
