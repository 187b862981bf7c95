#!/usr/bin/env bash
# bctl_exec_priority.sh BCTL - bctl exec --priority high|normal and bctl
# exec on brk_admit() (issue 25):
#   - a bad --priority is a usage error naming the option and the values;
#   - a bulkhead of 2 with reserve_pct 50: while a normal exec holds one
#     permit, a second normal exec is refused "bulkhead full" (75, CMD not
#     run) and a --priority high exec takes the reserved one;
#   - a pace of 0.5/s with 50 % reserved: after a normal take, the next
#     normal token is ~4 s away (its half of the rate) and is refused
#     within --wait 3s, a high-priority one ~2 s away and is waited for;
#   - --wait sleeps out an open breaker's time left that fits in it;
#   - SIGTERM / SIGINT while brk_admit() sleeps (a pace token, a cooling
#     wait) end bctl exec at once with 128+N, CMD not run, the breaker's
#     permit released cancelled (bctl exec keeps those signals blocked to
#     forward them, and a blocked signal does not end clock_nanosleep).
# Every check of a refusal checks the exit status AND the one stderr line.
# Uses its own segment /brkprio-cli-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_exec_priority.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkprio-cli

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, check, expect, stored

mark="$TMP/ran"
ran() { [ -e "$mark" ] && rm -f "$mark"; }
now_ms() { date +%s%3N; }
in_flight() {
	"$BCTL" --shm "$SHM" inspect "$1" --json 2>/dev/null |
		grep -Eq "\"in_flight\": $2([^0-9]|\$)"
}

# --- bad input: exit 2 naming the option and the values, CMD not run
run config b --max-concurrent 2 --reserve 50
expect "--priority urgent is a usage error" 2 \
	"^bctl: --priority: 'urgent' is not high or normal$" \
	exec b --priority urgent -- touch "$mark"
ran && bad "CMD ran after the usage error"
expect "--priority HIGH (case matters) is a usage error" 2 \
	"^bctl: --priority: 'HIGH' is not high or normal$" \
	exec b --priority HIGH -- touch "$mark"
expect "--priority without a value" 2 "needs a value" exec --priority

# --- the bulkhead's reserve: max_concurrent 2, reserve_pct 50
mkfifo "$TMP/hold" || bad "mkfifo"
"$BCTL" --shm "$SHM" exec b -- sh -c "cat '$TMP/hold' >/dev/null" &
holder=$!
until_s 5 in_flight b 1 || bad "the holder's permit never showed (in_flight 1)"
expect "a second normal exec: bulkhead full (the other permit is reserved)" 75 \
	"^bctl: b: bulkhead full$" exec b -- touch "$mark"
ran && bad "CMD ran although refused"
expect "--priority normal (the default, given): bulkhead full" 75 \
	"^bctl: b: bulkhead full$" exec b --priority normal -- touch "$mark"
ran && bad "CMD ran although refused"
expect "--priority high takes the reserved permit and runs CMD" 0 "" \
	exec b --priority high -- touch "$mark"
ran && ok "... CMD ran" || bad "CMD did not run under --priority high"
# while the high exec holds the reserved permit, normal is still refused
"$BCTL" --shm "$SHM" exec b --priority high -- sh -c "cat '$TMP/hold' >/dev/null" &
holder2=$!
until_s 5 in_flight b 2 || bad "the high holder's permit never showed (in_flight 2)"
expect "bulkhead all out: --priority high is refused too" 75 \
	"^bctl: b: bulkhead full$" exec b --priority high -- touch "$mark"
ran && bad "CMD ran although refused"
: >"$TMP/hold" # both holders read EOF and end
wait "$holder" || bad "the normal holder: exit $?"
wait "$holder2" || bad "the high holder: exit $?"
stored "... the holders released: in_flight 0, 3 refused full" b \
	'"in_flight": 0' '"rejected_full": 3'

# --- the pace's reserve: 0.5/s, burst 1, 50 % for high priority
run pace p --ceiling 0.5 --burst 1 --reserve 50
run exec --pace p -- true
expect "normal: the next token of its share is past --wait 3s" 75 \
	"^bctl: p: rate limited, next token in [0-9]+ ms \(waited 0 ms of --wait 3s\)$" \
	exec --pace p --wait 3s -- touch "$mark"
ran && bad "CMD ran without a token"
start=$(now_ms)
expect "--priority high: the reserved share's token is waited for" 0 "" \
	exec --pace p --priority high --wait 3s -- touch "$mark"
took=$(($(now_ms) - start))
ran && [ "$took" -le 3000 ] && ok "... CMD ran after $took ms" ||
	bad "high priority under the pace: CMD ran? took $took ms"

# --- --wait is brk_admit()'s max_wait_ms: an open breaker's time left
# that fits is slept out (the half-open probe then runs CMD); without
# --wait it is refused at once (tests/cli/bctl_bad_input.sh)
run config op
run trip op --for 1s
start=$(now_ms)
expect "--wait 4s sleeps out an open breaker's last second, then CMD runs" 0 "" \
	exec op --wait 4s -- touch "$mark"
took=$(($(now_ms) - start))
ran && [ "$took" -ge 500 ] && ok "... CMD ran after $took ms" ||
	bad "open breaker under --wait 4s: CMD ran? after $took ms (want >= 500)"
run trip op --for 1m
expect "an open period longer than --wait: refused at once with the wait" 75 \
	"^bctl: op: open, retry in [0-9]+ ms$" exec op --wait 2s -- touch "$mark"
ran && bad "CMD ran although the breaker is open"

# --- signals while brk_admit() sleeps
# sig_during NAME SIG WANT ARGS...: start bctl exec ARGS in the background,
# send SIG once it is waiting, want exit WANT within 2 s and CMD not run.
sig_during() {
	local desc=$1 sig=$2 want=$3 pid start took st
	shift 3
	start=$(now_ms)
	"$BCTL" --shm "$SHM" "$@" -- touch "$mark" 2>"$TMP/sigerr" &
	pid=$!
	sleep 0.5
	kill -s "$sig" "$pid"
	start=$(now_ms)
	until_s 3 eval "! kill -0 $pid 2>/dev/null"
	took=$(($(now_ms) - start))
	kill -s KILL "$pid" 2>/dev/null # still sleeping: the failure below
	wait "$pid"
	st=$?
	if [ "$st" -eq "$want" ] && [ "$took" -le 2000 ] && ! [ -e "$mark" ]; then
		ok "$desc: exit $st after $took ms, CMD not run"
	else
		bad "$desc: exit $st (want $want) after $took ms" \
			"CMD ran: $([ -e "$mark" ] && echo yes || echo no)" \
			"stderr: $(head -c 300 "$TMP/sigerr")"
	fi
	rm -f "$mark"
}
run bucket slow --rate 0.01 --burst 1 # a token every 100 s
run take slow
run config held
sig_during "SIGTERM during a pace wait (--wait 5m)" TERM 143 \
	exec held --pace slow --wait 5m
stored "... the breaker permit held meanwhile is released cancelled" held \
	'"cancelled": 1' '"in_flight": 0'
# A background job of a script starts with SIGINT ignored: bctl exec
# still ends on it, as it always did (it blocks and takes it itself).
sig_during "SIGINT during a pace wait, high priority" INT 130 \
	exec held --pace slow --priority high --wait 5m
run config cool --implicit-pace off
run exec cool -- echo "Retry-After: 60" # the breaker cools for 60 s
sig_during "SIGTERM during a cooling wait (--wait 5m)" TERM 143 \
	exec cool --wait 5m
sig_during "SIGHUP during a cooling wait" HUP 129 exec cool --wait 5m

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
