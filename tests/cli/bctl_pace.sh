#!/usr/bin/env bash
# bctl_pace.sh BCTL - bctl pace against
# bad input and updates. Every case checks the exit status AND the one line bctl prints
# on stderr (plus the "try 'bctl --help'" hint for usage errors); nothing
# stored before may be lost or changed by a rejected command.
#
# Uses its own segment /brkpace-bad-$$ and removes it at the end.
set -u

BCTL=${1:?usage: bctl_pace.sh PATH_TO_BCTL}
. "$(dirname "${BASH_SOURCE[0]}")/../common/check.sh" # ok, bad, scratch
scratch brkpace-bad

. "$(dirname "${BASH_SOURCE[0]}")/../common/bctl_expect.sh" # run, check, expect, stored

# --- what must survive ---------------------------------------------------------
expect "create pace p (ceiling 20, reserve 10)" 0 '' pace p --ceiling 20 --reserve 10
grep -qx 'p: pace created: ceiling 20/s, floor 0.2/s, burst 2, reserve 10%, fleet off, rate now 20/s' \
	"$TMP/out" && ok "  says what it created, defaults filled in" || bad "  stdout: $(cat "$TMP/out")"
expect "create bucket plain (rate 5, burst 3)" 0 '' bucket plain --rate 5 --burst 3
expect "create breaker br" 0 '' config br --failure-threshold 7

# --- bad input: exit 2, the option named, nothing changed ----------------------
expect "no option on an absent pace" 2 "^bctl: pace q: no such pace: --ceiling" pace q
expect "reserve 30%: the sign is taken, as bctl config always took it" 0 '' \
	pace pct --ceiling 5 --reserve 30%
expect "reserve 30%%: not a number" 2 "^bctl: --reserve: " pace p --reserve 30%%
expect "reserve %: not a number" 2 "^bctl: --reserve: " pace p --reserve %
expect "reserve 91%: out of range" 2 "^bctl: --reserve: " pace p --reserve 91%
expect "config --reserve 30%: taken the same way" 0 '' config brpct --reserve 30%
expect "config --failure-rate 50%: taken, as always" 0 '' config brpct --failure-rate 50%
expect "no name" 2 "pace" pace --ceiling 5
expect "ceiling garbage" 2 "^bctl: --ceiling: 'abc' is not a number" pace p --ceiling abc
expect "ceiling 0" 2 "^bctl: --ceiling: '0' must be greater than 0" pace p --ceiling 0
expect "ceiling negative" 2 "^bctl: --ceiling: '-3' is negative" pace p --ceiling -3
expect "ceiling nan" 2 "^bctl: --ceiling: 'nan' is not a finite number" pace p --ceiling nan
expect "ceiling too large" 2 "^bctl: --ceiling: .* out of range" pace p --ceiling 2e9
expect "ceiling trailing text" 2 "^bctl: --ceiling: '5x' is not a number" pace p --ceiling 5x
expect "floor garbage" 2 "^bctl: --floor: 'x' is not a number" pace p --floor x
expect "floor above the given ceiling" 2 "^bctl: --floor: 30 is above --ceiling 20" \
	pace p --ceiling 20 --floor 30
expect "floor above the stored ceiling" 2 "^bctl: --floor: 30 is above the pace's ceiling 20/s" \
	pace p --floor 30
expect "burst 0" 2 "^bctl: --burst: " pace p --burst 0
expect "burst negative" 2 "^bctl: --burst: '-1' is negative" pace p --burst -1
expect "burst too large" 2 "^bctl: --burst: " pace p --burst 1000001
expect "reserve 91" 2 "^bctl: --reserve: " pace p --reserve 91
expect "reserve negative" 2 "^bctl: --reserve: '-5' is negative" pace p --reserve -5
expect "reserve garbage" 2 "^bctl: --reserve: " pace p --reserve 1O
expect "unknown option" 2 "--rate" pace p --rate 5
expect "absent pace without --ceiling" 2 "^bctl: pace q: no such pace: --ceiling" pace q --floor 1
expect "a plain bucket is not a pace" 1 "'plain' is a plain bucket \\(fixed rate\\), not a pace" \
	pace plain --ceiling 5
expect "a breaker is not a pace" 1 "br" pace br --ceiling 5
expect "bctl bucket on a pace: exit 1, use bctl pace" 1 \
	"'p' is a pace \\(learned rate\\), not a plain bucket: change it with 'bctl pace p" \
	bucket p --rate 0.1
expect "bctl bucket --burst on a pace: exit 1" 1 "is a pace" bucket p --burst 5
run inspect q
[ "$rc" -ne 0 ] && ok "  q was not created" || bad "  q exists"

stored "pace p still has ceiling 20, floor 0.2, burst 2, reserve 10" p '"paced": true' \
	'"ceiling": 20(\.0)?,' '"floor": 0\.2,' '"burst": 2,' '"reserve_pct": 10,'
stored "bucket plain still a plain bucket at 5/s" plain '"rate_per_s": 5(\.0)?,'
run inspect plain --json
grep -q '"pace' "$TMP/out" && bad "  a plain bucket's JSON has pace keys" || ok "  a plain bucket's JSON has no pace keys"

stored "breaker br kept its settings" br '"failure_threshold": 7,' '"reserve_pct": 0,' \
	'"failure_rate_pct": 0,'

