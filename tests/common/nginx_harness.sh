# nginx_harness.sh - a rate-limited nginx on loopback for tests and benchmarks
# (issue 11). Source it from bash:
#
#   . tests/common/nginx_harness.sh
#   nginx_start 5 [ZONES]   # limit_req at 5 r/s, burst 5 nodelay; sets NGINX_PORT,
#                           # NGINX_URL (http://127.0.0.1:PORT/), NGINX_DIR
#   nginx_reload 20         # rewrite the rate, `nginx -s reload`, wait until
#                           # the new workers answer
#   nginx_stop              # also run by the EXIT/INT/TERM trap nginx_start sets
#
# Every location serves a static "ok" (limit_req runs in the preaccess
# phase: a `return` would answer before it) with 200 within the limit and 429 with
# "Retry-After: 1" beyond it (limit_req_status 429; add_header ... always).
# ZONES (default 1) > 1 adds locations /z0/ ... /z<ZONES-1>/, each with a
# zone of its own (fresh limiter state for each strategy of a benchmark,
# one nginx); / uses zone z. The server is nginx-light's /usr/sbin/nginx
# (NGINX=... to override) with its own prefix, pid file, logs and temp
# paths in a temp dir (removed on stop), on a free 127.0.0.1 port; works as
# root (workers run as the caller's user) and non-root.
# nginx_have: 0 if nginx can be run (tests skip with a message otherwise).

NGINX=${NGINX:-/usr/sbin/nginx}
NGINX_DIR=
NGINX_PORT=
NGINX_URL=
NGINX_ZONES=1
NGINX_BURST=${NGINX_BURST:-5}

nginx_have() {
	[ -x "$NGINX" ] || command -v "$NGINX" >/dev/null 2>&1
}

# A port nothing listens on now (the kernel's choice for a bind to 0).
nginx__free_port() {
	/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

nginx__conf() { # RATE
	local rate=$1 i user=""
	if [ "$(id -u)" = 0 ]; then
		user="user $(id -un) $(id -gn);"
	fi
	cat > "$NGINX_DIR/nginx.conf.new" <<CONF
$user
worker_processes 1;
daemon on;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 1024; }
http {
	access_log $NGINX_DIR/access.log;
	client_body_temp_path $NGINX_DIR/tmp/body;
	proxy_temp_path $NGINX_DIR/tmp/proxy;
	fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
	uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
	scgi_temp_path $NGINX_DIR/tmp/scgi;
	limit_req_status 429;
	limit_req_zone \$binary_remote_addr zone=z:1m rate=${rate}r/s;
$(for ((i = 0; i < NGINX_ZONES; i++)); do
	echo "	limit_req_zone \$binary_remote_addr zone=z$i:1m rate=${rate}r/s;"
done)
	server {
		listen 127.0.0.1:$NGINX_PORT;
		root $NGINX_DIR/www;
		add_header Retry-After 1 always;
		location = /up { }
		location / {
			limit_req zone=z burst=$NGINX_BURST nodelay;
		}
$(for ((i = 0; i < NGINX_ZONES; i++)); do
	echo "		location /z$i/ { limit_req zone=z$i burst=$NGINX_BURST nodelay; }"
done)
	}
}
CONF
	mv "$NGINX_DIR/nginx.conf.new" "$NGINX_DIR/nginx.conf"
}

nginx__run() {
	"$NGINX" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" "$@"
}

# Wait (up to 5 s) until GET URL answers at all.
nginx__wait_up() {
	local i
	for ((i = 0; i < 100; i++)); do
		curl -s -o /dev/null --max-time 1 "${NGINX_URL}up" && return 0
		sleep 0.05
	done
	return 1
}

nginx_stop() {
	local pid i
	[ -n "$NGINX_DIR" ] || return 0
	if [ -s "$NGINX_DIR/nginx.pid" ]; then
		pid=$(cat "$NGINX_DIR/nginx.pid")
		nginx__run -s stop 2>/dev/null || kill "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		kill -9 "$pid" 2>/dev/null
	fi
	rm -rf "$NGINX_DIR"
	NGINX_DIR=
}

