#!/usr/bin/env bash
# breakerd.service as meson configured it: systemd-analyze verify finds
# nothing to say about it (exit 0 and no output: verify only warns, exit 0,
# on an unknown key or a bad value, so any output is a failure), and it is
# the unit docs/guide/operating.md "Under systemd" describes (Type=notify, a system user, --mode 0660
# --group). A copy with a misspelt key must draw a complaint, so this test
# can fail. The unit's ExecStart= (the installed path) is pointed at this
# build's breakerd, since verify checks that the program exists.
# Skips (77) if systemd-analyze (Debian's systemd package) is absent.
# Built without libsystemd the unit must say Type=simple, no WatchdogSec=.
# The sysusers.d entry makes breakerd a system user (uid below 1000, which
# logind's RemoveIPC= leaves alone): systemd-sysusers --dry-run.
# Usage: unit_verify.sh UNIT BREAKERD_EXE BINDIR HAVE_LIBSYSTEMD(0|1) SYSUSERS
set -u
unit=$1 exe=$2 bindir=$3 have_sd=$4 sysusers=$5
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

check "ExecStart= is $bindir/breakerd with --mode 0660 --group breakerd and \$BREAKERD_OPTS" \
	grep -qx "ExecStart=$bindir/breakerd --mode 0660 --group breakerd \\\$BREAKERD_OPTS" "$unit"
check "BREAKERD_OPTS from /etc/default/breakerd, which may be absent" \
	grep -qx "EnvironmentFile=-/etc/default/breakerd" "$unit"
check "systemctl reload sends SIGHUP (ExecReload=)" \
	grep -qx 'ExecReload=/bin/kill -HUP \$MAINPID' "$unit"
if [ "$have_sd" = 1 ]; then
	check "Type=notify" grep -qx 'Type=notify' "$unit"
	check "WatchdogSec= set" grep -qE '^WatchdogSec=[0-9]+' "$unit"
else
	check "without libsystemd: Type=simple" grep -qx 'Type=simple' "$unit"
	check "without libsystemd: no WatchdogSec=" bash -c "! grep -q '^WatchdogSec=' '$unit'"
fi
check "User=breakerd, Group=breakerd" \
	bash -c "grep -qx 'User=breakerd' '$unit' && grep -qx 'Group=breakerd' '$unit'"
check "no RemoveIPC=yes, no PrivateDevices=yes (both would lose /dev/shm/breakerd)" \
	bash -c "! grep -qE '^(RemoveIPC|PrivateDevices)=(yes|true|1)' '$unit'"

sed "s|^ExecStart=$bindir/breakerd|ExecStart=$exe|" "$unit" > "$tmp/breakerd.service"
out=$(systemd-analyze verify "$tmp/breakerd.service" 2>&1); rc=$?
[ -n "$out" ] && printf '%s\n' "$out"
check "systemd-analyze verify: exit 0 (got $rc), no complaint" \
	test "$rc" -eq 0 -a -z "$out"

sed 's/^Type=/Tpye=/' "$tmp/breakerd.service" > "$tmp/bad.service"
out=$(systemd-analyze verify "$tmp/bad.service" 2>&1)
check "a misspelt key draws a complaint (this test can fail)" \
	bash -c "grep -q Tpye <<< '$out'"
if command -v systemd-sysusers >/dev/null 2>&1; then
	if uid=$(id -u breakerd 2>/dev/null); then
		how="user breakerd exists"
	else
		out=$(systemd-sysusers --dry-run "$sysusers" 2>&1)
		uid=$(sed -n "s/^Creating user 'breakerd' .* with UID \([0-9]*\).*/\1/p" <<< "$out")
		how="systemd-sysusers --dry-run: $(head -c 200 <<< "$out" | tr '\n' ' ')"
	fi
	check "breakerd is a system user, uid ${uid:-?} < 1000 ($how)" \
		test -n "$uid" -a "${uid:-1000}" -lt 1000
else
	echo "note: systemd-sysusers absent, the sysusers.d entry is not checked"
fi
exit $fail
