#!/bin/bash
# fleet_connect.sh PROBE - fleet_connect() (daemon/fleet/fleet_conf.c)
# against a real redis-server with requirepass and ACL users: AUTH as an
# ACL user and as the default user, SELECT db; a wrong password, a
# missing password and an unknown database are refused with a message
# that says what to fix; a closed port is refused at once; a server that
# never answers (a full accept queue, a silent listener) times out within
# FLEET_CONNECT_TIMEOUT_MS / FLEET_IO_TIMEOUT_MS (1000 ms) plus slack.
set -u
PROBE=${1:?usage: fleet_connect.sh PROBE}
. "$(dirname "${BASH_SOURCE[0]}")/../common/fleet_host.sh"

fleet_redis "requirepass toppw" \
	"user fleet on >pw ~* &* +@all" \
	"user anyone on nopass ~* &* +@all" \
	"user off-user off >pw ~* &* +@all"

# try_url NAME WANT_RC GLOB URL|--silent|--blackhole [MAX_MS [MIN_MS]]
try_url() {
	local name=$1 want=$2 glob=$3 arg=$4 max=${5:-} min=${6:-0} out rc ms
	out=$("$PROBE" "$arg" 2>&1)
	rc=$?
	ms=$(sed -n 's/^elapsed_ms=//p' <<<"$out")
	if [ "$rc" != "$want" ] || [[ $out != $glob ]] ||
	   { [ -n "$max" ] && { [ -z "$ms" ] || [ "$ms" -gt "$max" ] || [ "$ms" -lt "$min" ]; }; }; then
		bad "$name: rc=$rc (want $want)" "out: $out"
	else
		ok "$name: $(head -1 <<<"$out") (${ms:-?} ms)"
	fi
	# a message never repeats the password
	if [[ $out == *toppw* || $out == *wrongpw* ]]; then
		bad "$name: the password is in the message"
	fi
}

P=$REDIS_PORT
try_url acl-user-connects 0 "ok db=0*" "redis://fleet:pw@127.0.0.1:$P"
try_url acl-user-selects-db 0 "ok db=3*" "redis://fleet:pw@127.0.0.1:$P/3"
try_url requirepass-default-user 0 "ok db=0*" "redis://:toppw@127.0.0.1:$P/0"
try_url nopass-acl-user 0 "ok db=1*" "redis://anyone@127.0.0.1:$P/1"
try_url wrong-password-refused 1 \
	"error: fleet: AUTH as user fleet refused by 127.0.0.1:$P: WRONGPASS*check the user and password*" \
	"redis://fleet:wrongpw@127.0.0.1:$P"
try_url wrong-requirepass-refused 1 \
	"error: fleet: AUTH refused by 127.0.0.1:$P: WRONGPASS*" \
	"redis://:wrongpw@127.0.0.1:$P"
try_url disabled-user-refused 1 "error: fleet: AUTH as user off-user refused*WRONGPASS*" \
	"redis://off-user:pw@127.0.0.1:$P"
try_url no-password-refused 1 \
	"error: fleet: SELECT 0 refused by 127.0.0.1:$P: NOAUTH*the server needs a password*" \
	"redis://127.0.0.1:$P"
try_url db-out-of-range-refused 1 \
	"error: fleet: SELECT 99 refused by 127.0.0.1:$P: ERR DB index is out of range*" \
	"redis://fleet:pw@127.0.0.1:$P/99"
try_url url-password-newline-refused 2 "error: fleet URL: *control*" \
	"redis://fleet:pw
@127.0.0.1:$P"

# A port nobody listens on: refused at once (well under the timeout).
redis_kill
try_url closed-port-refused 1 "error: fleet: connect 127.0.0.1:$P: Connection refused*" \
	"redis://fleet:pw@127.0.0.1:$P" 900
redis_stop

# Nobody answers: bounded by the timeouts (1000 ms; slack for a loaded
# machine), never hangs.
try_url unanswered-connect-times-out 1 "error: fleet: connect 127.0.0.1:*: timed out after 1000 ms*" \
	--blackhole 3000 900
try_url silent-server-times-out 1 "error: fleet: SELECT 0 on 127.0.0.1:*: no answer within 1000 ms*" \
	--silent 3000 900

echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
