#!/usr/bin/env bash
# fleet_url_file.sh BREAKERD - how breakerd reads --fleet-url-file FILE
# (daemon/fleet/fleet_opts.c): blank lines and '#' lines are skipped and the URL is
# trimmed; every error names FILE:LINE:; with both --fleet and
# $BREAKERD_FLEET_URL the log says which one is used. Redis at 127.0.0.1:1
# is unreachable: breakerd keeps retrying and is stopped by timeout.
set -u
BREAKERD=${1:?usage: fleet_url_file.sh BREAKERD}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"
fleet_init fleeturlfile
host_shm t
unset BREAKERD_FLEET_URL

run() { # run FILE: breakerd for 1.5 s, output in $TMP/out, rc in $rc
	timeout -s TERM 1.5 "$BREAKERD" --shm "${SHM[t]}" --host-id t \
		--fleet-url-file "$1" >"$TMP/out" 2>&1
	rc=$?
	rm -f "/dev/shm${SHM[t]}"
}

f=$TMP/url
printf '# the fleet Redis\n\n   redis://u:secret@127.0.0.1:1/0  \r\n' >"$f"; chmod 0600 "$f"
run "$f"
{ [ $rc -eq 124 ] || [ $rc -eq 0 ]; } && grep -q 'connect 127.0.0.1:1' "$TMP/out" &&
	ok "a '#' line, a blank line and spaces around the URL are skipped" ||
	bad "comment/blank/trim: rc $rc" "$(cat "$TMP/out")"
grep -q secret "$TMP/out" && bad "the password is in the log" || ok "the password is not logged"

printf '# comment\n  redis://127.0.0.1:99999\n' >"$f"
run "$f"
[ $rc -eq 2 ] && grep -q -- "--fleet-url-file: $f:2: " "$TMP/out" &&
	ok "a bad URL's error names the file and line ($f:2:)" || bad "bad URL: rc $rc" "$(cat "$TMP/out")"

printf 'redis://127.0.0.1 x\n' >"$f"
run "$f"
[ $rc -eq 2 ] && grep -q -- "--fleet-url-file: $f:1: " "$TMP/out" &&
	ok "a space inside the URL names $f:1:" || bad "space: rc $rc" "$(cat "$TMP/out")"

printf '# only\n\n   \n' >"$f"
run "$f"
[ $rc -eq 2 ] && grep -q -- "--fleet-url-file: $f: no URL" "$TMP/out" &&
	ok "a file of only comments and blanks says no URL, with its name" ||
	bad "empty: rc $rc" "$(cat "$TMP/out")"

BREAKERD_FLEET_URL=redis://127.0.0.1:2 timeout -s TERM 1.5 "$BREAKERD" --shm "${SHM[t]}" \
	--host-id t --fleet redis://127.0.0.1:1 >"$TMP/out" 2>&1
rm -f "/dev/shm${SHM[t]}"
grep -q 'fleet URL from --fleet' "$TMP/out" && grep -q 'ignored=\$BREAKERD_FLEET_URL' "$TMP/out" &&
	ok "with --fleet and \$BREAKERD_FLEET_URL the log says --fleet is used" ||
	bad "source log" "$(cat "$TMP/out")"

echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
