# gunicorn_harness.sh - a fixed-capacity gunicorn upstream on loopback for
# the adaptive-concurrency benchmark and test (issue 25). Source it from bash:
#
#   . tests/common/gunicorn_harness.sh
#   gunicorn_start [WORKERS [SLEEP_MS]]
#                         # Debian's gunicorn (/usr/bin/python3 -m gunicorn)
#                         # with WORKERS (4) sync workers serving
#                         # bench/adaptive/upstream.py, whose handler sleeps
#                         # SLEEP_MS (20): WORKERS / SLEEP_MS capacity
#                         # (200 r/s), little CPU. Sets GUNICORN_PID (the
#                         # master), GUNICORN_PORT, GUNICORN_URL
#                         # (http://127.0.0.1:PORT/), GUNICORN_DIR
#   gunicorn_workers N    # TTIN/TTOU the master until N workers run (the
#                         # capacity changes without a restart)
#   gunicorn_nworkers     # how many workers run now
#   gunicorn_stop         # also run by the EXIT/INT/TERM trap gunicorn_start
#                         # sets
#
# GET URL/up answers at once (readiness); every other path sleeps. The
# server runs in the foreground of a background job (no --daemon: its pid
# is $!), logs to $GUNICORN_DIR/error.log, on a free 127.0.0.1 port.
# gunicorn_have: 0 if gunicorn can be run (tests skip with a message
# otherwise).

GUNICORN_PY=${GUNICORN_PY:-/usr/bin/python3}
GUNICORN_APP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../bench/adaptive" && pwd)
GUNICORN_DIR=
GUNICORN_PID=
GUNICORN_PORT=
GUNICORN_URL=

gunicorn_have() {
	"$GUNICORN_PY" -c 'import gunicorn' 2>/dev/null
}

gunicorn__free_port() {
	"$GUNICORN_PY" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# The master's children (its workers; one being stopped counts until it
# has exited).
gunicorn_nworkers() {
	pgrep -P "$GUNICORN_PID" | wc -l
}

# Wait (up to 10 s) until GET URL/up answers and N workers run.
gunicorn__wait() { # N
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$GUNICORN_PID" 2>/dev/null || return 1
		if [ "$(gunicorn_nworkers)" = "$1" ] &&
			curl -s -o /dev/null --max-time 1 "${GUNICORN_URL}up"; then
			return 0
		fi
		sleep 0.05
	done
	return 1
}

gunicorn_workers() { # N
	local want=$1 have i
	have=$(gunicorn_nworkers)
	for ((i = have; i < want; i++)); do
		kill -TTIN "$GUNICORN_PID"
		sleep 0.05
	done
	for ((i = have; i > want; i--)); do
		kill -TTOU "$GUNICORN_PID"
		sleep 0.05
	done
	gunicorn__wait "$want" || {
		echo "gunicorn_workers: not $want workers after 10 s" \
			"($(gunicorn_nworkers))" >&2
		return 1
	}
}

gunicorn_stop() {
	local i
	[ -n "$GUNICORN_DIR" ] || return 0
	if [ -n "$GUNICORN_PID" ] && kill -0 "$GUNICORN_PID" 2>/dev/null; then
		kill -TERM "$GUNICORN_PID" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$GUNICORN_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -9 "$GUNICORN_PID" 2>/dev/null
	fi
	# a worker whose master was killed -9 would serve on: none may outlive it
	[ -n "$GUNICORN_PID" ] && pkill -9 -P "$GUNICORN_PID" 2>/dev/null
	wait "$GUNICORN_PID" 2>/dev/null
	rm -rf "$GUNICORN_DIR"
	GUNICORN_DIR=
	GUNICORN_PID=
}

gunicorn_start() { # [WORKERS [SLEEP_MS]]
	local workers=${1:-4} sleep_ms=${2:-20} _try
	gunicorn_have || { echo "gunicorn_start: $GUNICORN_PY cannot import gunicorn" >&2; return 1; }
	GUNICORN_DIR=$(mktemp -d /tmp/brk-gunicorn.XXXXXX) || return 1
	trap 'gunicorn_stop' EXIT
	trap 'gunicorn_stop; exit 130' INT
	trap 'gunicorn_stop; exit 143' TERM
	for _try in 1 2 3 4 5; do
		GUNICORN_PORT=$(gunicorn__free_port) || return 1
		GUNICORN_URL="http://127.0.0.1:$GUNICORN_PORT/"
		UPSTREAM_SLEEP_MS=$sleep_ms "$GUNICORN_PY" -m gunicorn \
			--workers "$workers" --worker-class sync \
			--bind "127.0.0.1:$GUNICORN_PORT" \
			--chdir "$GUNICORN_APP_DIR" --pid "$GUNICORN_DIR/gunicorn.pid" \
			--error-logfile "$GUNICORN_DIR/error.log" \
			upstream:app </dev/null >>"$GUNICORN_DIR/start.log" 2>&1 &
		GUNICORN_PID=$!
		gunicorn__wait "$workers" && return 0
		if kill -0 "$GUNICORN_PID" 2>/dev/null; then
			echo "gunicorn_start: gunicorn does not answer on $GUNICORN_URL" \
				"with $workers workers" >&2
			break
		fi
		wait "$GUNICORN_PID" 2>/dev/null
		grep -q "in use" "$GUNICORN_DIR/error.log" 2>/dev/null || break
	done
	echo "gunicorn_start: cannot start gunicorn:" >&2
	cat "$GUNICORN_DIR/start.log" "$GUNICORN_DIR/error.log" >&2 2>/dev/null
	gunicorn_stop
	return 1
}
