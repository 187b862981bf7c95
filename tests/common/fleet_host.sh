# tests/common/fleet_host.sh - the fleet link tests' hosts (sourced by
# tests/daemon/fleet_*.sh): each host is a segment of its own and a
# breakerd on it, most with --fleet to one throwaway redis-server.
# Sources check.sh (ok, bad, until_s) and redis_harness.sh (redis_start,
# redis_cli, redis_kill, redis_restart, redis_stop, redis_need).
#
# Set before sourcing: BREAKERD; PEEK (tests/daemon/fleet_peek) for st,
# st_is and st_ge; WORKER (tests/daemon/fleet_probe_worker) for
# worker_start. Per host H: SHM[H] its segment, DPID[H] its breakerd,
# WPID[H] its worker, $TMP/breakerd.H breakerd's log (appended to across
# restarts), $TMP/probes.H the worker's output.
#
#   fleet_init NAME      $TMP = a new /tmp/brk-NAME.XXXXXX; segments are
#                        /brk-NAME-H-$$; the cleanup runs at EXIT INT TERM
#   fleet_redis [LINE..] redis_need (exit 77: skip), then redis_start with
#                        these redis.conf lines, or exit 1; keeps the cleanup
#                        trap (redis_start sets its own)
#   host_shm H           SHM[H] (named, not created)
#   host_start H [ARG..] breakerd --shm SHM[H] ARG... in the background,
#                        waits for its segment. No ARG: --fleet $REDIS_URL
#                        (none if $BREAKERD_FLEET_URL is set). --host-id H
#                        is added unless ARG has --host-id, or neither ARG
#                        (--fleet, --fleet-url-file) nor $BREAKERD_FLEET_URL
#                        gives a link.
#   host_connected H [S] wait S (10) seconds for H's link state connected:
#                        ok, or bad with the log's tail; returns which
#   hosts_up H...        host_start each H (no ARG), then host_connected each
#   bctl_all ARG...      bctl ARG... on every host's segment, output dropped
#   host_probe_connected H [DESC]  the same for the fleet probe thread's
#                        log line (no PEEK needed)
#   host_stop H          SIGTERM, wait; returns breakerd's exit status
#   host_alive H         breakerd H still runs
#   worker_start H ARG.. $WORKER SHM[H] ARG... in the background, output in
#                        $TMP/probes.H; waits for its "ready" line
#   fleet_track PID      one more process for the cleanup to kill
#   fleet_cleanup        kill workers, breakerd and tracked processes (a
#                        SIGSTOPped redis-server is continued first), remove
#                        the segments, stop redis, remove $TMP (KEEP=1: keep)
# State reads:
#   st H FIELD, st_is H FIELD VALUE, st_ge H FIELD N   the link's status
#                        (fleet_peek status: state, published, applied, ...)
#   state H NAME, state_is H NAME STATE, all_state NAME STATE   bctl list
#   mode H NAME, mode_is H NAME MODE   bctl inspect's mode (normal, forced_*)
#   logged H REGEX       breakerd H's log has a line matching REGEX
#   probes H, total_probes, total_at_least N   workers' admitted probes
#   key_gone NAME        no catch-up key breakerd:state:NAME in Redis
#   fleet_pub MESSAGE    PUBLISH it on the default channel (breakerd)
#   now_ms               wall clock in ms (the messages' sent_ms)
# shellcheck shell=bash

FLEET_HERE=$(dirname "${BASH_SOURCE[0]}")
. "$FLEET_HERE/check.sh"
. "$FLEET_HERE/redis_harness.sh"

declare -A SHM=() DPID=() WPID=()
FLEET_NAME=
FLEET_PIDS=()
TMP=

fleet_init() {
	FLEET_NAME=$1
	TMP=$(mktemp -d "/tmp/brk-$FLEET_NAME.XXXXXX")
	trap fleet_cleanup EXIT INT TERM
}

fleet_redis() {
	redis_need
	redis_start "$@" || exit 1
	trap fleet_cleanup EXIT INT TERM
}

host_shm() {
	SHM[$1]=${SHM[$1]:-/brk-$FLEET_NAME-$1-$$}
}

