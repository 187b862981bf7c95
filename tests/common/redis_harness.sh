# redis_harness.sh - a throwaway redis-server on loopback for the fleet
# link's tests and benchmarks (issue 13). Source it from bash:
#
#   . tests/common/redis_harness.sh
#   redis_start [EXTRA redis.conf LINES...]  # sets REDIS_PORT, REDIS_URL
#                           # (redis://127.0.0.1:PORT/0), REDIS_DIR, REDIS_PID
#   redis_cli CMD ARGS...   # redis-cli against it (no AUTH: pass -a/--user
#                           # yourself when EXTRA set requirepass / ACLs)
#   redis_kill              # SIGKILL the server (a crash mid-run)
#   redis_restart           # start it again on the same port and dir
#   redis_stop              # also run by the EXIT/INT/TERM trap redis_start sets
#
# The server is Debian's /usr/bin/redis-server (REDIS_SERVER=... to
# override) bound to 127.0.0.1 only, protected mode on, no persistence
# (save "", appendonly no), in a temp dir removed on stop, on a free port.
# redis_have: 0 if redis-server can be run (tests skip with a message
# otherwise); redis_need: exit 77 (meson's skip) with a message if it
# cannot.

REDIS_SERVER=${REDIS_SERVER:-/usr/bin/redis-server}
REDIS_CLI=${REDIS_CLI:-/usr/bin/redis-cli}
REDIS_DIR=
REDIS_PORT=
REDIS_URL=
REDIS_PID=

redis_have() {
	[ -x "$REDIS_SERVER" ] && [ -x "$REDIS_CLI" ]
}

redis_need() {
	if ! redis_have; then
		echo "SKIP: no $REDIS_SERVER (Debian: redis-server)"
		exit 77
	fi
}

redis__free_port() {
	/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

redis__launch() {
	"$REDIS_SERVER" "$REDIS_DIR/redis.conf" >"$REDIS_DIR/stdout" 2>&1 &
	REDIS_PID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		if "$REDIS_CLI" -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
			return 0
		fi
		# a server that needs AUTH answers NOAUTH: it is up too
		if "$REDIS_CLI" -h 127.0.0.1 -p "$REDIS_PORT" ping 2>&1 | grep -q NOAUTH; then
			return 0
		fi
		kill -0 "$REDIS_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "redis_harness: redis-server did not start on port $REDIS_PORT:" >&2
	cat "$REDIS_DIR/stdout" >&2
	return 1
}

redis_start() {
	local line
	REDIS_DIR=$(mktemp -d /tmp/brk-redis.XXXXXX)
	REDIS_PORT=$(redis__free_port)
	REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
	{
		echo "bind 127.0.0.1"
		echo "port $REDIS_PORT"
		echo "protected-mode yes"
		echo "save \"\""
		echo "appendonly no"
		echo "dir $REDIS_DIR"
		echo "logfile $REDIS_DIR/redis.log"
		echo "daemonize no"
		for line in "$@"; do echo "$line"; done
	} > "$REDIS_DIR/redis.conf"
	trap redis_stop EXIT INT TERM
	redis__launch
}

redis_cli() {
	"$REDIS_CLI" -h 127.0.0.1 -p "$REDIS_PORT" "$@"
}

redis_kill() {
	if [ -n "$REDIS_PID" ]; then
		kill -KILL "$REDIS_PID" 2>/dev/null
		wait "$REDIS_PID" 2>/dev/null
		REDIS_PID=
	fi
}

redis_restart() {
	redis_kill
	redis__launch
}

redis_stop() {
	redis_kill
	if [ -n "$REDIS_DIR" ]; then
		rm -rf "$REDIS_DIR"
		REDIS_DIR=
	fi
}