# --- an existing pace with no option: its settings, nothing changed ----------
expect "pace p with no option: exit 0, nothing on stderr" 0 '' pace p
# just the settings, no "nothing to change" that reads like an error (issue msg12-4)
grep -qx 'p: ceiling 20/s, floor 0.2/s, burst 2, reserve 10%, fleet off, rate now 20/s' \
	"$TMP/out" && ok "  pace_show_prints_just_the_settings" ||
	bad "  pace_show_prints_just_the_settings: stdout: $(cat "$TMP/out")"
expect "pace plain with no option: not a pace" 1 "'plain' is a plain bucket" pace plain

# --- a pace says it is one ---------------------------------------------------
run inspect p
grep -Eq '^kind: +pace \(a paced bucket\)$' "$TMP/out" && ok "inspect: kind: pace (a paced bucket)" ||
	bad "inspect p:" "$(head -3 "$TMP/out")"
run inspect plain
grep -Eq '^kind: +bucket$' "$TMP/out" && ok "inspect: a plain bucket's kind: bucket" ||
	bad "inspect plain:" "$(head -3 "$TMP/out")"
stored "inspect --json: kind bucket, paced true" p '"kind": "bucket",' '"paced": true,'
expect "list --kind pace" 0 '' list --kind pace
grep -Eq '^p +pace ' "$TMP/out" && ! grep -Eq '^(plain|br) ' "$TMP/out" &&
	ok "  lists the pace only" || bad "  list --kind pace:" "$(cat "$TMP/out")"
expect "list --kind bucket" 0 '' list --kind bucket
grep -Eq '^p +pace ' "$TMP/out" && grep -Eq '^plain +bucket ' "$TMP/out" &&
	ok "  lists paced and plain buckets" || bad "  list --kind bucket:" "$(cat "$TMP/out")"
expect "metrics --kind pace" 0 '' metrics --kind pace
grep -q 'name="p"' "$TMP/out" && ! grep -q 'name="plain"' "$TMP/out" &&
	ok "  the pace's series only" || bad "  metrics --kind pace:" "$(grep name= "$TMP/out" | head)"
expect "list --kind with an unknown word" 2 \
	"^bctl: --kind: unknown kind 'paces' \\(breaker, bucket, pace or budget\\)\$" list --kind paces
expect "fallback on a pace: NAME first, 'is a pace, not a breaker'" 1 \
	"^bctl: p: is a pace, not a breaker" fallback p on
expect "exec on a pace: the pace called a pace" 1 "^bctl: $SHM: 'p' is a pace, not a breaker\$" \
	exec p -- true

# --- updates change only what is given -----------------------------------------
expect "pace p --reserve 25" 0 '' pace p --reserve 25
stored "  ceiling, floor and burst kept" p '"ceiling": 20(\.0)?,' '"floor": 0\.2,' \
	'"burst": 2,' '"reserve_pct": 25,'
expect "pace p --burst 4 --floor 1" 0 '' pace p --burst 4 --floor 1
stored "  ceiling and reserve kept" p '"ceiling": 20(\.0)?,' '"floor": 1(\.0)?,' \
	'"burst": 4,' '"reserve_pct": 25,'
expect "pace p --ceiling 40" 0 '' pace p --ceiling 40
stored "  the rest kept" p '"ceiling": 40(\.0)?,' '"floor": 1(\.0)?,' '"burst": 4,' \
	'"reserve_pct": 25,' '"rate": 40(\.0)?,'
grep -qx 'p: pace updated: ceiling 40/s, floor 1/s, burst 4, reserve 25%, fleet off, rate now 40/s' \
	"$TMP/out" || true
# --- list and metrics show the pace ---------------------------------------------
run list
grep -Eq '^p +pace +rate 40\.000/s \(ceiling 40/s, floor 1/s\)' "$TMP/out" &&
	grep -Eq '^plain +bucket +tokens' "$TMP/out" && ok "list shows the pace and the plain bucket" ||
	bad "list:" "$(cat "$TMP/out")"
run metrics
grep -qx 'breakerd_pace_rate{name="p"} 40' "$TMP/out" &&
	grep -qx 'breakerd_pace_ceiling{name="p"} 40' "$TMP/out" &&
	grep -qx 'breakerd_pace_floor{name="p"} 1' "$TMP/out" &&
	grep -qx 'breakerd_pace_cuts_total{name="p"} 0' "$TMP/out" &&
	grep -qx 'breakerd_pace_limited_total{name="p"} 0' "$TMP/out" &&
	! grep -q 'breakerd_pace_rate{name="plain"}' "$TMP/out" &&
	ok "metrics: the pace series for p only" || bad "metrics:" "$(grep pace "$TMP/out")"
run inspect p
grep -Eq '^  last_cut: +never' "$TMP/out" && ok "inspect shows the pace block" ||
	bad "inspect:" "$(cat "$TMP/out")"

# --- bctl list --kind K: the header of the kind listed ---------------------------
for k in pace bucket budget; do
	expect "list --kind $k" 0 '' list --kind $k
	head -n 1 "$TMP/out" | grep -Eq '^NAME +KIND +DETAIL$' &&
		ok "  list --kind $k: the header names its columns (NAME KIND DETAIL)" ||
		bad "  list --kind $k header:" "$(head -n 1 "$TMP/out")"
done
expect "list --kind breaker" 0 '' list --kind breaker
head -n 1 "$TMP/out" | grep -Eq '^NAME +STATE +FAILS .* FAILURES$' &&
	ok "  list --kind breaker: the breakers' columns" ||
	bad "  list --kind breaker header:" "$(head -n 1 "$TMP/out")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
