#!/usr/bin/env bash
# bctl_completion_root.sh BCTL COMPLETION_FILE GUIDE - the step of
# docs/guide/bctl.md (GUIDE), "Shell completion",
# that enables bash-completion for root, in a real `bash -i` on a
# pseudo-terminal (tab_in_bash.py): with root's Debian ~/.bashrc
# (/usr/share/base-files/dot.bashrc) alone, `bctl seg<Tab>` completes
# nothing, which is why the step is needed; with the line the guide's
# "Shell completion" gives appended to it, bctl's completion file in
# bash-completion's completions directory, `bctl seg<Tab>` gives
# `bctl segment `. Skipped (77) without bash-completion or root's dot.bashrc.
set -u
BCTL=${1:?usage: bctl_completion_root.sh BCTL COMPLETION_FILE docs/guide/bctl.md}
COMP=${2:?usage: bctl_completion_root.sh BCTL COMPLETION_FILE docs/guide/bctl.md}
GUIDE=${3:?usage: bctl_completion_root.sh BCTL COMPLETION_FILE docs/guide/bctl.md}
TAB="$(dirname "${BASH_SOURCE[0]}")/tab_in_bash.py"
ROOTRC=/usr/share/base-files/dot.bashrc
for f in /usr/share/bash-completion/bash_completion "$ROOTRC" /usr/bin/python3; do
	[ -e "$f" ] || { echo "SKIP: no $f"; exit 77; }
done
TMP=$(mktemp -d /tmp/brkcomp-root.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad

mkdir -p "$TMP/home" "$TMP/share/bash-completion/completions" "$TMP/bin"
cp "$COMP" "$TMP/share/bash-completion/completions/bctl"
ln -s "$(realpath "$BCTL")" "$TMP/bin/bctl"
cp "$ROOTRC" "$TMP/home/.bashrc"
echo 'PS1="$ "' >>"$TMP/home/.bashrc"
tab() { /usr/bin/python3 "$TAB" "$TMP/home" "$TMP/bin:/usr/bin:/bin" \
	"$TMP/share:/usr/share" 'bctl seg\t'; }

out=$(tab)
if printf '%s' "$out" | grep -q 'bctl segment'; then
	echo "SKIP: root's default ~/.bashrc completes bctl already (bash-completion enabled elsewhere)"
	exit 77
fi
ok "root's default ~/.bashrc: bctl seg<Tab> completes nothing"

# The guide's line, as written (the first ~/.bashrc line of its section).
line=$(sed -n '/^## Shell completion/,/^## [^S]/p' "$GUIDE" |
	sed -n "s/^echo '\\(.*\\)' >> ~\\/.bashrc\$/\\1/p" | head -1)
if [ -z "$line" ]; then
	bad "no \"echo '...' >> ~/.bashrc\" line in the guide's Shell completion"
else
	printf '%s\n' "$line" >>"$TMP/home/.bashrc"
	out=$(tab)
	if printf '%s' "$out" | grep -q 'bctl segment '; then
		ok "with the guide's line in ~/.bashrc: bctl seg<Tab> gives 'bctl segment '"
	else
		bad "with the guide's line, bctl seg<Tab> showed:" "$(printf '%s' "$out" | tr -d '\r' | tail -3)"
	fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
