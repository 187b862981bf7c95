#!/usr/bin/env bash
# help_in_design.sh DESIGN_MD BCTL BREAKERD - docs/design/cli.md quotes
# `bctl --help` and `breakerd --help` verbatim ("this block is its output");
# fail, with the diff, when a quoted block and the program's output differ,
# so the two cannot drift apart. To regenerate a block, replace it with
# `bctl help` / `breakerd --help` of the build.
set -u

DESIGN=${1:?usage: help_in_design.sh DESIGN_MD BCTL BREAKERD}
BCTL=${2:?usage: help_in_design.sh DESIGN_MD BCTL BREAKERD}
BREAKERD=${3:?usage: help_in_design.sh DESIGN_MD BCTL BREAKERD}
TMP=$(mktemp -d /tmp/help-in-design.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail=0

# block MARKER: the first ``` fenced block after the line that starts
# with MARKER.
block() {
	awk -v m="$1" '
		!seen && index($0, m) == 1 { seen = 1; next }
		seen && !inb && /^```/ { inb = 1; next }
		inb && /^```/ { exit }
		inb { print }
	' "$DESIGN"
}

check() { # MARKER LABEL CMD...
	local marker=$1 label=$2
	shift 2
	block "$marker" > "$TMP/doc"
	if ! [ -s "$TMP/doc" ]; then
		echo "FAIL: $label: no block after '$marker' in $DESIGN"
		fail=1
		return
	fi
	if ! "$@" > "$TMP/out" 2>&1; then
		echo "FAIL: $label: '$*' exited non-zero"
		fail=1
		return
	fi
	if diff -u "$TMP/doc" "$TMP/out" > "$TMP/diff"; then
		echo "ok: $label: $DESIGN's block is the program's output"
	else
		echo "FAIL: $label: $DESIGN's block differs from the output (- doc, + program):"
		cat "$TMP/diff"
		fail=1
	fi
}

check '`bctl --help` prints' 'bctl --help' "$BCTL" help
check '`bctl --help` prints' 'bctl --help (the option)' "$BCTL" --help
check '`breakerd --help` prints' 'breakerd --help' "$BREAKERD" --help
exit $fail
