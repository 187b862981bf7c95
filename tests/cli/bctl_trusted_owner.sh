#!/usr/bin/env bash
# bctl_trusted_owner.sh BCTL BREAKERD - no unprivileged user can plant the
# segment others use (issue 22). The library uses a segment only if its
# owner is root, the caller's own euid, the system user breakerd (when it
# exists) or a user named in $BREAKERD_TRUSTED_OWNERS (names or uids,
# comma-separated); any other owner is refused, read-write and read-only
# alike, by every program (bctl, breakerd, a worker), naming the owner and
# the variable. The group-shared set-up (a trusted owner, --mode 0660
# --group G, workers' users in G) keeps working.
#
# Runs as root with two real users made here (useradd; removed at the
# end): brkp$$ (the planter) and brkw$$ (a worker in group brkg$$).
# Exit 77 (skipped) when not root or without useradd/runuser.
set -u

BCTL=${1:?usage: bctl_trusted_owner.sh PATH_TO_BCTL PATH_TO_BREAKERD}
BREAKERD=${2:?usage: bctl_trusted_owner.sh PATH_TO_BCTL PATH_TO_BREAKERD [SUID_ATTACH]}
SUID_ATTACH=${3:-}
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root (useradd, runuser)"; exit 77; fi
for t in useradd userdel groupadd groupdel runuser; do
	command -v "$t" >/dev/null || { echo "SKIP: no $t"; exit 77; }
done

P=brkp$$ W=brkw$$ G=brkg$$
SQ=/brksq-$$ SG=/brksg-$$
TMP=$(mktemp -d /tmp/brktrust.XXXXXX)
chmod 755 "$TMP"
pass=0
fail=0
cleanup() {
	rm -f "/dev/shm$SQ" "/dev/shm$SG"
	userdel "$P" 2>/dev/null
	userdel "$W" 2>/dev/null
	groupdel "$G" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad

groupadd "$G" || { echo "SKIP: groupadd failed"; exit 77; }
useradd -M -N -g "$G" -s /bin/sh "$P" || { echo "SKIP: useradd failed"; exit 77; }
useradd -M -N -g "$G" -s /bin/sh "$W" || { echo "SKIP: useradd failed"; exit 77; }
puid=$(id -u "$P")

# expect DESC CODE ERR_REGEX CMD...: exit status CODE, stderr matching
expect() {
	local desc=$1 code=$2 ere=$3
	shift 3
	"$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		bad "$desc" "exit status $rc, want $code" "err: $(head -c 400 "$TMP/err")"
	elif [ -n "$ere" ] && ! grep -Eq -- "$ere" "$TMP/err"; then
		bad "$desc" "stderr: $(head -c 400 "$TMP/err")" "does not match: $ere"
	else
		ok "$desc"
	fi
}

untrusted="owned by uid $puid \\($P\\), not a trusted owner.*BREAKERD_TRUSTED_OWNERS"

# the issue's reproduction: the user plants the segment ...
expect "an unprivileged user creates /sq (mode 0660)" 0 "" \
	runuser -u "$P" -- "$BCTL" --shm "$SQ" segment create --capacity 16 --mode 0660
[ "$(stat -c %U "/dev/shm$SQ" 2>/dev/null)" = "$P" ] && ok "the segment is the user's" ||
	bad "the segment is the user's" "$(ls -l "/dev/shm$SQ" 2>&1)"
# ... and root refuses it, read-write and read-only alike
expect "root's bctl config refuses the planted segment" 1 "$untrusted" \
	env -u BREAKERD_TRUSTED_OWNERS "$BCTL" --shm "$SQ" config pay
expect "root's bctl list (read-only) refuses it too" 1 "$untrusted" \
	env -u BREAKERD_TRUSTED_OWNERS "$BCTL" --shm "$SQ" list
expect "root's breakerd refuses it" 1 "$untrusted" \
	env -u BREAKERD_TRUSTED_OWNERS timeout 10 "$BREAKERD" --shm "$SQ"
runuser -u "$P" -- "$BCTL" --shm "$SQ" list >"$TMP/list" 2>&1
if grep -q pay "$TMP/list"; then
	bad "nothing was written into the planted segment" "$(cat "$TMP/list")"
else
	ok "nothing was written into the planted segment"
fi
# another user of the group refuses it as well (not root, not the owner)
expect "a worker of the owner's group refuses it" 1 "$untrusted" \
	runuser -u "$W" -- env -u BREAKERD_TRUSTED_OWNERS "$BCTL" --shm "$SQ" config pay
# a user named in BREAKERD_TRUSTED_OWNERS is trusted: by name, by uid
expect "BREAKERD_TRUSTED_OWNERS=name: used" 0 "" \
	env BREAKERD_TRUSTED_OWNERS="nosuchuser$$,$P" "$BCTL" --shm "$SQ" config pay
expect "BREAKERD_TRUSTED_OWNERS=uid: used" 0 "" \
	env BREAKERD_TRUSTED_OWNERS=" $puid " "$BCTL" --shm "$SQ" inspect pay
expect "BREAKERD_TRUSTED_OWNERS naming others: still refused" 1 "$untrusted" \
	env BREAKERD_TRUSTED_OWNERS="root,$W" "$BCTL" --shm "$SQ" inspect pay
# the planted segment can be removed by the operator
expect "segment remove --force removes the planted segment" 0 "" \
	"$BCTL" --shm "$SQ" segment remove --force

# the group-shared set-up keeps working: root's segment, mode 0660, group G
expect "root creates a group-shared segment" 0 "" \
	"$BCTL" --shm "$SG" segment create --capacity 16 --mode 0660 --group "$G"
expect "a worker in the group uses root's segment (read-write)" 0 "" \
	runuser -u "$W" -- env -u BREAKERD_TRUSTED_OWNERS "$BCTL" --shm "$SG" config pay
expect "... and another one too" 0 "" \
	runuser -u "$P" -- env -u BREAKERD_TRUSTED_OWNERS "$BCTL" --shm "$SG" inspect pay
# a user's own segment is always his
expect "the owner uses his own segment" 0 "" \
	runuser -u "$P" -- env -u BREAKERD_TRUSTED_OWNERS "$BCTL" --shm "$SQ" config mine

# A set-uid root program linking libbreaker: its caller must not widen whom
# it trusts. In secure execution (AT_SECURE) $BREAKERD_TRUSTED_OWNERS is not
# read (secure_getenv), so the planter cannot have root's program use his
# segment by naming himself in it (issue 22 break-it pass).
if [ -n "$SUID_ATTACH" ]; then
	cp "$SUID_ATTACH" "$TMP/suid_attach"
	chown root:root "$TMP/suid_attach"
	chmod 4755 "$TMP/suid_attach"
	expect "a set-uid root program refuses the planter's segment" 1 "$untrusted" \
		runuser -u "$P" -- env -u BREAKERD_TRUSTED_OWNERS "$TMP/suid_attach" "$SQ"
	expect "... also when the planter names himself in BREAKERD_TRUSTED_OWNERS" 1 \
		"$untrusted" runuser -u "$P" -- env BREAKERD_TRUSTED_OWNERS="$P,$puid" \
		"$TMP/suid_attach" "$SQ"
	expect "root's own (not set-uid) run still reads BREAKERD_TRUSTED_OWNERS" 0 "" \
		env BREAKERD_TRUSTED_OWNERS="$P" "$TMP/suid_attach" "$SQ"
fi

echo "# bctl_trusted_owner: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