nginx_start() { # RATE [ZONES]
	local rate=$1 try
	NGINX_ZONES=${2:-1}
	nginx_have || { echo "nginx_start: $NGINX not found" >&2; return 1; }
	NGINX_DIR=$(mktemp -d /tmp/brk-nginx.XXXXXX) || return 1
	chmod 755 "$NGINX_DIR"
	mkdir -p "$NGINX_DIR/tmp" "$NGINX_DIR/www"
	echo ok > "$NGINX_DIR/www/index.html"
	echo up > "$NGINX_DIR/www/up" # not limited: nginx__wait_up takes no token
	for ((try = 0; try < NGINX_ZONES; try++)); do
		mkdir -p "$NGINX_DIR/www/z$try"
		echo ok > "$NGINX_DIR/www/z$try/index.html"
	done
	trap 'nginx_stop' EXIT
	trap 'nginx_stop; exit 130' INT
	trap 'nginx_stop; exit 143' TERM
	for try in 1 2 3 4 5; do
		NGINX_PORT=$(nginx__free_port) || return 1
		NGINX_URL="http://127.0.0.1:$NGINX_PORT/"
		nginx__conf "$rate"
		if nginx__run 2>>"$NGINX_DIR/start.log"; then
			nginx__wait_up && return 0
			echo "nginx_start: nginx does not answer on $NGINX_URL" >&2
			cat "$NGINX_DIR/error.log" >&2
			return 1
		fi
		grep -q "in use" "$NGINX_DIR/start.log" || break
	done
	echo "nginx_start: cannot start $NGINX:" >&2
	cat "$NGINX_DIR/start.log" >&2
	return 1
}

# Rewrite the rate and reload; returns once a new worker serves (the old
# ones finish their requests and exit; the new worker has fresh zones).
nginx_reload() { # RATE
	local old new i
	old=$(pgrep -P "$(cat "$NGINX_DIR/nginx.pid")" | sort | tr '\n' ' ')
	nginx__conf "$1"
	nginx__run -s reload || return 1
	for ((i = 0; i < 100; i++)); do
		new=$(pgrep -P "$(cat "$NGINX_DIR/nginx.pid")" | sort | tr '\n' ' ')
		[ -n "$new" ] && [ "$new" != "$old" ] && return 0
		sleep 0.05
	done
	echo "nginx_reload: no new worker after 5 s" >&2
	return 1
}

# nginx_count CODE: requests the access log holds with status CODE.
nginx_count() {
	awk -v c="$1" '$9 == c { n++ } END { print n + 0 }' "$NGINX_DIR/access.log"
}

# nginx_fleet_begin NAME RATE: the start of a test whose worker processes
# loop `bctl exec ... curl` against one nginx: skips (exit 77) without
# nginx or curl; sets SHM (/brk-NAME-$$), TMP (a scratch dir) and pids (the
# workers, which stop when $TMP/stop appears); starts nginx at RATE r/s;
# the EXIT trap stops the workers and nginx and removes SHM and TMP.
nginx_fleet_begin() { # NAME RATE
	if ! nginx_have; then
		echo "SKIP: nginx is not installed (apt-get install -y nginx-light)"
		exit 77
	fi
	if ! command -v curl >/dev/null 2>&1; then
		echo "SKIP: curl is not installed (apt-get install -y curl)"
		exit 77
	fi
	SHM=/brk-$1-$$
	TMP=$(mktemp -d "/tmp/brk-$1.XXXXXX")
	pids=()
	nginx_start "$2" || { echo "FAIL - nginx did not start"; exit 1; }
	trap nginx__fleet_end EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

nginx__fleet_end() {
	touch "$TMP/stop"
	[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}" 2>/dev/null
	nginx_stop
	rm -f "/dev/shm$SHM"
	rm -rf "$TMP"
}
