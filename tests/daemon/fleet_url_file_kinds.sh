#!/usr/bin/env bash
# fleet_url_file_kinds.sh BREAKERD - --fleet-url-file FILE that is not a
# plain one-line URL file is a usage error (exit 2) at once, with a
# message naming the problem, and no segment is created:
#  - a FIFO (open() used to block forever waiting for a writer);
#  - a directory; an empty file (no URL);
#  - a first line longer than the URL buffer (it used to be cut and
#    parsed, and reported as a bad port or database).
set -u
BREAKERD=${1:?usage: fleet_url_file_kinds.sh BREAKERD}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"
fleet_init fleeturl
host_shm t

try() { # DESC FILE PATTERN
	local out rc
	out=$(timeout -s KILL 5 "$BREAKERD" --shm "${SHM[t]}" --fleet-url-file "$2" --host-id t 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && [[ $out == *"$3"* ]] && [ ! -e "/dev/shm${SHM[t]}" ]; then
		ok "$1: exit 2, says \"$3\""
	else
		bad "$1: rc=$rc (137 = hung, killed)" "$out"
	fi
	rm -f "/dev/shm${SHM[t]}"
}

mkfifo -m 0600 "$TMP/fifo"
try "a FIFO" "$TMP/fifo" "not a regular file"
mkdir -m 0700 "$TMP/dir"
try "a directory" "$TMP/dir" "not a regular file"
: >"$TMP/empty"; chmod 0600 "$TMP/empty"
try "an empty file" "$TMP/empty" "no URL"
{ printf 'redis://u:'; head -c 1100 /dev/zero | tr '\0' p; printf '@127.0.0.1:6379/0\n'; } >"$TMP/long"
chmod 0600 "$TMP/long"
try "a 1.1 kB first line" "$TMP/long" "line longer than"
{ printf 'redis://127.0.0.1:6379/0'; head -c 5000 /dev/zero | tr '\0' 0; } >"$TMP/long2"
chmod 0600 "$TMP/long2"
try "a 5 kB first line without a newline" "$TMP/long2" "line longer than"

echo "pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
