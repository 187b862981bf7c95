#!/usr/bin/env bash
# it_pid_namespace.sh BCTL BREAKERD - a process in another PID namespace
# (unshare --pid --fork --mount-proc, util-linux) that tries to use the
# segment gets the documented error - the message docs/guide/operating.md
# shows in "Containers" (checked against the guide's text too),
# naming both namespaces and what to do - and changes nothing: the
# records, their settings and state, and the segment's header are as
# before, and processes of the creator's namespace go on using it.
# Inspection (bctl segment info) still works there and says the
# namespaces differ. Skips (77) if unshare is absent or not permitted.
#
# Uses its own segment /brkpidns-$$ and removes it at the end.
set -u

BCTL=${1:?usage: it_pid_namespace.sh PATH_TO_BCTL PATH_TO_BREAKERD}
BREAKERD=${2:?usage: it_pid_namespace.sh PATH_TO_BCTL PATH_TO_BREAKERD}
SHM=/brkpidns-$$
TMP=$(mktemp -d /tmp/brkpidns.XXXXXX)
pass=0
fail=0

cleanup() {
	rm -f "/dev/shm$SHM"
	rm -rf "$TMP"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad

if ! command -v unshare >/dev/null; then
	echo "SKIP: unshare not found (Debian package util-linux)"
	exit 77
fi
if ! unshare --pid --fork --mount-proc true 2>"$TMP/err"; then
	echo "SKIP: unshare --pid --fork --mount-proc is not permitted here: $(cat "$TMP/err")"
	exit 77
fi

# in_other_ns CMD...: run CMD in a new pid namespace; stdout, stderr and
# the exit status in $TMP/out, $TMP/err, $rc
in_other_ns() {
	unshare --pid --fork --mount-proc "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

snapshot() { # the facts that must not change, one per line
	"$BCTL" --shm "$SHM" inspect api --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print("state", d["state"])
print("config", json.dumps(d["config"], sort_keys=True))
print("counters", json.dumps(d["counters"], sort_keys=True))'
	"$BCTL" --shm "$SHM" segment info --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in ("capacity", "used", "arena_bytes", "size", "creator_pid", "creator_pidns"):
    print(k, d[k])'
}

"$BCTL" --shm "$SHM" config api --failure-threshold 3 --max-concurrent 4 >/dev/null &&
	"$BCTL" --shm "$SHM" trip api --for 10m >/dev/null ||
	{ echo "setup failed"; exit 1; }
snapshot >"$TMP/before"

want="^bctl: $SHM: created in pid namespace [0-9]+, we are in [0-9]+: lease owners cannot be checked; run this process in the segment's pid namespace \\(docker --pid=container:X --ipc=container:X, Kubernetes shareProcessNamespace: true; see docs/guide/operating.md \"Containers\"\\)\$"

# The guide shows the message for the default segment, as bctl prints it.
GUIDE=$(dirname "${BASH_SOURCE[0]}")/../../docs/guide/operating.md
doc=$(grep -m1 '^bctl: /breakerd: created in pid namespace' "$GUIDE")
if [ -n "$doc" ] && grep -Eq -- "${want//"$SHM"//breakerd}" <<<"$doc"; then
	ok "docs/guide/operating.md \"Containers\" shows the message bctl prints"
else
	bad "docs/guide/operating.md \"Containers\" does not show the message bctl prints" "guide: $doc"
fi

in_other_ns "$BCTL" --shm "$SHM" config api --failure-threshold 9
if [ "$rc" -eq 1 ] && grep -Eq -- "$want" "$TMP/err"; then
	ok "bctl config from another pid namespace: exit 1, the documented message"
else
	bad "bctl config from another pid namespace" "exit $rc" "err: $(cat "$TMP/err")"
fi
in_other_ns "$BCTL" --shm "$SHM" exec api -- echo ran
if [ "$rc" -eq 1 ] && grep -Eq -- "$want" "$TMP/err" && ! grep -q ran "$TMP/out"; then
	ok "bctl exec from another pid namespace: CMD not run, the documented message"
else
	bad "bctl exec from another pid namespace" "exit $rc" "out: $(cat "$TMP/out")" \
		"err: $(cat "$TMP/err")"
fi
in_other_ns "$BCTL" --shm "$SHM" reset api
[ "$rc" -eq 1 ] && grep -Eq -- "$want" "$TMP/err" &&
	ok "bctl reset from another pid namespace: refused" ||
	bad "bctl reset from another pid namespace" "exit $rc" "err: $(cat "$TMP/err")"
in_other_ns timeout 10 "$BREAKERD" --shm "$SHM" --interval 50ms
if [ "$rc" -eq 1 ] && grep -Eq "^breakerd: $SHM: created in pid namespace [0-9]+, we are in [0-9]+: lease owners cannot be checked; run this process in the segment's pid namespace" "$TMP/err"; then
	ok "breakerd from another pid namespace: exit 1, the documented message, no repair"
else
	bad "breakerd from another pid namespace" "exit $rc" "err: $(cat "$TMP/err")"
fi
in_other_ns "$BCTL" --shm "$SHM" segment info
if [ "$rc" -eq 0 ] && grep -Eq "^pid_namespace: +[0-9]+ \\(ours: [0-9]+: differs, workers here cannot attach; see docs/guide/operating.md \"Containers\"\\)\$" "$TMP/out"; then
	ok "bctl segment info from another pid namespace: works, says they differ"
else
	bad "bctl segment info from another pid namespace" "exit $rc" "out: $(cat "$TMP/out")" \
		"err: $(cat "$TMP/err")"
fi
in_other_ns "$BCTL" --shm "$SHM" segment remove
[ "$rc" -eq 75 ] && [ -e "/dev/shm$SHM" ] &&
	grep -Eq "^bctl: $SHM: not removed: created in pid namespace [0-9]+, we are in [0-9]+: breakerd and the lease owners cannot be checked from here" "$TMP/err" &&
	ok "bctl segment remove from another pid namespace: refused (75), segment kept" ||
	bad "segment remove from another namespace" "exit $rc" "err: $(cat "$TMP/err")"

snapshot >"$TMP/after"
if diff -u "$TMP/before" "$TMP/after" >"$TMP/diff"; then
	ok "nothing changed: state, settings, counters and header as before"
else
	bad "the segment changed" "$(cat "$TMP/diff")"
fi
if "$BCTL" --shm "$SHM" reset api >/dev/null 2>"$TMP/err" &&
	"$BCTL" --shm "$SHM" inspect api | grep -Eq "^state: +closed"; then
	ok "the creator's namespace goes on using it"
else
	bad "the creator's namespace goes on using it" "$(cat "$TMP/err")"
fi

echo "# it_pid_namespace: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