host_start() {
	local h=$1 id=()
	shift
	host_shm "$h"
	if [ $# -eq 0 ] && [ -z "${BREAKERD_FLEET_URL:-}" ]; then
		set -- --fleet "$REDIS_URL"
	fi
	if [[ " $* " != *" --host-id "* ]] &&
	   { [[ " $* " == *" --fleet "* || " $* " == *" --fleet-url-file "* ]] ||
	     [ -n "${BREAKERD_FLEET_URL:-}" ]; }; then
		id=(--host-id "$h")
	fi
	"$BREAKERD" --shm "${SHM[$h]}" "${id[@]}" "$@" >>"$TMP/breakerd.$h" 2>&1 &
	DPID[$h]=$!
	until_s 10 test -e "/dev/shm${SHM[$h]}"
}

host_connected() {
	if until_s "${2:-10}" st_is "$1" state connected; then
		ok "host $1: link connected"
	else
		bad "host $1 connected" "state $(st "$1" state)" "$(tail -5 "$TMP/breakerd.$1")"
		return 1
	fi
}

hosts_up() {
	local h
	for h in "$@"; do host_start "$h"; done
	for h in "$@"; do host_connected "$h"; done
}

bctl_all() {
	local h
	for h in "${!SHM[@]}"; do "$BCTL" --shm "${SHM[$h]}" "$@" >/dev/null; done
}

host_probe_connected() {
	if until_s 10 logged "$1" 'msg="fleet probe" fleet=connected'; then
		ok "host $1: ${2:-the fleet probe thread connected}"
	else
		bad "host $1: fleet probe connected" "$(tail -5 "$TMP/breakerd.$1")"
		return 1
	fi
}

host_stop() {
	local rc
	kill -TERM "${DPID[$1]}" 2>/dev/null
	wait "${DPID[$1]}" 2>/dev/null
	rc=$?
	DPID[$1]=
	return $rc
}

host_alive() {
	[ -n "${DPID[$1]:-}" ] && kill -0 "${DPID[$1]}" 2>/dev/null
}

worker_start() {
	local h=$1
	shift
	"$WORKER" "${SHM[$h]}" "$@" >"$TMP/probes.$h" 2>&1 &
	WPID[$h]=$!
	until_s 10 grep -q ready "$TMP/probes.$h" || bad "worker $h ready" "$(cat "$TMP/probes.$h")"
}

fleet_track() {
	FLEET_PIDS+=("$1")
}

fleet_cleanup() {
	local h p pids=()
	[ -n "${REDIS_PID:-}" ] && kill -CONT "$REDIS_PID" 2>/dev/null
	for p in "${WPID[@]}" "${DPID[@]}" "${FLEET_PIDS[@]}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null && pids+=("$p")
	done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	for h in "${!SHM[@]}"; do rm -f "/dev/shm${SHM[$h]}"; done
	redis_stop
	if [ -n "$TMP" ]; then
		if [ -n "${KEEP:-}" ]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
	fi
}

st() { "$PEEK" "${SHM[$1]}" status | sed -n "s/^$2=//p"; }
st_is() { [ "$(st "$1" "$2")" = "$3" ]; }
st_ge() { [ "$(st "$1" "$2")" -ge "$3" ] 2>/dev/null; }

state() { "$BCTL" --shm "${SHM[$1]}" list | awk -v n="$2" '$1 == n { print $2 }'; }
state_is() { [ "$(state "$1" "$2")" = "$3" ]; }
all_state() {
	local h
	for h in "${!SHM[@]}"; do state_is "$h" "$1" "$2" || return 1; done
}
mode() { "$BCTL" --shm "${SHM[$1]}" inspect "$2" | awk '$1 == "mode:" { print $2; exit }'; }
mode_is() { [ "$(mode "$1" "$2")" = "$3" ]; }

logged() { grep -q -- "$2" "$TMP/breakerd.$1" 2>/dev/null; }

probes() { local n; n=$(grep -c '^probe' "$TMP/probes.$1" 2>/dev/null); echo "${n:-0}"; }
total_probes() {
	local h n=0
	for h in "${!SHM[@]}"; do n=$((n + $(probes "$h"))); done
	echo $n
}
total_at_least() { [ "$(total_probes)" -ge "$1" ]; }

key_gone() { [ "$(redis_cli EXISTS "breakerd:state:$1")" = 0 ]; }
fleet_pub() { redis_cli PUBLISH breakerd "$1" >/dev/null; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
