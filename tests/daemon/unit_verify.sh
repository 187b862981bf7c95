#!/usr/bin/env bash
# breakerd.service as meson configured it: systemd-analyze verify finds
# nothing to say about it (exit 0 and no output: verify only warns, exit 0,
# on an unknown key or a bad value, so any output is a failure), and it is
# the unit the README describes (Type=notify, a system user, --mode 0660
# --group). A copy with a misspelt key must draw a complaint, so this test
# can fail. The unit's ExecStart= (the installed path) is pointed at this
# build's breakerd, since verify checks that the program exists.
# Skips (77) if systemd-analyze (Debian's systemd package) is absent.
# Usage: unit_verify.sh UNIT BREAKERD_EXE BINDIR
set -u
unit=$1 exe=$2 bindir=$3
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze not found (Debian package: systemd)"
	exit 77
fi
fail=0
check() { # check DESCRIPTION COMMAND...
	local what=$1; shift
	if "$@"; then echo "ok - $what"; else echo "FAIL - $what"; fail=1; fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check "ExecStart= is $bindir/breakerd with --mode 0660 --group breakerd" \
	grep -qx "ExecStart=$bindir/breakerd --mode 0660 --group breakerd" "$unit"
check "Type=notify" grep -qx 'Type=notify' "$unit"
check "WatchdogSec= set" grep -qE '^WatchdogSec=[0-9]+' "$unit"
check "User=breakerd, Group=breakerd" \
	bash -c "grep -qx 'User=breakerd' '$unit' && grep -qx 'Group=breakerd' '$unit'"
check "no RemoveIPC=yes, no PrivateDevices=yes (both would lose /dev/shm/breakerd)" \
	bash -c "! grep -qE '^(RemoveIPC|PrivateDevices)=(yes|true|1)' '$unit'"

sed "s|^ExecStart=$bindir/breakerd|ExecStart=$exe|" "$unit" > "$tmp/breakerd.service"
out=$(systemd-analyze verify "$tmp/breakerd.service" 2>&1); rc=$?
[ -n "$out" ] && printf '%s\n' "$out"
check "systemd-analyze verify: exit 0 (got $rc), no complaint" \
	test "$rc" -eq 0 -a -z "$out"

sed 's/^Type=notify/Tpye=notify/' "$tmp/breakerd.service" > "$tmp/bad.service"
out=$(systemd-analyze verify "$tmp/bad.service" 2>&1)
check "a misspelt key draws a complaint (this test can fail)" \
	bash -c "grep -q Tpye <<< '$out'"
exit $fail
