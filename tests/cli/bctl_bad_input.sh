#!/usr/bin/env bash
# bctl_bad_input.sh BCTL - bctl against bad input, hostile segments and a few
# wrapped commands. Every case checks the exit status AND the one line bctl
# prints on stderr; no input may crash bctl or lose a configured breaker.
#
# Uses its own segments /brktest-cli-$$[-*] and removes them at the end.
set -u

BCTL=${1:?usage: bctl_bad_input.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brktest-cli
PERM_SHM=$SHM-perm
MAGIC_SHM=$SHM-magic

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, bctl_run, check, expect

# json_has FIELD VALUE: the last run's stdout has "FIELD": VALUE.
json_has() {
	grep -Eq "\"$1\": *$2[,}]?\$" "$TMP/out"
}

usage_re='^bctl: '
long_name=$(printf 'n%.0s' $(seq 64))

# --- a breaker that must survive everything below --------------------------
expect "config a good breaker" 0 '' config keep/me --failure-threshold 7 --open 30s

# --- names -------------------------------------------------------------------
expect "empty name (inspect)" 2 "^bctl: invalid breaker name '': empty\$" inspect ''
expect "empty name (config)" 2 "^bctl: invalid breaker name '': empty\$" config ''
expect "64-byte name" 2 "^bctl: invalid breaker name '$long_name': 64 bytes, at most 63\$" \
	config "$long_name"
expect "name with a space" 2 "^bctl: invalid breaker name 'a b': " config 'a b'
expect "name with '*'" 2 "^bctl: invalid breaker name 'a\\*': " inspect 'a*'
expect "name with a newline stays one line" 2 "^bctl: invalid breaker name 'a\\?b': " \
	inspect $'a\nb'
expect "name with an empty level" 2 "^bctl: invalid breaker name 'a//b': " reset 'a//b'

# --- unknown breakers ----------------------------------------------------------
expect "inspect of an unknown breaker" 1 "^bctl: $SHM: no breaker named 'nosuch'\$" \
	inspect nosuch
expect "reset of an unknown breaker" 1 "^bctl: $SHM: no breaker named 'nosuch'\$" \
	reset nosuch
expect "trip of an unknown breaker" 1 "^bctl: $SHM: no breaker named 'nosuch'\$" \
	trip nosuch --for 1s
run list --json
if grep -q nosuch "$TMP/out"; then
	bad "reset/trip of an unknown breaker created it"
else
	ok "reset/trip of an unknown breaker created nothing"
fi

# --- durations and integers --------------------------------------------------
expect "bare number as a duration" 2 "^bctl: --open: invalid duration '5' " \
	config keep/me --open 5
expect "garbage duration" 2 "^bctl: --open: invalid duration '5parsecs' " \
	config keep/me --open 5parsecs
expect "empty duration" 2 "^bctl: --max-wait: invalid duration '' " \
	config keep/me --max-wait ''
expect "negative duration" 2 "^bctl: --for: invalid duration '-5s' " \
	trip keep/me --for -5s
# one wording, with every unit the parser takes, in bctl and breakerd alike
# (cli_opt_duration; breakerd's side: tests/daemon/it_daemon_cli.c), and
# bctl(1)/breakerd(8) name the same units (issue msg12-5)
units_msg="(a number with a unit: us, ms, s, m, h or d, e.g. 250ms, 30s, 5m)"
expect "bad_duration_message_names_every_unit" 2 \
	"^bctl: --open: invalid duration '5' \\(a number with a unit: us, ms, s, m, h or d, e\\.g\\. 250ms, 30s, 5m\\)\$" \
	config keep/me --open 5
for u in $(printf '%s\n' "$units_msg" | sed 's/.*unit: \(.*\), e\.g.*/\1/; s/,\| or / /g'); do
	expect "  the unit '$u' of the message parses" 0 '' config probe/units --probe-timeout "1$u"
done
man=$(dirname "${BASH_SOURCE[0]}")/../../docs/man
for page in bctl.1.scd breakerd.8.scd; do
	if tr '\n' ' ' <"$man/$page" | grep -q '_DUR_ is a number with a unit: _us_, _ms_, _s_, _m_, _h_ or _d_'; then
		ok "  $page lists the same units"
	else
		bad "  $page lists the same units" "$(grep -A1 '_DUR_ is' "$man/$page")"
	fi
done
expect "--failure-threshold -1" 2 "^bctl: --failure-threshold: '-1' is not an integer" \
	config keep/me --failure-threshold -1
expect "--failure-threshold 0" 2 "^bctl: --failure-threshold: '0' is out of range \\(1\\.\\." \
	config keep/me --failure-threshold 0
expect "--failure-threshold 2^64" 2 "^bctl: --failure-threshold: '18446744073709551616' is out of range" \
	config keep/me --failure-threshold 18446744073709551616
expect "--failure-threshold 12abc" 2 "^bctl: --failure-threshold: '12abc' is not an integer" \
	config keep/me --failure-threshold 12abc
expect "--half-open-probes 9" 2 "^bctl: --half-open-probes: '9' is out of range \\(1\\.\\.8\\)" \
	config keep/me --half-open-probes 9
expect "--failure-rate 101" 2 "^bctl: --failure-rate: '101' is out of range" \
	config keep/me --failure-rate 101
# open above max_open names the option given, never max_open_ms (issue 22)
expect "--open above max-open names open" 2 \
	"^bctl: config keep/me: --open 20m is more than max-open \\(10m\\); raise --max-open too\$" \
	config keep/me --open 20m
expect "--open 10d on a new breaker names open" 2 \
	"^bctl: config new/open: --open 10d is more than max-open \\(10m\\); raise --max-open too\$" \
	config new/open --open 10d
expect "--max-open below --open names both" 2 \
	"^bctl: config keep/me: --max-open 30s is less than --open 1m\$" \
	config keep/me --open 1m --max-open 30s
expect "--max-open below the stored open names open" 2 \
	"^bctl: config keep/me: --max-open 10s is less than open \\(30s\\); lower --open too\$" \
	config keep/me --max-open 10s
expect "--healthy-exit 3-a" 2 "^bctl: --healthy-exit: invalid exit code list '3-a'" \
	exec keep/me --healthy-exit 3-a -- true

# --- commands and operands ----------------------------------------------------
expect "unknown command" 2 "^bctl: unknown command 'frobnicate'\$" frobnicate
expect "no command" 2 "^bctl: missing command\$"
expect "unknown option" 2 "^bctl: unknown option '--bogus'\$" config keep/me --bogus
expect "option without its value" 2 "^bctl: option '--open' needs a value\$" \
	config keep/me --open
expect "inspect with no NAME: the segment and its fleet link (issue 13)" 0 '' inspect
grep -qx 'fleet link: *off' "$TMP/out" && ok "  says 'fleet link: off' (no breakerd --fleet)" \
	|| bad "  stdout: $(cat "$TMP/out")"
expect "inspect: two NAMEs" 2 "^bctl: inspect: unexpected argument 'b'\$" inspect a b
expect "config --fleet maybe: not on or off, nothing changed" 2 \
	"^bctl: --fleet: 'maybe' is not on or off\$" config keep/me --fleet maybe
expect "config --fleet-probe 1: not on or off" 2 \
	"^bctl: --fleet-probe: '1' is not on or off\$" config keep/me --fleet-probe 1
expect "pace --fleet yes: not on or off" 2 "^bctl: --fleet: 'yes' is not on or off\$" \
	pace keep/pace --ceiling 5 --fleet yes
stored "  keep/me: fleet, fleet_probe still off" keep/me '"fleet": false' '"fleet_probe": false'
expect "missing NAME (bucket)" 2 "^bctl: bucket: missing bucket NAME\$" bucket --rate 5
expect "missing NAME (budget)" 2 "^bctl: budget: missing retry budget NAME\$" budget --ratio 0.1
expect "missing NAME (pace)" 2 "^bctl: pace: missing pace NAME\$" pace --ceiling 5
expect "missing NAME (reset)" 2 "^bctl: reset: missing breaker NAME\$" reset
expect "missing NAME (config)" 2 "^bctl: config: missing breaker NAME\$" config --open 5s
expect "missing NAME (exec)" 2 "^bctl: exec: missing breaker NAME \\(or --pace PACE\\)\$" exec -- true
expect "two NAMEs" 2 "^bctl: inspect: unexpected argument 'b'\$" inspect a b
expect "trip without --for" 2 "^bctl: trip: missing --for DUR\$" trip keep/me
expect "exec without -- CMD" 2 "^bctl: exec: missing '-- CMD \\[ARG\\.\\.\\.\\]'\$" \
	exec keep/me sh -c true
bctl_run -- --shm "bad name" list
check "bad --shm name" 2 "^bctl: invalid segment name 'bad name': expected /NAME\$"
# A bad name from the environment says where it came from.
for cmd in list "config env/b" "bucket env/k --rate 5" "segment create --capacity 4" \
	"segment remove"; do
	# shellcheck disable=SC2086 # the words of $cmd are its arguments
	bctl_run env BREAKERD_SHM=bad -- $cmd
	check "bad \$BREAKERD_SHM names its source ($cmd)" 2 \
		"^bctl: invalid segment name 'bad' \\(from \\\$BREAKERD_SHM\\): expected /NAME\$"
done
# The longest name the contract allows ('/' and 254 bytes) works; one
# byte more is refused before /dev/shm is touched (one rule: the library's).
LONG_SHM=$(printf '%s-%0*d' "$SHM" $((254 - ${#SHM})) 0)
bctl_run -- --shm "$LONG_SHM" config long/name
check "255-byte --shm name works" 0 ""
rm -f "/dev/shm$LONG_SHM"
bctl_run -- --shm "${LONG_SHM}x" list
check "256-byte --shm name" 2 "^bctl: invalid segment name '/.*\\.\\.\\.': expected /NAME\$"
bctl_run -- --shm "$SHM-absent" inspect x
check "absent segment" 1 "^bctl: $SHM-absent: no breaker named 'x' \\(the segment does not exist\\)\$"
rm -f "/dev/shm$SHM-absent"

# --- a segment this user may not open ----------------------------------------
bctl_run -- --shm "$PERM_SHM" config p
chmod 000 "/dev/shm$PERM_SHM"
as_other=()
if [ "$(id -u)" -eq 0 ]; then
	if command -v setpriv >/dev/null 2>&1; then
		as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		if ! "${as_other[@]}" "$BCTL" --help >/dev/null 2>&1; then
			as_other=(skip "uid 65534 cannot run $BCTL")
		fi
	else
		as_other=(skip "setpriv (util-linux) not available")
	fi
fi
if [ "${as_other[0]:-}" = skip ]; then
	echo "skip - permission denied: ${as_other[1]}"
else
	bctl_run "${as_other[@]}" -- --shm "$PERM_SHM" list
	check "segment without read permission (list)" 1 "^bctl: $PERM_SHM: .*permission denied"
	bctl_run "${as_other[@]}" -- --shm "$PERM_SHM" inspect p
	check "segment without read permission (inspect)" 1 "^bctl: $PERM_SHM: .*permission denied"
	bctl_run "${as_other[@]}" -- --shm "$PERM_SHM" exec p -- true
	check "segment without write permission (exec)" 1 "^bctl: $PERM_SHM: .*permission denied"
fi

# --- a segment that is not ours --------------------------------------------------
rm -f "/dev/shm$MAGIC_SHM"
for _ in $(seq 128); do printf 'not a breakerd segment, just 64 bytes of text here......\n'; done \
	>"/dev/shm$MAGIC_SHM"
chmod 600 "/dev/shm$MAGIC_SHM"
sum_before=$(cksum <"/dev/shm$MAGIC_SHM")
bctl_run -- --shm "$MAGIC_SHM" list
check "wrong magic (list)" 1 "^bctl: $MAGIC_SHM: .*(magic|not a breakerd segment)"
bctl_run -- --shm "$MAGIC_SHM" config x
check "wrong magic (config)" 1 "^bctl: $MAGIC_SHM: .*(magic|not a breakerd segment)"
bctl_run -- --shm "$MAGIC_SHM" exec x -- true
check "wrong magic (exec)" 1 "^bctl: $MAGIC_SHM: .*(magic|not a breakerd segment)"
if [ "$(cksum <"/dev/shm$MAGIC_SHM")" = "$sum_before" ]; then
	ok "the foreign segment was not written to"
else
	bad "the foreign segment was changed"
fi

# --- nothing was lost -----------------------------------------------------------
run inspect keep/me --json
if [ "$rc" -eq 0 ] && json_has failure_threshold 7 && json_has open_ms 30000 &&
	json_has state '"closed"'; then
	ok "after all the bad input keep/me still has failure_threshold 7, open 30s"
else
	bad "keep/me lost its settings (exit $rc)" "$(head -c 600 "$TMP/out")" "$(cat "$TMP/err")"
fi
if json_has heartbeat_age_ms null || json_has heartbeat_age_ms '[0-9]+'; then
	ok "inspect --json shows the daemon heartbeat"
else
	bad "inspect --json has no segment.heartbeat_age_ms"
fi

# --- exec: pass-through and status -------------------------------------------
run exec pass -- sh -c 'echo hi; echo err >&2; exit 3'
if [ "$rc" -eq 3 ] && [ "$(cat "$TMP/out")" = hi ] && [ "$(cat "$TMP/err")" = err ]; then
	ok "exec passes stdout/stderr through and exits with CMD's status (3)"
else
	bad "exec pass-through (exit $rc, want 3)" "stdout: $(cat "$TMP/out")" "stderr: $(cat "$TMP/err")"
fi

gen='printf "\000\001\377no newline"; printf "\r\n%05000d\n" 0 >&2; head -c 20000 /dev/zero | tr "\0" x'
sh -c "$gen" >"$TMP/want_out" 2>"$TMP/want_err"
run exec pass -- sh -c "$gen"
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$TMP/want_out" && cmp -s "$TMP/err" "$TMP/want_err"; then
	ok "exec output is byte-exact (NUL, 0xff, CR, 20 KB line, no final newline)"
else
	bad "exec output differs from the command's own (exit $rc)"
fi

sh -c 'ls /proc/self/fd | wc -l' >"$TMP/want_fds"
run exec pass -- sh -c 'ls /proc/self/fd | wc -l'
if [ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$TMP/want_fds"; then
	ok "exec leaks no fd into CMD"
else
	bad "CMD sees other fds via bctl: $(cat "$TMP/out") vs $(cat "$TMP/want_fds")"
fi

run exec pass -- sh -c 'kill -TERM $$'
if [ "$rc" -eq 143 ]; then ok "CMD killed by SIGTERM: exit 143"; else bad "signal death: exit $rc, want 143"; fi

run exec pass -- /nonexistent/cmd
check "exec of a missing command" 127 "^bctl: /nonexistent/cmd: No such file or directory\$"
run exec pass -- /
check "exec of a directory" 126 "^bctl: /: Permission denied\$"

start=$(date +%s%N)
run exec slow --timeout 200ms -- sh -c 'sleep 10'
took=$((($(date +%s%N) - start) / 1000000))
if [ "$rc" -eq 124 ] && [ "$took" -lt 5000 ]; then
	ok "--timeout 200ms kills CMD: exit 124 after $took ms"
else
	bad "--timeout: exit $rc after $took ms (want 124, quickly)"
fi
run inspect slow --json
if grep -A8 '"failures_by_reason"' "$TMP/out" | grep -q '"timeout": 1'; then
	ok "the timeout was counted as a timeout failure"
else
	bad "no timeout failure counted" "$(grep -A8 failures_by_reason "$TMP/out")"
fi

# --- exec: Retry-After cools the next caller ---------------------------------
# (with implicit_pace off: by default a rate-limit answer goes to the
# breaker's implicit pace instead, tests/integration/it_implicit_pace.sh)
run config ra --implicit-pace off
run config ra2 --implicit-pace off
run exec ra -- sh -c 'echo "Retry-After: 2"'
if [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = "Retry-After: 2" ]; then
	ok "exec of a command printing Retry-After: 2 exits 0, output unchanged"
else
	bad "Retry-After command: exit $rc" "$(cat "$TMP/out")"
fi
run exec ra -- touch "$TMP/ran"
check "a second exec is refused while cooling" 75 "^bctl: ra: cooling \\(Retry-After\\), wait [0-9]+ ms\$"
if [ -e "$TMP/ran" ]; then bad "the refused command ran"; else ok "the refused command did not run"; fi

run exec ra2 -- sh -c 'echo "status: 429" >&2; echo "Retry-After: 1" >&2'
run exec ra2 --wait 5s -- echo ran
if [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = ran ]; then
	ok "--wait 5s sleeps out a 1 s cooling and runs CMD"
else
	bad "--wait: exit $rc" "$(cat "$TMP/err")"
fi

# --- trip, reset, an open breaker refuses ------------------------------------
expect "trip keep/me" 0 '' trip keep/me --for 1m
run exec keep/me -- touch "$TMP/ran2"
check "exec on an open breaker" 75 "^bctl: keep/me: open, retry in [0-9]+ ms\$"
[ -e "$TMP/ran2" ] && bad "the command ran although the breaker is open"
expect "reset keep/me" 0 '' reset keep/me
run exec keep/me -- true
if [ "$rc" -eq 0 ]; then ok "exec runs again after reset"; else bad "exec after reset: exit $rc"; fi

run events --json
if [ "$rc" -eq 0 ] && grep -q '"reason":"trip"' "$TMP/out" &&
	grep -Eq '"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z"' "$TMP/out"; then
	ok "events --json lists the trip with an RFC 3339 time"
else
	bad "events --json (exit $rc)" "$(head -c 400 "$TMP/out")"
fi
run list
if [ "$rc" -eq 0 ] && grep -q '^keep/me ' "$TMP/out" && grep -q '^breakerd: ' "$TMP/out"; then
	ok "list shows the breakers and the daemon line"
else
	bad "list (exit $rc)" "$(cat "$TMP/out")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
