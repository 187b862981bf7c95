#!/usr/bin/env bash
# install_destdir.sh MESON BUILD_DIR BINDIR LIBDIR UNITDIR SYSUSERSDIR COMPLETIONDIR MANDIR [PAGE...]
# `meson install --destdir TMP` of the build puts under the prefix what the
# docs/guide/operating.md ("What set-up installs") says it installs: bctl and
# breakerd (which then run from there,
# against the installed libbreaker.so.0), the systemd unit (its ExecStart
# the installed breakerd), the sysusers.d entry of the breakerd user, the
# bash completion of bctl (it registers _bctl for bctl when sourced), and
# the man pages PAGE... (bctl.1 breakerd.8 libbreaker.3; none given: built
# without scdoc). The directories are the build's own (absolute, from meson
# options), so a different prefix or option is checked as configured.
set -u
MESON=${1:?usage: install_destdir.sh MESON BUILD_DIR BINDIR LIBDIR UNITDIR SYSUSERSDIR COMPLETIONDIR MANDIR [PAGE...]}
BUILD=${2:?} BINDIR=${3:?} LIBDIR=${4:?} UNITDIR=${5:?} SYSUSERSDIR=${6:?} COMPLETIONDIR=${7:?} MANDIR=${8:?}
shift 8
. "$(dirname "$0")/../common/check.sh"
TMP=$(mktemp -d /tmp/install-destdir.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
D=$TMP/root

if ! "$MESON" install -C "$BUILD" --no-rebuild --destdir "$D" > "$TMP/log" 2>&1; then
	bad "meson install --destdir exited non-zero" "$(tail -5 "$TMP/log")"
	echo "$pass passed, $fail failed"
	exit 1
fi
ok "meson install --destdir $D"

has() { # DESC FILE [test flag]
	if [ -"${3:-f}" "$2" ]; then ok "$1: ${2#"$D"}"; else bad "$1: ${2#"$D"} is missing"; fi
}
has "bctl" "$D$BINDIR/bctl" x
has "breakerd" "$D$BINDIR/breakerd" x
has "libbreaker.so.0" "$D$LIBDIR/libbreaker.so.0"
has "the systemd unit" "$D$UNITDIR/breakerd.service"
has "the sysusers.d entry" "$D$SYSUSERSDIR/breakerd.conf"

# The installed programs run against the installed library.
for p in bctl breakerd; do
	out=$(LD_LIBRARY_PATH="$D$LIBDIR" "$D$BINDIR/$p" --version 2>&1)
	case $out in
	"$p (breakerd) "*) ok "installed $p runs: '$out'" ;;
	*) bad "installed $p --version" "printed '$out'" ;;
	esac
done
if grep -qx "ExecStart=$BINDIR/breakerd .*" "$D$UNITDIR/breakerd.service"; then
	ok "the unit starts the installed breakerd ($BINDIR/breakerd)"
else
	bad "the unit's ExecStart" "$(grep ExecStart "$D$UNITDIR/breakerd.service")"
fi
has "the bash completion of bctl" "$D$COMPLETIONDIR/bctl"
if [ -f "$D$COMPLETIONDIR/bctl" ] &&
	bash -c '. "$1" && complete -p bctl' _ "$D$COMPLETIONDIR/bctl" 2> "$TMP/comp.err" |
	grep -q -- '-F _bctl bctl'; then
	ok "the installed completion registers _bctl for bctl"
else
	bad "the installed completion does not register _bctl" "$(cat "$TMP/comp.err")"
fi
grep -qE '^u[[:space:]]+breakerd' "$D$SYSUSERSDIR/breakerd.conf" &&
	ok "the sysusers.d entry makes the user breakerd" ||
	bad "the sysusers.d entry" "$(cat "$D$SYSUSERSDIR/breakerd.conf")"

if [ $# -eq 0 ]; then
	echo "skip - man pages: built without scdoc (meson option 'man')"
fi
for page in "$@"; do
	f="$D$MANDIR/man${page##*.}/$page"
	has "man page" "$f"
	if [ -f "$f" ] && command -v man > /dev/null; then
		LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$f" 2> /dev/null | head -1 | grep -q "${page%.*}(${page##*.})" &&
			ok "$page renders from the install" || bad "$page does not render"
	fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
